// The boot: `apply` returns at once with a promise dsh awaits while it applies its other plugins,
// settled by the worker's answer to the configuration; a hook dsh runs before that answer has
// come waits for it, so no call is ever let through unchecked; a worker that never answers fails
// the boot and is killed.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { apply } from '../index.js';
import { FakeDsh, makeAgent } from './fake-dsh.js';
import { isAlive, waitUntil } from './processes.js';

const PYTHON = process.env.RTB_PYTHON || 'python3';
const folder = mkdtempSync(join(tmpdir(), 'rtb-boot-test-'));
const disposers = [];
after(async () => {
  // a failed test's boot rejected: the others are still disposed, and the folder goes whatever
  for (const settled of await Promise.allSettled(disposers)) if (settled.status === 'fulfilled') settled.value();
  rmSync(folder, { recursive: true, force: true });
});

/** An interpreter whose worker starts only once `release` is called, or after `delay` seconds
 * (released by itself: the guard blocks this thread), or never (`hang`). */
function heldInterpreter(name, { hang = false, delay = 0 } = {}) {
  const gate = join(folder, `${name}-gate`);
  const pid = join(folder, `${name}-pid`);
  const script = join(folder, `${name}-python`);
  writeFileSync(script, [
    '#!/bin/sh',
    `echo $$ > '${pid}'`,
    hang ? 'exec sleep 600' : delay ? `sleep ${delay}` : `while [ ! -e '${gate}' ]; do sleep 0.02; done`,
    `exec '${PYTHON}' "$@"`,
    '',
  ].join('\n'), { mode: 0o755 });
  return {
    path: script,
    release: () => writeFileSync(gate, ''),
    pid: () => Number(readFileSync(pid, 'utf8')),
  };
}

const settledFlag = (promise) => {
  const state = { settled: false };
  promise.then(() => (state.settled = true), () => (state.settled = true));
  return state;
};
const call = (agent, n) => ({ name: 'bash', callId: `c${n}`, agent, arguments: { command: 'cat notes.txt', description: 'd' } });

test('apply returns a promise at once: dsh\'s event loop runs while the worker starts, and it settles with the answer', async () => {
  const interpreter = heldInterpreter('waited');
  const dsh = new FakeDsh();
  const pending = apply(dsh.ctx, { python: interpreter.path });
  disposers.push(pending);
  const state = settledFlag(pending);
  assert.equal(dsh.guards.length, 1, 'the guard is registered before apply returns');
  await new Promise((resolve) => setTimeout(resolve, 50)); // the event loop is free meanwhile
  assert.equal(state.settled, false, 'no answer yet: the worker has not started');
  interpreter.release();
  assert.equal(typeof (await pending), 'function', 'settled with the disposer once the worker answered');
});

test('a guard run before the answer has come waits for it, and the worker decides every call', async () => {
  const interpreter = heldInterpreter('guarded', { delay: 0.3 });
  const dsh = new FakeDsh();
  const pending = apply(dsh.ctx, { python: interpreter.path });
  disposers.push(pending);
  const state = settledFlag(pending);
  const agent = makeAgent('early');
  const [guard] = dsh.guards;
  const verdicts = [1, 2, 3, 4, 5].map((n) => guard(call(agent, n)));
  assert.equal(state.settled, false, 'the guards ran before apply\'s promise settled');
  assert.deepEqual(verdicts.map((verdict) => verdict === undefined), [true, true, true, true, false]);
  assert.match(verdicts[4], /^REPEAT_TOOL_BLOCKED:/, 'the fifth was denied by the worker, not let through');
  await pending;
});

test('a worker that does not answer within startTimeoutMs fails the boot and is killed', async () => {
  const interpreter = heldInterpreter('hung', { hang: true });
  const dsh = new FakeDsh();
  await assert.rejects(() => apply(dsh.ctx, { python: interpreter.path, startTimeoutMs: 300 }), (error) => {
    assert.match(error.message, /^repeat-tool-breaker: the Python worker \([^)]*\) did not answer within 300 ms: /);
    return true;
  });
  assert.equal(dsh.listenerCount, 0, 'nothing stays registered');
  assert.ok(await waitUntil(() => !isAlive(interpreter.pid())), 'the hung worker was killed');
});

test('hooks run before a worker that never answers has failed the boot throw nothing: the call gets onWorkerFailure', async () => {
  for (const onWorkerFailure of ['allow', 'deny']) {
    const interpreter = heldInterpreter(`hung-early-${onWorkerFailure}`, { hang: true });
    const dsh = new FakeDsh();
    const pending = apply(dsh.ctx, { python: interpreter.path, startTimeoutMs: 300, onWorkerFailure });
    const failed = assert.rejects(pending, /did not answer within 300 ms/);
    const agent = makeAgent(`early-${onWorkerFailure}`);
    const exec = dsh.execution(agent, 'bash', { command: 'ls', description: 'd' });
    const verdict = dsh.guardReason(exec); // blocks for startTimeoutMs, then judges the call
    if (onWorkerFailure === 'allow') assert.equal(verdict, undefined);
    else assert.match(verdict, /^repeat-tool-breaker: the Python worker \([^)]*\) did not answer within 300 ms: /);
    assert.deepEqual(await dsh.preExecute(exec), { kind: 'allow' }, 'passed on to the next');
    const post = await dsh.waterfall('tools/post-execute', [exec, { content: [], isError: false }], () => Promise.resolve({ kind: 'accept' }));
    assert.deepEqual(post, { kind: 'accept' });
    await failed;
    assert.equal(dsh.listenerCount, 0, 'nothing stays registered');
    assert.ok(await waitUntil(() => !isAlive(interpreter.pid())), 'the hung worker was killed');
  }
});
