// Passes and kept verdicts whatever order guards run in: a seeded fuzz over interleavings of one
// agent's calls (pre-executes batched or one after another as a slow listener would have them,
// guards run in a random order) through the real shim and worker. Every live verdict must be the
// one the pure core gives the call at the position the shim gave it: the frames the shim sent,
// replayed in order through a fresh Breaker (replay-frames.py). A second fuzz runs three agents at
// once, each batch a model turn (now and then with a human message), most answers the same.
// A third runs the agents with turns of the event loop between hooks (what waits for an idle
// moment goes out at varied points) and, in a second run of the same seed, the worker killed at
// some of them: the journal must bring each replacement to the very state the lost worker had, so
// every verdict is the unbroken run's.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { WorkerBridge } from '../worker/bridge.js';
import { apply } from '../index.js';
import { FakeDsh, makeAgent, userMessage } from './fake-dsh.js';
import { generator, isAlive, waitUntil } from './processes.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const PACKAGE_ROOT = dirname(dirname(HERE));
const PYTHON = process.env.RTB_PYTHON || 'python3';
const disposers = [];
after(() => disposers.forEach((dispose) => dispose()));

// Every frame a bridge sends, by bridge, in the order it sent them.
const sent = new Map();
const send = WorkerBridge.prototype.send;
WorkerBridge.prototype.send = function record(message, ...rest) {
  if (!sent.has(this)) sent.set(this, []);
  sent.get(this).push(message);
  return send.call(this, message, ...rest);
};


const COMMANDS = ['make test', 'cat notes.txt', 'curl -s https://example.org/api'];

// One agent's session: batches of one to four calls in flight at once. Their pre-executes run in
// groups, a group's together and the groups one after another (a slow listener lets a later
// call's answer come back before an earlier call's guard); then their guards, bodies and results
// run in a random order. Deterministic: what each pre-execute knows depends only on the seed.
// With `turns`, each batch is a model turn (agent/pre-step), now and then with a human message.
async function session(dsh, random, agent, prefix, calls, { turns = false, pause = async () => {} } = {}) {
  const verdicts = new Map();
  let number = 0;
  while (number < calls) {
    await pause(random);
    if (turns) await dsh.step(agent, random.int(5) === 0 ? [userMessage(`${prefix}-${number}`)] : []);
    const batch = [];
    for (let size = 1 + random.int(4); size > 0 && number < calls; size--, number++) {
      batch.push(dsh.execution(agent, 'bash', { command: random.pick(COMMANDS) }, `${prefix}-${number}`));
    }
    const decisions = [];
    for (let start = 0; start < batch.length; ) {
      await pause(random);
      const group = batch.slice(start, start + 1 + random.int(batch.length - start));
      decisions.push(...(await Promise.all(group.map((exec) => dsh.preExecute(exec)))));
      start += group.length;
    }
    const order = batch.map((_, index) => index).sort(() => random.next() - 0.5);
    for (const index of order) {
      await pause(random);
      const outcome = await dsh.afterPreExecute(batch[index], decisions[index]);
      verdicts.set(batch[index].callId, outcome.denied === undefined ? 'allow' : 'deny');
    }
  }
  return verdicts;
}

// What a call returns in the agents-at-once fuzz: most commands the same answer every time (so the
// no-progress rules have something to stop), one an answer of its own every time; a function of
// the call alone, whatever order the calls run in.
function answerOf(exec) {
  const command = String(exec.arguments.command);
  return command.startsWith('curl') ? `{"id": "${exec.callId}"}` : `the same answer to ${command}`;
}

// Each agent's journal (what a replacement worker is given) holds its requests in the order the
// worker got them (a kept verdict's commit is journaled as its guard).
function journalInOrder(bridge, frames) {
  const key = (frame) => `${frame.op === 'commit' ? 'guard' : frame.op} ${frame.call ?? ''}`;
  for (const agent of new Set(frames.map((frame) => frame.agent))) {
    const sentOrder = frames.filter((frame) => frame.agent === agent).map(key);
    const journaled = bridge.replay(agent).requests.map(key);
    let at = 0;
    for (const request of journaled) {
      at = sentOrder.indexOf(request, at) + 1;
      assert.ok(at > 0, `agent ${agent}: journal ${journaled.join(', ')}; sent ${sentOrder.join(', ')}`);
    }
  }
}

// Between two hooks: nothing, a turn of the event loop (a timer's or an I/O callback's), or, with
// `kills`, the worker killed (when its predecessor's loss is over: no backoff, no call unchecked).
function pauses(bridge, kills) {
  return async (random) => {
    const draw = random.int(10);
    if (draw === 0) await new Promise((resolve) => setTimeout(resolve, 0));
    else if (draw === 1) await new Promise((resolve) => setImmediate(resolve));
    else if (draw === 2 && kills) {
      bridge.drain(); // the helper's news: the current worker's pid
      const pid = bridge.pid;
      // Not one another agent's pause killed already (the bridge has not noticed yet).
      if (pid === null || bridge.losses.length > 0 || !isAlive(pid)) return;
      process.kill(pid, 'SIGKILL');
      await waitUntil(() => !isAlive(pid));
    }
  };
}

async function fuzz(config, seed, sessions, { together = 1, turns = false, pausing = false, kills = false } = {}) {
  // A call's body pauses too, as drawn from its own numbers (the order bodies run in is not seeded).
  const own = (exec) => generator(seed + [...exec.callId].reduce((sum, char) => sum * 31 + char.charCodeAt(0), 0));
  const body = (exec) => (pausing ? pause(own(exec)).then(() => answerOf(exec)) : answerOf(exec));
  const dsh = new FakeDsh(together > 1 || turns ? { body } : {});
  const before = new Set(sent.keys());
  disposers.push(apply(dsh.ctx, config));
  const [bridge] = [...sent.keys()].filter((candidate) => !before.has(candidate));
  const pause = pauses(bridge, kills);
  const random = generator(seed);
  const live = new Map();
  for (let index = 0; index < sessions; index += together) {
    // `together` agents at once, each drawing from a generator of its own (what each does does
    // not depend on how their calls interleave).
    const runs = [];
    for (let each = index; each < Math.min(sessions, index + together); each++) {
      const own = together > 1 ? generator(seed + each) : random;
      runs.push(session(dsh, own, makeAgent(`fuzz-${seed}-${each}`), `s${each}`, 4 + own.int(7), { turns, pause: pausing ? pause : undefined }));
    }
    for (const verdicts of await Promise.all(runs)) for (const [call, verdict] of verdicts) live.set(call, verdict);
  }
  const frames = sent.get(bridge).filter((frame) => frame.op !== 'configure' && frame.op !== 'stats');
  if (!kills) journalInOrder(bridge, frames);
  const replay = spawnSync(PYTHON, [join(HERE, 'replay-frames.py')], {
    cwd: PACKAGE_ROOT,
    env: { ...process.env, PYTHONPATH: PACKAGE_ROOT },
    input: JSON.stringify([config, frames]),
    maxBuffer: 64 * 1024 * 1024,
  });
  assert.equal(replay.status, 0, String(replay.stderr));
  const core = new Map(Object.entries(JSON.parse(String(replay.stdout))).map(([key, verdict]) => [key.split(':')[1], verdict]));
  const differences = [...live].filter(([call, verdict]) => core.get(call) !== verdict);
  return { calls: live.size, differences, live };
}

for (const [name, config] of [
  ['defaults', {}],
  ['caps of 3', { limits: { exact: 3, cmd: 3 } }],
  ['caps of 3 and a failure limit', { limits: { exact: 3, cmd: 3 }, failLimit: 2 }],
]) {
  test(`reordered guards: every live verdict is the core's at the call's position (${name})`, async () => {
    const { calls, differences } = await fuzz(config, 20_26_12_03, 40);
    assert.ok(calls > 200, `${calls} calls`);
    assert.deepEqual(differences, [], `${differences.length} of ${calls} calls differ`);
  });
}

for (const [name, config] of [
  ['defaults', {}],
  ['caps of 3 and a same-result limit of 3', { limits: { exact: 3, cmd: 3 }, sameResultLimit: 3 }],
]) {
  test(`three agents at once, with model turns, human messages and answers that repeat: every live verdict is the core's (${name})`, async () => {
    const { calls, differences } = await fuzz(config, 20_26_12_04, 30, { together: 3, turns: true });
    assert.ok(calls > 150, `${calls} calls`);
    assert.deepEqual(differences, [], `${differences.length} of ${calls} calls differ`);
  });
}

test('turns of the event loop between hooks, and workers killed there: every verdict is the unbroken run\'s', async () => {
  const config = { limits: { exact: 3, cmd: 3 }, sameResultLimit: 3 };
  const steady = await fuzz(config, 20_26_12_05, 24, { together: 3, turns: true, pausing: true });
  assert.ok(steady.calls > 120, `${steady.calls} calls`);
  assert.deepEqual(steady.differences, [], `${steady.differences.length} of ${steady.calls} calls differ from the core`);
  const broken = await fuzz(config, 20_26_12_05, 24, { together: 3, turns: true, pausing: true, kills: true });
  const differences = [...steady.live].filter(([call, verdict]) => broken.live.get(call) !== verdict);
  assert.deepEqual(differences, [], `${differences.length} of ${steady.calls} calls differ once workers are killed`);
});
