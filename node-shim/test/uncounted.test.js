// A configuration that counts none of the tools dsh has (an include list all mistyped) is
// named once, after UNCOUNTED_CALLS calls none of which was counted; one that counts any of them,
// called or not, never is.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { UNCOUNTED_CALLS, UncountedWatch } from '../call/uncounted.js';
import { apply } from '../index.js';
import { FakeDsh, makeAgent } from './fake-dsh.js';
import { captureStderr } from './processes.js';

const TOOLS = ['bash', 'read', 'edit', 'glob', 'grep', 'web_search', 'todo_write', 'subagent', 'write'];

function watching(pattern, names = TOOLS) {
  const lines = [];
  const asked = [];
  const watch = new UncountedWatch(new RegExp(pattern), (agent) => (asked.push(agent), names), 'include: [bsh]', (line) => lines.push(line));
  return { watch, lines, asked };
}

test('no tool dsh has is counted: one line at the UNCOUNTED_CALLS-th call, naming the lists and the fix', () => {
  const { watch, lines, asked } = watching('^(?:bsh)$');
  for (let call = 1; call < UNCOUNTED_CALLS; call++) watch.sawUncounted('bash', 'agent-1');
  assert.deepEqual(lines, [], 'not before');
  watch.sawUncounted('bash', 'agent-1');
  for (let call = 0; call < 40; call++) watch.sawUncounted('bash', 'agent-1');
  assert.equal(lines.length, 1, 'once');
  assert.deepEqual(asked, ['agent-1'], "the calling agent's tools, looked at once");
  assert.equal(
    lines[0],
    'the config counts none of the 9 tools dsh has (bash, edit, glob, grep, read, subagent, todo_write, web_search, …), ' +
      `so it stops no call: ${UNCOUNTED_CALLS} calls so far (bash), none counted (include: [bsh]). Fix: list in include the ` +
      'tools to count as dsh names them (`*` wildcards; none: every tool), and in exclude only tools never to count',
  );
});

test('a config that counts one of the tools, called or not, a counted call, or a registry that cannot be read: nothing said', () => {
  const notCalledYet = watching('^(?:bsh|grep)$'); // counts grep, which no call has used yet
  const counted = watching('^(?:bsh)$');
  const unreadable = new UncountedWatch(/^x$/, () => { throw new Error('no registry'); }, '', () => assert.fail('said'));
  const empty = watching('^(?:bsh)$', []);
  counted.watch.sawCounted();
  for (let call = 0; call < 2 * UNCOUNTED_CALLS; call++) {
    for (const { watch } of [notCalledYet, counted, empty]) watch.sawUncounted('bash', 'agent-1');
    unreadable.sawUncounted('bash', 'agent-1');
  }
  assert.deepEqual([notCalledYet.lines, counted.lines, empty.lines], [[], [], []]);
  assert.deepEqual(counted.asked, [], 'a counted call ends the watch');
});

const disposers = [];
after(async () => {
  for (const dispose of disposers) (await dispose)();
});

/** The lines on stderr that say a config counts no tool, while `body` runs the plugin. */
async function countsNothingLines(body) {
  return (await captureStderr(body)).filter((text) => text.includes('counts none of'));
}

test('through the plugin: include: [bsh] names the tools dsh offers the agent, once, and counts nothing', async () => {
  const lines = await countsNothingLines(async () => {
    const dsh = new FakeDsh({ body: () => 'the same answer' });
    dsh.ctx.tools.schemas = () => TOOLS.map((name) => ({ name, description: '' }));
    disposers.push(await apply(dsh.ctx, { include: ['bsh'] }));
    const agent = makeAgent('u');
    for (let call = 0; call < UNCOUNTED_CALLS + 4; call++) {
      const outcome = await dsh.call(agent, 'bash', { command: 'cat notes.txt' });
      assert.equal(outcome.denied, undefined, 'not counted: never denied');
    }
  });
  assert.equal(lines.length, 1);
  assert.match(lines[0], /^\[repeat-tool-breaker\] the config counts none of the 9 tools dsh has \(bash, edit, .* so far \(bash\), none counted \(include: \[bsh\]\)\. Fix: /);
});

test('a name is shown with its word characters only: no control or escape reaches stderr', () => {
  const { watch, lines } = watching('^(?:bsh)$', ['bash\u001b[31m', 'read\nx']);
  for (let call = 0; call < UNCOUNTED_CALLS; call++) watch.sawUncounted('ba\rsh', 'agent-1');
  assert.equal(lines.length, 1);
  assert.match(lines[0], /\(bash\?\?31m, read\?x\), so it stops no call: 16 calls so far \(ba\?sh\)/);
});

test("through the plugin: a tool only the calling agent's scope has, or only dsh's global view, is one of dsh's tools", async () => {
  const lines = await countsNothingLines(async () => {
    for (const [include, global, scoped] of [[['scoped_tool'], ['bash'], ['bash', 'scoped_tool']], [['web_search'], ['bash', 'web_search'], ['bash']]]) {
      const dsh = new FakeDsh({ body: () => 'the same answer' });
      dsh.ctx.tools.schemas = (scope) => (scope === undefined ? global : scoped).map((name) => ({ name }));
      disposers.push(await apply(dsh.ctx, { include }));
      const agent = makeAgent(include[0]);
      for (let call = 0; call < UNCOUNTED_CALLS + 2; call++) await dsh.call(agent, 'bash', { command: 'ls' });
    }
  });
  assert.deepEqual(lines, []);
});
