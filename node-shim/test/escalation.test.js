// Issue 8 through the real shim and worker: notices ride tools/post-execute as plugin
// UserMessages, never reset the window, and the failure gate reads the structured result value.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { apply } from '../index.js';
import { FakeDsh, makeAgent } from './fake-dsh.js';

const disposers = [];
// apply returns a promise of its disposer (dsh awaits it): a hook run before it settles waits for the worker
after(async () => {
  for (const dispose of disposers) (await dispose)();
});

// `values` gives a call's structured result value, set by a listener outside the plugin's (dsh's
// tool body returns it; the fake only returns text).
function mount(config, { values, downstream } = {}) {
  const dsh = new FakeDsh({ body: (exec) => exec.arguments.output ?? `ran ${exec.callId}` });
  if (values) {
    dsh.ctx.on('tools/post-execute', (exec, result, next) => {
      if (!result.isError) result.value = values(exec);
      return next();
    });
  }
  disposers.push(apply(dsh.ctx, config));
  if (downstream) dsh.ctx.on('tools/post-execute', () => Promise.resolve(downstream));
  return dsh;
}

const notices = (outcome) => outcome.post.additionalContexts ?? [];

test('warnAt and summarizeAt notices are plugin UserMessages, and feeding them back resets nothing', async () => {
  const dsh = mount({ warnAt: 2, summarizeAt: 3 });
  const agent = makeAgent('stages');
  const outcomes = [];
  for (let n = 0; n < 4; n++) {
    const outcome = await dsh.call(agent, 'bash', { command: 'npm test', description: `try ${n}` });
    outcomes.push(outcome);
    await dsh.step(agent, notices(outcome)); // dsh delivers a notice in the next step's inbox
  }
  assert.deepEqual(outcomes.map((outcome) => notices(outcome).length), [0, 1, 1, 0]);
  const [warn] = notices(outcomes[1]);
  assert.equal(warn.role, 'user');
  assert.match(warn.id, /^repeat-tool-breaker-/);
  assert.deepEqual(warn.source, { kind: 'plugin', plugin: 'repeat-tool-breaker', form: 'notice', summary: warn.source.summary });
  assert.match(warn.content[0].text, /^REPEAT_TOOL_NOTICE: you are repeating yourself/);
  assert.match(notices(outcomes[2])[0].content[0].text, /summarise your progress/);
  const fifth = await dsh.call(agent, 'bash', { command: 'npm test', description: 'try 5' });
  assert.match(fifth.denied, /^REPEAT_TOOL_BLOCKED:/, 'the notices did not reset the window');
});

test('a notice keeps the downstream decision and its contexts', async () => {
  const mine = { id: 'other', role: 'user', content: [{ type: 'text', text: 'x' }], source: { kind: 'plugin' } };
  const dsh = mount({ warnAt: 2 }, { downstream: { kind: 'block', feedback: 'no', additionalContexts: [mine] } });
  const agent = makeAgent('downstream');
  await dsh.call(agent, 'bash', { command: 'make' });
  const second = await dsh.call(agent, 'bash', { command: 'make' });
  assert.equal(second.post.kind, 'block');
  assert.equal(second.post.feedback, 'no');
  assert.deepEqual(second.post.additionalContexts.map((message) => message.id.split('-')[0]), ['repeat', 'other']);
});

test('the failure gate reads exitCode from the structured value and spares other calls', async () => {
  const values = (exec) => ({
    kind: 'foreground', exitCode: exec.arguments.command.startsWith('ls /missing') ? 2 : 0, signal: null,
    timedOut: false, aborted: false, stdout: { text: 'huge', truncated: false }, stderr: { text: '', truncated: false },
  });
  const dsh = mount({ failWarnAt: 2, failLimit: 3 }, { values });
  const agent = makeAgent('failing');
  const failing = { command: 'ls /missing', output: "ls: cannot access '/missing'\n[exit code: 2]" };
  const outcomes = [];
  for (let n = 0; n < 4; n++) outcomes.push(await dsh.call(agent, 'bash', { ...failing, description: `try ${n}` }));
  assert.deepEqual(outcomes.map((outcome) => outcome.denied === undefined), [true, true, true, false]);
  assert.match(notices(outcomes[1])[0].content[0].text, /has failed 2 times in a row; the last time the command exited with code 2/);
  assert.match(outcomes[3].denied, /^REPEAT_TOOL_BLOCKED: .*failed on each of its last attempts/);
  assert.match(outcomes[3].denied, /\| ls: cannot access '\/missing'/);
  const other = await dsh.call(agent, 'bash', { command: 'cat build.log' });
  assert.equal(other.denied, undefined);
});

test('by default a result costs no reply and earns no notice', async () => {
  const dsh = mount({});
  const agent = makeAgent('defaults');
  for (let n = 0; n < 4; n++) {
    const outcome = await dsh.call(agent, 'bash', { command: 'npm test' });
    assert.equal(outcome.post.additionalContexts, undefined);
  }
});
