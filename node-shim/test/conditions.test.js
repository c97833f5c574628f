// Conditional passes: the shim lets a call through on a conditional pass only while every result
// of the agent sent after the answered request is news, as the worker's condition says
// (breaker/core/reading/news.py states what it means; the shim evaluates it, naming no rule).
// The Python statement and the shim's evaluation are pinned on the same cases here.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { AheadVerdicts, NewsCheck } from '../call/ahead.js';
import { workerSettings } from './processes.js';

const PACKAGE_ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const PYTHON = process.env.RTB_PYTHON || 'python3';
const SETTINGS = workerSettings();
const BREAKS = SETTINGS.breaks;
const news = new NewsCheck(BREAKS);

/** An agent, and a conditional answer from worker 7: `passes` plain, `more` while news, `old` not news. */
function promised(passes, more, old = []) {
  const ahead = new AheadVerdicts(100, SETTINGS.operations, BREAKS);
  const agent = AheadVerdicts.agent(1);
  const digests = old.map((text) => news.digest('read', text));
  ahead.granted(agent, 0, passes, 7, { passes: more, digests });
  return { ahead, agent };
}

/** A call of `agent` through pre-execute and guard: whether it went through on a pass. */
function passed(ahead, agent, generation = 7) {
  const exec = {};
  if (!ahead.reserve(exec, agent, generation)) return false; // committed at its pre-execute
  assert.ok(ahead.usePass(exec));
  return true;
}

test('a conditional pass lets calls through while the results since its answer are news', () => {
  const { ahead, agent } = promised(1, 3, ['seen before']);
  assert.ok(passed(ahead, agent), 'the plain pass');
  ahead.resulted(agent, 'read', 'line 1', { isError: false });
  assert.ok(passed(ahead, agent), 'news: the conditional pass');
  ahead.resulted(agent, 'read', 'line 2', { isError: false });
  assert.ok(passed(ahead, agent));
  ahead.resulted(agent, 'read', 'line 3', { isError: false });
  assert.ok(!passed(ahead, agent), 'three promised: the fourth call waits for the worker');
});

for (const [what, text, outcome] of [
  ['a result the answer names', 'seen before', { isError: false }],
  ['the same result as one before it since', 'line 1', { isError: false }],
  ['an error', 'Error: no such file', { isError: true }],
  ['a non-zero exit', 'boom', { isError: false, exitCode: 2 }],
  ['a failure in the text', 'curl: (7) Failed to connect', { isError: false, exitCode: 0 }],
]) {
  test(`a call after ${what} cannot go through on the condition it broke: it waits for the worker`, () => {
    const { ahead, agent } = promised(1, 4, ['seen before']);
    assert.ok(passed(ahead, agent));
    ahead.resulted(agent, 'read', 'line 1', { isError: false });
    assert.ok(passed(ahead, agent));
    ahead.resulted(agent, 'read', text, outcome);
    assert.ok(!passed(ahead, agent), 'no pass: the guard asks the worker');
    ahead.resulted(agent, 'read', 'line 9', { isError: false });
    assert.ok(!passed(ahead, agent), 'broken for good: only a newer answer promises again');
  });
}

test('a result that breaks the condition after a call\'s pre-execute comes after that call, committed there: only the next call waits', () => {
  const { ahead, agent } = promised(0, 2);
  const exec = {};
  assert.ok(ahead.reserve(exec, agent, 7));
  ahead.resulted(agent, 'read', 'Error: rejected', { isError: true }); // another call's, as this one waits
  assert.ok(ahead.usePass(exec), 'its guard lets it through: the worker had it before that result');
  assert.ok(!ahead.reserve({}, agent, 7), 'the next call waits for the worker');
});

test('an answer is checked against the results sent after its request, before it came', () => {
  const ahead = new AheadVerdicts(100, SETTINGS.operations, BREAKS);
  const agent = AheadVerdicts.agent(1);
  const results = agent.results; // the request goes out now
  ahead.resulted(agent, 'read', 'Error: rejected', { isError: true });
  ahead.granted(agent, 0, 0, 7, { passes: 3, digests: [] }, results);
  assert.ok(!passed(ahead, agent), 'a result sent after the request broke it already');
  ahead.granted(agent, 0, 0, 7, { passes: 3, digests: [] }); // a request sent after that result
  assert.ok(passed(ahead, agent));
});

test('an answer that comes after more results than are kept to check it leaves the promise in effect: it still passes, and still ends at a result that breaks it', () => {
  const { ahead, agent } = promised(0, 40);
  const results = agent.results; // a later request goes out now
  for (let n = 0; n < 20; n++) {
    assert.ok(passed(ahead, agent), `call ${n} on the promise`);
    ahead.resulted(agent, 'read', `line ${n}`, { isError: false });
  }
  ahead.granted(agent, 1, 0, 7, { passes: 40, digests: [] }, results); // 20 results since: not checkable
  assert.ok(passed(ahead, agent), 'the promise before it still holds');
  ahead.resulted(agent, 'read', 'line 3', { isError: false }); // the same as one since the promise
  assert.ok(!passed(ahead, agent), 'a result that breaks it ends it all the same');
  ahead.granted(agent, 2, 0, 7, { passes: 40, digests: [] }, results);
  assert.ok(!passed(ahead, agent), 'nor does an answer that cannot be checked bring it back');
});

test("an answer of another worker that cannot be checked brings none of the last worker's promise", () => {
  const { ahead, agent } = promised(0, 40);
  for (let n = 0; n < 20; n++) ahead.resulted(agent, 'read', `line ${n}`, { isError: false });
  ahead.granted(agent, 0, 0, 8, { passes: 40, digests: [] }, 0); // worker 8, a replacement
  assert.ok(!passed(ahead, agent, 8));
});

test('a worker that gives no conditions (an older one) leaves the plain passes as they were', () => {
  const ahead = new AheadVerdicts(100, SETTINGS.operations);
  const agent = AheadVerdicts.agent(1);
  ahead.granted(agent, 0, 1, 7, { passes: 3, digests: [] });
  ahead.resulted(agent, 'read', 'line 1', { isError: false });
  assert.ok(passed(ahead, agent));
  assert.ok(!passed(ahead, agent));
});

// The same cases through the Python statement (breaker/core/reading/news.py) and the shim.
const CASES = [
  ['bash', 'ok', { isError: false, exitCode: 0, kind: 'foreground', timedOut: false, aborted: false }],
  ['bash', 'ok', { isError: false, exitCode: false }],
  ['bash', 'ok', { isError: 0 }],
  ['bash', 'ok', { exitCode: 0.5 }],
  ['bash', 'ok', { exitCode: '0' }],
  ['bash', 'ok', { signal: '' }],
  ['bash', 'ok', { signal: 'SIGTERM' }],
  ['web_fetch', 'page', { statusCode: 200 }],
  ['web_fetch', 'page', { statusCode: 404 }],
  ['web_fetch', 'page', { status: 'done' }],
  ['web_fetch', 'Fetched https://a.example/x (HTTP 200)\npage', { isError: false }],
  ['web_fetch', 'a page\nFetched https://a.example/x (HTTP 200)', { isError: false }],
  ['bash', 'x\ncurl: (6) Could not resolve host', { isError: false, exitCode: 0 }],
  ['bash', 'Traceback (most recent call last):\n  File "x"\nKeyError: 1', {}],
  ['bash', 'urllib.error.HTTP Error 500', {}],
  ['read', 'caf\u00e9 \u{1F600} \ud800 lone', null],
  ['read', '', null],
  ['mcp_call', 'Error: not found', { isError: false }],
  ['mcp_call', '  {"error": "no such job"}', { isError: false }],
  ['read', `${'x'.repeat(63)}{ error`, null],
  ['read', `${'x'.repeat(64)}{ error`, null],
  ['read', `${'\u{1F600}'.repeat(31)}x{ error`, null],
  ['read', `${'\u{1F600}'.repeat(32)}{ error`, null],
  ['mcp_call', '{"id": 7, "status": "open"}', { isError: false }],
  ['mcp_call', '{"e\\u0072ror": "locked"}', { isError: false }],
  ['mcp_call', ' {"note": "no error here"}', null],
  ['mcp_call', '{"name": "caf\\u00e9"}', null],
  ['read', 'an error, and then {', null],
  ['bash', 'out\n[exit code: 2]', {}],
  ['bash', 'out\n[killed by signal: SIGKILL]', {}],
  ['read', 'x'.repeat(5000), { isError: true }],
];

test('the shim evaluates a condition as the Python statement of what it means', () => {
  const script = `
import json, sys
from breaker.core.reading.news import breaks, digest
for tool, text, outcome in json.load(sys.stdin):
    print(json.dumps([breaks(tool, text, outcome, frozenset()), digest(tool, text)]))
`;
  // The worker gets the text as UTF-8 (msgpack), where a lone surrogate is U+FFFD already.
  const wire = CASES.map(([tool, text, outcome]) => [tool, text.toWellFormed?.() ?? text.replace(/\p{Surrogate}/gu, '\ufffd'), outcome]);
  const run = spawnSync(PYTHON, ['-c', script], { input: JSON.stringify(wire), cwd: PACKAGE_ROOT, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const python = run.stdout.trim().split('\n').map((line) => JSON.parse(line));
  assert.equal(python.length, CASES.length);
  for (const [index, [tool, text, outcome]] of CASES.entries()) {
    assert.deepEqual([news.breaks(text, outcome), news.digest(tool, text)], python[index], `case ${index}: ${text.slice(0, 40)}`);
  }
});

test('a JSON answer breaks a condition only with an error key\'s name or an escape, and a head sent without its marks always', () => {
  assert.ok(!news.breaks('{"id": 7, "status": "open"}', { isError: false }), 'a function\'s answer is news');
  assert.ok(news.breaks('{"error": "no such order"}', { isError: false }));
  assert.ok(news.breaks('{"e\\u0072ror": "locked"}', { isError: false }), 'an escape may spell the key');
  const unmarked = new NewsCheck({ ...BREAKS, heads: BREAKS.heads.map(([head, units]) => [head, units]) });
  assert.ok(unmarked.breaks('{"id": 7}', { isError: false }), 'a head without its marks: every JSON answer breaks it');
});
