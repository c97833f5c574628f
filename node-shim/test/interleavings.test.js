// Passes and kept verdicts whatever order hooks run in, through the real shim and worker.
//
// The fuzz that matters runs agents as dsh does (@deepseek-ai/dsh-agent-loop 0.1.0-rc.8, runGroup):
// each agent's steps one after another, now and then with a human message; a step's calls each
// logged, then through pre-execute, the ask and the guards before the next call is logged; their
// bodies at once; their post-executes in the calls' order, each as soon as it and the calls before
// it are done. Three agents run at once on one event loop, turns of the event loop between hooks
// (what waits for an idle moment goes out at varied points), and with `maxAgents` 2 the worker
// forgets agents as it goes. The fake dsh writes each agent's session log as dsh does
// (session-logs.js), and the oracle is `rtb replay` of those logs: every live verdict must be the
// replay's. Then the same with workers killed at some pauses: the journal must bring each
// replacement to the very state the lost worker had, so the verdicts are still the replay's.
//
// A first fuzz runs one agent's calls in orders dsh does not make (pre-executes batched, guards
// in any order), which a log cannot hold (it has no guards): there every live verdict must be the
// one the pure core gives the call at the position the shim gave it, the frames the shim sent
// replayed in order through a fresh Breaker (replay-frames.py).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { WorkerBridge } from '../worker/bridge.js';
import { apply } from '../index.js';
import { FakeDsh, makeAgent, userMessage } from './fake-dsh.js';
import { generator, isAlive, waitUntil } from './processes.js';
import { SessionLogs } from './session-logs.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const PACKAGE_ROOT = dirname(dirname(HERE));
const PYTHON = process.env.RTB_PYTHON || 'python3';
const disposers = [];
// apply returns a promise of its disposer (dsh awaits it): a hook run before it settles waits for the worker
after(async () => {
  for (const dispose of disposers) (await dispose)();
});

// Every frame a bridge sends, by bridge, in the order it sent them.
const sent = new Map();
const send = WorkerBridge.prototype.send;
WorkerBridge.prototype.send = function record(message, ...rest) {
  if (!sent.has(this)) sent.set(this, []);
  sent.get(this).push(message);
  return send.call(this, message, ...rest);
};


const COMMANDS = ['make test', 'cat notes.txt', 'curl -s https://example.org/api'];
// The calls the fuzz draws from: shell commands, and file and fetch calls that a promise by group
// may let through (breaker/core/reading/groups.py): one file named several ways, one path with no
// name of its own (loose), files read once each (their groups new to the window), the page the
// curl above fetches, named by two URL tools and once not plainly (loose), and pages fetched once.
const CALLS = [
  ...COMMANDS.map((command) => ['bash', { command }]),
  ['read', { file_path: 'notes.md' }],
  ['read', { file_path: './notes.md' }],
  ['read', { file_path: 'docs/../notes.md/', description: 'again' }],
  ['read', { file_path: '..' }],
  ['read', { file_path: 'fresh' }],
  ['read', { file_path: 'fresh' }],
  ['edit', { file_path: 'notes.md', old_string: 'a', new_string: 'b' }],
  ['web_fetch', { url: 'https://example.org/api', prompt: 'the status' }],
  ['WebFetch', { url: 'example.org/api/' }],
  ['web_fetch', { url: 'https://example.org/%61pi' }],
  ['web_fetch', { url: 'fresh' }],
];
/** A call of the fuzz: a file read once gets a path of its own (by its id). */
function drawn(dsh, random, agent, id) {
  const [tool, args] = random.pick(CALLS);
  if (args.url === 'fresh') return dsh.execution(agent, tool, { url: `https://example.org/pages/${id}` }, id);
  return dsh.execution(agent, tool, args.file_path === 'fresh' ? { file_path: `src/${id}.md` } : args, id);
}

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
      batch.push(drawn(dsh, random, agent, `${prefix}-${number}`));
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
// no-progress rules have something to stop), a curl and a fetch an answer of their own every time
// (so the caps on their keys do); a function of the call alone, whatever order the calls run in.
function answerOf(exec) {
  if (typeof exec.arguments.url === 'string') return `{"page": "${exec.callId}"}`;
  if (exec.name !== 'bash') return exec.arguments.file_path.startsWith('src/') ? `line of ${exec.callId}` : 'the same lines';
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
  bridge.idle.flush(); // the last calls on a pass, their sends deferred (worker/idle.js), go now
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

// One agent's session as dsh runs it: steps one after another, now and then with a human message
// (its first step's is the prompt); each step's calls as runGroup runs them (see the top).
async function dshSession(dsh, random, agent, prefix, calls, pause, messages) {
  const verdicts = new Map();
  let number = 0;
  while (number < calls) {
    await pause(random);
    await dsh.step(agent, number === 0 || random.int(messages) === 0 ? [userMessage(`${prefix}-${number}`)] : []);
    const batch = [];
    for (let size = 1 + random.int(messages === 4 ? 4 : 5); size > 0 && number < calls; size--, number++) {
      batch.push(drawn(dsh, random, agent, `${prefix}-${number}`));
    }
    await runStep(dsh, batch, () => pause(random), verdicts);
  }
  return verdicts;
}

// A step's calls: each logged and prepared (pre-execute, ask, guards) before the next; bodies at
// once; post-executes in the calls' order, as soon as a call and those before it are done.
async function runStep(dsh, batch, pause, verdicts) {
  const slots = [];
  const running = new Map();
  let committed = 0;
  const commitReady = async () => {
    while (committed < batch.length && slots[committed] !== undefined) {
      const outcome = await dsh.finish(slots[committed]);
      verdicts.set(batch[committed].callId, outcome.denied === undefined ? 'allow' : 'deny');
      committed++;
    }
  };
  for (let index = 0; index < batch.length; index++) {
    await pause();
    const prepared = await dsh.prepare(batch[index]);
    if (prepared.denied === undefined) {
      running.set(index, dsh.dispatch(prepared).then((done) => ((slots[index] = done), index)));
    } else {
      slots[index] = prepared;
    }
    await commitReady();
  }
  while (running.size > 0) {
    const settled = await Promise.race(running.values());
    running.delete(settled);
    await commitReady();
  }
}

// `rtb replay --format json` of the logs in `folder` under `config`: call id → its verdict.
function replayed(config, folder) {
  const configPath = join(folder, 'config.json');
  writeFileSync(configPath, JSON.stringify(config));
  const replay = spawnSync(PYTHON, ['-m', 'breaker', 'replay', '--format', 'json', '--config', configPath, join(folder, 'logs')], {
    cwd: PACKAGE_ROOT,
    env: { ...process.env, PYTHONPATH: PACKAGE_ROOT },
    maxBuffer: 64 * 1024 * 1024,
  });
  assert.equal(replay.status, 0, String(replay.stderr));
  const verdicts = new Map();
  for (const session of JSON.parse(String(replay.stdout)).sessions) {
    for (const call of session.verdicts) verdicts.set(call.callId, { allowed: 'allow', denied: 'deny' }[call.verdict] ?? call.verdict);
  }
  return verdicts;
}

// Three agents at a time run `sessions` sessions in one dsh that logs them as dsh does; every live
// verdict is compared with `rtb replay`'s of those logs. `messages`: one step in so many carries a
// human message (steps of up to 5 calls when more than one in four do).
async function logFuzz(config, seed, sessions, { kills = false, messages = 4 } = {}) {
  const folder = mkdtempSync(join(tmpdir(), 'rtb-interleavings-'));
  try {
    const own = (exec) => generator(seed + [...exec.callId].reduce((sum, char) => sum * 31 + char.charCodeAt(0), 0));
    let pause = async () => {};
    const body = (exec) => pause(own(exec)).then(() => answerOf(exec));
    const dsh = new FakeDsh({ body, logs: new SessionLogs(join(folder, 'logs'), `session-fuzz-${seed}-root`) });
    const before = new Set(sent.keys());
    disposers.push(apply(dsh.ctx, config));
    const [bridge] = [...sent.keys()].filter((candidate) => !before.has(candidate));
    pause = pauses(bridge, kills);
    const agents = []; // held to the end: a collected agent is forgotten by the worker, not in a log
    const live = new Map();
    for (let index = 0; index < sessions; index += 3) {
      const runs = [];
      for (let each = index; each < Math.min(sessions, index + 3); each++) {
        const random = generator(seed + each);
        const agent = makeAgent(`fuzz-${seed}-${each}`);
        agents.push(agent);
        runs.push(dshSession(dsh, random, agent, `s${each}`, 4 + random.int(7), pause, messages));
      }
      for (const verdicts of await Promise.all(runs)) for (const [call, verdict] of verdicts) live.set(call, verdict);
    }
    bridge.idle.flush(); // as in `fuzz`
    if (!kills) journalInOrder(bridge, sent.get(bridge).filter((frame) => frame.op !== 'configure' && frame.op !== 'stats'));
    const replay = replayed(config, folder);
    const differences = [...live].filter(([call, verdict]) => replay.get(call) !== verdict);
    return { calls: live.size, denied: [...live.values()].filter((verdict) => verdict === 'deny').length, differences, agents };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

// With maxAgents 2 the worker forgets one of the three agents at work again and again: fewer
// calls are denied (each agent comes back with a fresh window), the more the order must be right.
// Which agent goes depends only on the order of calls' first requests, which dsh's log keeps (not
// on results, which dsh logs a few microtasks after the shim sends them: agents.py).
// RTB_FUZZ_SEED runs it on another seed (the body's pauses and the worker's answers still vary
// the interleaving from run to run; the floors of calls denied are this seed's, each below the
// fewest of 14 runs: `make test` runs code, a possible change told by its answer, so a `cat`
// after its first answer is new and fewer calls are denied than when it read as read-only).
// With maxAgents 2 an agent is forgotten before most of its repeats come round: 0 to 4 calls
// denied, by interleaving, so those cases pin the verdicts alone. In a window of 4 a promise by
// group soon counts calls pushed out since its answer (20-40 calls a run go on so; 15 denied in
// each of 6 runs).
const SEED = Number(process.env.RTB_FUZZ_SEED ?? 20_26_12_04);
const CAPS = { limits: { exact: 3, cmd: 3, net: 3 }, sameResultLimit: 3 };
const SMALL = { window: 4, limits: { exact: 3, cmd: 3, net: 3 } };
for (const [name, config, fewest, messages] of [
  ['defaults', {}, 2, 4],
  ['caps of 3 and a same-result limit of 3', CAPS, 10, 4],
  ['caps of 3, a same-result limit of 3, a human message every other step', CAPS, 5, 2],
  ['maxAgents 2', { maxAgents: 2 }, 0, 4],
  ['maxAgents 2, caps of 3 and a same-result limit of 3', { maxAgents: 2, ...CAPS }, 0, 4],
  ['maxAgents 2, caps of 3, a same-result limit of 3, a human message every other step', { maxAgents: 2, ...CAPS }, 0, 2],
  ['a window of 4, caps of 3: which calls a call\'s window still holds decides its room', SMALL, 10, 4],
]) {
  test(`three agents at once as dsh runs them, steps with human messages: every live verdict is rtb replay's of dsh's logs (${name})`, async () => {
    const { calls, denied, differences } = await logFuzz(config, SEED, 30, { messages });
    assert.deepEqual(differences, [], `seed ${SEED}: ${differences.length} of ${calls} calls differ`);
    assert.ok(calls > 150, `seed ${SEED}: ${calls} calls`);
    if (fewest > 0) assert.ok(denied >= fewest, `seed ${SEED}: ${calls} calls, ${denied} denied`);
  });
}

test('workers killed between hooks: every live verdict is still rtb replay\'s of dsh\'s logs', async () => {
  // All agents held (maxAgents above them): a replacement rebuilds each agent from its journal on
  // its own, not the order in which the lost worker would have forgotten them.
  const config = { limits: { exact: 3, cmd: 3 }, sameResultLimit: 3 };
  const { calls, differences } = await logFuzz(config, 20_26_12_05, 24, { kills: true });
  assert.ok(calls > 120, `${calls} calls`);
  assert.deepEqual(differences, [], `${differences.length} of ${calls} calls differ`);
});

test('a call on a pass is committed where dsh logged it: another agent beginning before its guard does not make the worker forget it (maxAgents 2)', async () => {
  const config = { maxAgents: 2 };
  const folder = mkdtempSync(join(tmpdir(), 'rtb-interleavings-'));
  try {
    const dsh = new FakeDsh({ body: (exec) => `{"id": "${exec.callId}"}`, logs: new SessionLogs(join(folder, 'logs'), 'session-pass-root') });
    disposers.push(apply(dsh.ctx, config));
    const [a, b, c] = ['pass-a', 'pass-b', 'pass-c'].map(makeAgent);
    const read = (agent, id) => dsh.execution(agent, 'read', { file_path: 'notes.md' }, id);
    const live = new Map();
    const run = async (exec) => live.set(exec.callId, (await dsh.finish(await dsh.prepare(exec).then((p) => (p.denied === undefined ? dsh.dispatch(p) : p)))).denied === undefined ? 'allow' : 'deny');
    for (const agent of [a, b, c]) await dsh.step(agent, [userMessage(agent.id)]);
    for (const id of ['a1', 'a2', 'a3']) await run(read(a, id));
    await run(read(b, 'b1'));
    await new Promise((resolve) => setTimeout(resolve, 100)); // the answers that bring A's passes
    const fourth = read(a, 'a4');
    const decision = await dsh.preExecute(fourth); // on a pass: nothing waits for the worker
    const other = read(c, 'c1');
    const otherDecision = await dsh.preExecute(other); // C begins before A's guard runs
    live.set('a4', (await dsh.afterPreExecute(fourth, decision)).denied === undefined ? 'allow' : 'deny');
    live.set('c1', (await dsh.afterPreExecute(other, otherDecision)).denied === undefined ? 'allow' : 'deny');
    for (const id of ['a5', 'a6']) await run(read(a, id));
    const replay = replayed(config, folder);
    assert.deepEqual(Object.fromEntries(live), Object.fromEntries([...live.keys()].map((call) => [call, replay.get(call)])));
    assert.deepEqual([live.get('a5'), live.get('a6')], ['deny', 'deny']);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
