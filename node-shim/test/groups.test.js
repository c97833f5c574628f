// A call's group (call/groups.js) is the worker's (breaker/core/reading/groups.py) for every call
// the shim reads, and a promise by group lets a call through only as the worker said
// (call/ahead.js; why such a call passes is pinned by tests/test_group_promises.py).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { AheadVerdicts } from '../call/ahead.js';
import { CallGroups, CallsSince } from '../call/groups.js';
import { generator, workerSettings } from './processes.js';

const PACKAGE_ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const PYTHON = process.env.RTB_PYTHON || 'python3';
const SETTINGS = workerSettings({ ignoreArgs: { read: ['offset'] } });
const groups = new CallGroups(SETTINGS.grouping);

// [tool, arguments, whether the shim reads them (else the call is loose to it)]
const CASES = [
  ['read', { path: '/w/src/a.py' }, true],
  ['read', { path: './src//a.py/.', description: 'a decoy', offset: 3 }, true],
  ['read', { file_path: 'a.py', cwd: '/w', limit: 40 }, true],
  ['read', { file_path: '..', cwd: '/w' }, true],
  ['read', { source_path: '~' }, true],
  ['read', { notebook_path: '/' }, true],
  ['read', { path: '' }, true],
  ['read', { path: 'src/*.py', workdir: '~w/x/' }, true],
  ['edit', { path: '/w/a.py', old_string: 'caf\u00e9 \u{1F600}', new_string: '', replace_all: false }, true],
  ['edit', { path: '/w/a.py', old_string: 'lone \ud800 surrogate', new_string: null }, true],
  ['write', { file_path: '/w/a.py', content: 'x'.repeat(4096) }, true],
  ['write', { file_path: '/w/a.py', content: 'x'.repeat(4097) }, false],
  ['open_page', { url: 'https://x.org/a', href: 'HTTPS://X.ORG/a', uri: 7 }, true],
  ['mcp__db__query', { sql: 'select 1', params: [1, 2] }, false],
  ['mcp__db__query', { sql: 'select 1', options: { a: 1 } }, false],
  ['mcp__db__query', { sql: 'select 1', ratio: 0.5, big: 1e21, negative: -0 }, true],
  ['Glob', { pattern: '**/*.ts', 'n\u00e4me': 'x' }, false],
  ['Glob', { pattern: '**/*.ts', z: 1, a: 2, A: 3, _: 4, 'a b': 5 }, true],
  ['Read', { path: '/w/a.py' }, true],
  ['bash', { command: 'cat a.py' }, true],
  ['BASH', { command: 'cat a.py' }, true],
  ['web_fetch', { url: 'https://x.org' }, true],
  ['file_search', { query: 'x' }, true],
  ['web_fetch', { url: 'https://docs.x.org/guide/page-1.html#usage', prompt: 'sum' }, true],
  ['WebFetch', { url: 'http://x.org:80//page-1.html/?a=1' }, true],
  ['browse_page', { url: 'x.org:8080/a/b?q=/c' }, true],
  ['web_fetch', { url: 'https://x.org/%70age-1.html' }, true],
  ['web_fetch', { url: 'https://x.org/a/../page-1.html' }, true],
  ['web_fetch', { url: 'https://x.org/a/.' }, true],
  ['web_fetch', { url: 'https://u@x.org/a' }, true],
  ['web_fetch', { url: 'https://x.org/caf\u00e9' }, true],
  ['web_fetch', { url: 'https://x.org/a b' }, true],
  ['web_fetch', { url: 'https://x.org/a\nb' }, true],
  ['web_fetch', { url: 'https://x.org/a', href: 'https://x.org/b' }, true],
  ['web_fetch', { uri: 7 }, true],
  ['web_fetch', { urls: ['https://x.org/a'] }, false],
  ['web_search', { query: 'q', description: 'a decoy' }, true],
  ['t\u00f6ol', { path: 'a' }, true],
];

test('a call\'s group is the worker\'s, or loose where the shim cannot read its arguments as the worker gets them', () => {
  const script = `
import json, sys
from breaker.core.reading.groups import call_group, loose
for tool, arguments, ignored, urls in json.load(sys.stdin):
    print(json.dumps([call_group(tool, arguments, ignored, urls), loose(tool)]))
`;
  // The worker gets each text as UTF-8 (msgpack), where a lone surrogate is U+FFFD already.
  const wire = CASES.map(([tool, args]) => [tool, JSON.parse(JSON.stringify(args).replace(/\\ud800/g, '\\ufffd')), SETTINGS.grouping.ignored, SETTINGS.grouping.urls]);
  const run = spawnSync(PYTHON, ['-c', script], { input: JSON.stringify(wire), cwd: PACKAGE_ROOT, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const python = run.stdout.trim().split('\n').map((line) => JSON.parse(line));
  assert.equal(python.length, CASES.length);
  for (const [index, [tool, args, read]] of CASES.entries()) {
    const [group, loose] = python[index];
    const expected = read || tool !== 't\u00f6ol' ? (read ? group : loose) : 0;
    assert.equal(groups.of(tool, args), tool === 't\u00f6ol' ? 0 : expected, `case ${index}: ${tool} ${JSON.stringify(args).slice(0, 60)}`);
    if (group !== 0) assert.equal(groups.loose(tool), loose, `case ${index}: the loose group`);
  }
});

test('drawn calls: every group the shim computes is the worker\'s', () => {
  const random = generator(39);
  const names = ['path', 'file_path', 'cwd', 'workdir', 'x_path', 'url', 'urls', 'href', 'text', 'description', 'offset', 'n'];
  const texts = ['a.py', './a.py/', 'a/..', '..', '~', '~/x', '', '/', 'x//y/.', 'caf\u00e9', '\u{1F600}/b', 'a\u0001b', '\\x'];
  texts.push('https://x.org/a', 'HTTP://X.org:80/a/?q#f', 'x.org/b//', 'https://x.org/%61', 'https://x.org/./a', 'ftp://x.org/a');
  const values = [...texts, 0, -1.5, 1e300, true, false, null];
  const calls = Array.from({ length: 2000 }, () => {
    const args = {};
    for (let count = random.int(5); count > 0; count--) args[random.pick(names)] = random.pick(values);
    return [random.pick(['read', 'Edit', 'mcp__x__y', 'bash', 'fetch_page', 'WebSearch']), args];
  });
  const script = `
import json, sys
from breaker.core.reading.groups import call_group
print(json.dumps([call_group(tool, arguments, {"*": ["description"]}, True) for tool, arguments in json.load(sys.stdin)]))
`;
  const run = spawnSync(PYTHON, ['-c', script], { input: JSON.stringify(calls), cwd: PACKAGE_ROOT, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const python = JSON.parse(run.stdout);
  const shim = new CallGroups({ ...SETTINGS.grouping, ignored: { '*': ['description'] } });
  let grouped = 0;
  for (const [index, [tool, args]] of calls.entries()) {
    assert.equal(shim.of(tool, args), python[index], `${tool} ${JSON.stringify(args)}`);
    if (python[index] !== 0 && python[index] !== shim.loose(tool)) grouped++;
  }
  assert.ok(grouped > 500, `${grouped} calls with a group of their own`);
});

/** An agent under a promise by group from worker 7: `window`, the groups of the window's calls
 * as [group, how many of its calls], oldest first, and `room`. */
function promised(window, room, passes = 0) {
  const ahead = new AheadVerdicts(100, SETTINGS.operations, SETTINGS.breaks, SETTINGS.grouping);
  const agent = AheadVerdicts.agent(1);
  const groups = window.map(([group]) => group);
  const listed = window.flatMap(([, count], index) => Array(count).fill(index));
  ahead.granted(agent, 0, passes, 7, { passes, digests: [], groups, window: listed, room });
  return { ahead, agent };
}

const read = (path) => ({ name: 'read', arguments: { path } });

/** A call of `agent` through pre-execute and guard: whether it went through on a pass. */
function passed(ahead, agent, exec) {
  if (!ahead.reserve(exec, agent, 7)) return false;
  assert.ok(ahead.usePass(exec));
  return true;
}

test('a call of a group the window does not hold passes, fewer than the room of its group since', () => {
  const { ahead, agent } = promised([[groups.of('read', { path: '/w/a.py' }), 2]], 2);
  assert.ok(!passed(ahead, agent, read('/w/src/../a.py')), 'two of its group in the window, a room of 2: it waits for the worker');
  assert.ok(passed(ahead, agent, read('/w/b.py')));
  assert.ok(passed(ahead, agent, read('b.py/')), 'one of its group since: fewer than the room of 2');
  assert.ok(!passed(ahead, agent, read('./b.py')), 'two of its group since: it waits');
  assert.ok(passed(ahead, agent, read('/w/c.py')), 'another group has its own room');
  assert.ok(!passed(ahead, agent, { name: 'bash', arguments: { command: 'cat c.py' } }), 'a shell call has no group');
});

test('a loose call never passes by its group, and one sent counts as every group of its tool', () => {
  const { ahead, agent } = promised([], 2);
  assert.ok(!passed(ahead, agent, read('..')));
  const exec = read('/w/a.py');
  ahead.committing(agent, 'guard', false, { name: 'read', arguments: { path: 'x/..' } }); // asked the worker
  assert.ok(passed(ahead, agent, exec), 'one loose call since: fewer than 2');
  assert.ok(!passed(ahead, agent, read('/w/a.py')), 'the loose call and a.py since: two of a.py\'s');
  assert.ok(passed(ahead, agent, read('/w/b.py')), 'the loose call alone of b.py\'s');
  assert.ok(passed(ahead, agent, { name: 'edit', arguments: { path: '/w/b.py' } }), 'another tool\'s calls are not counted');
});

test('a group the window holds passes while its calls there and since are fewer than the room', () => {
  const { ahead, agent } = promised([[groups.of('read', { path: '/w/a.py' }), 2], [groups.of('read', { path: '/w/b.py' }), 1]], 4);
  assert.ok(passed(ahead, agent, read('/w/a.py')), 'two in the window: fewer than a room of 4');
  assert.ok(passed(ahead, agent, read('./a.py')), 'two in the window and one since: three');
  assert.ok(!passed(ahead, agent, read('a.py')), 'two in the window and two since: it waits');
  for (const spelling of ['/w/b.py', 'b.py', './b.py']) assert.ok(passed(ahead, agent, read(spelling)), 'another group counts its own');
  assert.ok(!passed(ahead, agent, read('/w/b.py')), 'one in the window and three since: it waits');
});

test('the loose calls of a tool in the window count as calls of each of its groups', () => {
  const { ahead, agent } = promised([[groups.loose('read'), 4]], 4);
  assert.ok(!passed(ahead, agent, read('/w/new.py')), 'four loose reads, a room of 4: no read passes by group');
  assert.ok(passed(ahead, agent, { name: 'edit', arguments: { path: '/w/new.py' } }));
  const some = promised([[groups.loose('read'), 2], [groups.of('read', { path: '/w/a.py' }), 1]], 4);
  assert.ok(passed(some.ahead, some.agent, read('/w/a.py')), 'two loose and one of its own: three');
  assert.ok(!passed(some.ahead, some.agent, read('/w/a.py')), 'and one since: four');
  assert.ok(passed(some.ahead, some.agent, read('/w/b.py')), 'two loose and none of its own');
  assert.ok(passed(some.ahead, some.agent, read('/w/b.py')), 'two loose and one since: three');
  assert.ok(!passed(some.ahead, some.agent, read('/w/b.py')), 'two loose and two since: four');
});

const fetch = (url) => ({ name: 'web_fetch', arguments: { url, prompt: 'sum' } });

test('a fetch passes by the last name of its page, shell lines in the window and since counted against it', () => {
  const { ahead, agent } = promised([[0, 2], [groups.of('read', { path: '/w/a.py' }), 1]], 4);
  assert.ok(passed(ahead, agent, fetch('https://x.org/docs/a')), 'two shell lines in the window: fewer than a room of 4');
  ahead.committing(agent, 'guard', false, { name: 'bash', arguments: { command: 'curl -s https://x.org/docs/b' } }); // asked the worker
  assert.ok(passed(ahead, agent, { name: 'WebFetch', arguments: { url: 'x.org/docs/b/' } }), 'two in the window and one since: three');
  ahead.committing(agent, 'guard', false, { name: 'bash', arguments: { command: 'echo' } });
  assert.ok(!passed(ahead, agent, fetch('https://x.org/docs/c')), 'two in the window and two since: it waits');
  assert.ok(!passed(ahead, agent, fetch('https://x.org/docs/%63')), 'a URL not written plainly is loose');
  assert.ok(passed(ahead, agent, read('/w/a.py')), 'a read does not count shell lines');
});

test('while a cap counts a key a group does not follow, a fetch has no group', () => {
  const off = new CallGroups({ ...SETTINGS.grouping, urls: false });
  assert.equal(off.of('web_fetch', { url: 'https://x.org/a' }), 0);
  assert.equal(off.of('read', { path: '/w/a.py' }), groups.of('read', { path: '/w/a.py' }));
  const capped = workerSettings({ limits: { site: 3 } });
  assert.equal(capped.grouping.urls, false, 'the worker says so');
  assert.equal(new CallGroups(capped.grouping).of('web_fetch', { url: 'https://x.org/a' }), 0);
});

test('an answer lets go of every call before its request, and a call after is counted', () => {
  const since = new CallsSince();
  const [a, b] = [read('/w/a.py'), read('/w/b.py')];
  const loose = [groups.loose('read')];
  since.add(1, a);
  since.add(2, a);
  assert.equal(since.alike(groups, 0, 2, 16, groups.ofCall(a), loose), 2);
  assert.equal(since.alike(groups, 0, 2, 1, groups.ofCall(a), loose), 1, 'a window of one holds the latest alone');
  since.answered(2);
  since.add(3, b);
  assert.equal(since.alike(groups, 2, 3, 16, groups.ofCall(a), loose), 0, 'both calls of a.py let go');
  assert.equal(since.alike(groups, 2, 3, 16, groups.ofCall(b), loose), 1, 'the call after the request counted');
  assert.equal(since.alike(groups, 0, 3, 16, groups.ofCall(b), loose), Infinity, 'the calls kept are not those since that mark');
});

test('a promise whose window is missing, holds no numbers or an index past its groups lets nothing through by group', () => {
  const group = groups.of('read', { path: '/w/a.py' });
  for (const window of [undefined, {}, ['0'], [null], [1.5], [1], [-2]]) {
    const ahead = new AheadVerdicts(100, SETTINGS.operations, SETTINGS.breaks, SETTINGS.grouping);
    const agent = AheadVerdicts.agent(1);
    ahead.granted(agent, 0, 0, 7, { passes: 0, digests: [], groups: [group], window, room: 4 });
    assert.ok(!passed(ahead, agent, read('/w/b.py')), JSON.stringify(window));
  }
  const unsized = new AheadVerdicts(100, SETTINGS.operations, SETTINGS.breaks, { ...SETTINGS.grouping, window: undefined });
  const agent = AheadVerdicts.agent(1);
  unsized.granted(agent, 0, 0, 7, { passes: 0, digests: [], groups: [group], window: [0, -1], room: 4 });
  assert.ok(!passed(unsized, agent, read('/w/b.py')), 'a worker that does not tell the window\'s size');
});

test('a result that breaks the condition ends the promise by group too', () => {
  const { ahead, agent } = promised([], 4);
  assert.ok(passed(ahead, agent, read('/w/a.py')));
  ahead.resulted(agent, 'read', 'Error: no such file', { isError: true });
  assert.ok(!passed(ahead, agent, read('/w/b.py')));
});

test('calls committed before an answer\'s request are not counted against it; a newer answer counts from its own', () => {
  const { ahead, agent } = promised([], 1);
  assert.ok(passed(ahead, agent, read('/w/a.py')));
  assert.ok(!passed(ahead, agent, read('/w/a.py')), 'one of its group since, a room of 1');
  ahead.granted(agent, agent.committed, 0, 7, { passes: 0, digests: [], groups: [], window: [], room: 1 }); // a worker that forgot it
  assert.equal(agent.since.calls.length, 0, 'the calls before the request are let go');
  assert.ok(passed(ahead, agent, read('/w/a.py')));
});

test('a call counts only the calls still in its window: those pushed out since the answer count no more', () => {
  assert.equal(SETTINGS.grouping.window, 16, 'the default window');
  const a = groups.of('read', { path: '/w/a.py' });
  const full = promised([[groups.of('read', { path: '/w/x.py' }), 14], [a, 2]], 2);
  assert.ok(!passed(full.ahead, full.agent, read('/w/a.py')), 'two of a.py in a window of 16, a room of 2');
  assert.ok(passed(full.ahead, full.agent, read('/w/b.py')), 'the 1st x.py pushed out');
  assert.ok(!passed(full.ahead, full.agent, read('/w/a.py')), 'both a.py calls still in');
  for (let index = 0; index < 13; index++) assert.ok(passed(full.ahead, full.agent, read(`/w/n${index}.py`)));
  assert.ok(!passed(full.ahead, full.agent, read('/w/a.py')), '14 calls since: the window\'s last two are a.py\'s');
  assert.ok(passed(full.ahead, full.agent, read('/w/n13.py')));
  assert.ok(passed(full.ahead, full.agent, read('/w/a.py')), '15 calls since: one a.py call pushed out');
  const { ahead, agent } = promised([], 1);
  assert.ok(passed(ahead, agent, read('/w/a.py')));
  for (let index = 0; index < 15; index++) assert.ok(passed(ahead, agent, read(`/w/${index}.py`)), `call ${index}`);
  assert.ok(!passed(ahead, agent, read('/w/a.py')), 'the a.py call since is the oldest in the window: a room of 1');
  assert.ok(passed(ahead, agent, read('/w/15.py')));
  assert.ok(passed(ahead, agent, read('/w/a.py')), 'now it is pushed out');
  assert.ok(!passed(ahead, agent, read('/w/a.py')), 'and this one in');
});

test('drawn promises: a call goes on by its group exactly when the worker\'s statement says so', () => {
  // The calls drawn from: of two files, loose, a shell line (no group), of two pages, a loose fetch.
  const execs = [read('/w/a.py'), read('/w/b.py'), read('..'), { name: 'bash', arguments: { command: 'echo' } }];
  execs.push(fetch('https://x.org/a'), fetch('https://x.org/b'), fetch('https://x.org/%61'));
  const random = generator(4039);
  const cases = [];
  const verdicts = [];
  for (let index = 0; index < 1500; index++) {
    const size = 1 + random.int(6);
    const named = [...new Set(Array.from({ length: random.int(4) }, () => groups.ofCall(random.pick(execs))))];
    const window = Array.from({ length: random.int(size + 1) }, () => random.int(named.length + 1) - 1);
    const since = Array.from({ length: random.int(9) }, () => random.pick(execs));
    const [exec, room] = [random.pick(execs), 1 + random.int(4)];
    const ahead = new AheadVerdicts(100, SETTINGS.operations, SETTINGS.breaks, { ...SETTINGS.grouping, window: size });
    const agent = AheadVerdicts.agent(1);
    ahead.granted(agent, 0, 0, 7, { passes: 0, digests: [], groups: named, window, room });
    for (const sent of since) ahead.committing(agent, 'guard', false, sent);
    verdicts.push(ahead.fitsGroup(agent, 7, exec));
    cases.push([named, window, room, exec.name, groups.ofCall(exec), since.map((sent) => groups.ofCall(sent)), size]);
  }
  const script = `
import json, sys
from breaker.core.deciding.passes import Conditional, by_group
print(json.dumps([
    by_group(Conditional(0, (), tuple(named), room, tuple(window)), tool, group, since, size)
    for named, window, room, tool, group, since, size in json.load(sys.stdin)
]))
`;
  const run = spawnSync(PYTHON, ['-c', script], { input: JSON.stringify(cases), cwd: PACKAGE_ROOT, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const python = JSON.parse(run.stdout);
  for (const [index, verdict] of verdicts.entries()) assert.equal(verdict, python[index], JSON.stringify(cases[index]));
  const through = verdicts.filter(Boolean).length;
  assert.ok(through > 200 && through < 1300, `${through} of 1,500 go on by their group`);
});

test('a promise goes no further than 1,024 calls ahead of its answer; within it, a call counts the calls in its window', () => {
  const { ahead, agent } = promised([], 2);
  for (let index = 0; index < 1024; index++) assert.ok(passed(ahead, agent, read(`/w/${index}.py`)), `call ${index}`);
  assert.ok(agent.since.calls.length <= 1024, 'the oldest let go');
  assert.ok(passed(ahead, agent, read('/w/1023.py')), 'one of its group in the window: fewer than 2');
  assert.ok(!passed(ahead, agent, read('/w/new.py')), '1,025 calls since the answer: it waits');
  ahead.granted(agent, agent.committed, 0, 7, { passes: 0, digests: [], groups: [], window: [], room: 2 });
  assert.ok(passed(ahead, agent, read('/w/1023.py')), 'an answer after them that holds none of them');
});

test('a worker that names no groups (an older one) promises nothing by group', () => {
  const ahead = new AheadVerdicts(100, SETTINGS.operations, SETTINGS.breaks, SETTINGS.grouping);
  const agent = AheadVerdicts.agent(1);
  ahead.granted(agent, 0, 0, 7, { passes: 0, digests: [] });
  assert.ok(!passed(ahead, agent, read('/w/a.py')));
});

test('an answer that cannot be checked leaves the promise by group in effect, its calls since still counted', () => {
  const { ahead, agent } = promised([], 2);
  const results = agent.results; // a later request goes out now
  for (let index = 0; index < 20; index++) {
    assert.ok(passed(ahead, agent, read(`/w/${index % 10}.py`)), `call ${index}`);
    ahead.resulted(agent, 'read', `line ${index}`, { isError: false });
  }
  ahead.granted(agent, 5, 0, 7, { passes: 0, digests: [], groups: [], window: [], room: 2 }, results);
  assert.ok(!passed(ahead, agent, read('/w/4.py')), 'calls 5 and 15 in the window, the 5th before that answer\'s request: counted all the same');
  assert.ok(passed(ahead, agent, read('/w/3.py')), 'call 4 pushed out, call 14 in: one');
});
