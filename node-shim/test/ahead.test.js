// The guard answered from the preflight's verdict (ahead.js): through the real shim and worker,
// every semantic stays what the blocking guard gave, and the guard blocks only when it must.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, test } from 'node:test';

import { AheadVerdicts } from '../call/ahead.js';
import { WorkerBridge } from '../worker/bridge.js';
import { decode } from '../worker/msgpack.js';
import { apply } from '../index.js';
import { FakeDsh, makeAgent, userMessage } from './fake-dsh.js';
import { childPids, isAlive, waitUntil, workerSettings } from './processes.js';

const SETTINGS = workerSettings();

const disposers = [];
// apply returns a promise of its disposer (dsh awaits it): a hook run before it settles waits for the worker
after(async () => {
  for (const dispose of disposers) (await dispose)();
});

function mount(config, options) {
  const dsh = new FakeDsh(options);
  disposers.push(apply(dsh.ctx, config));
  return dsh;
}

// The bridge each mount configured (its worker may have been started before `apply`, when the
// shim was loaded: children that are new after the mount do not tell which one it is).
let configuring;
const sendFrame = WorkerBridge.prototype.send;
WorkerBridge.prototype.send = function remember(message, ...rest) {
  if (message.op === 'configure') configuring = this;
  return sendFrame.call(this, message, ...rest);
};

// A mount and its bridge; `workerOf(bridge)` is the pid of the worker serving it now.
function mountWithWorker(config) {
  const dsh = mount(config);
  return { dsh, bridge: configuring };
}

function workerOf(bridge) {
  bridge.drain();
  return bridge.pid;
}

// Blocking round trips, counted at WorkerBridge.call, by op.
const blocking = [];
const call = WorkerBridge.prototype.call;
WorkerBridge.prototype.call = function countBlocking(message, ...rest) {
  blocking.push(message.op);
  return call.call(this, message, ...rest);
};
// Preflights (answered through the event loop), counted at WorkerBridge.ask.
let asked = 0;
const ask = WorkerBridge.prototype.ask;
WorkerBridge.prototype.ask = function countAsked(message, ...rest) {
  if (message.op === 'preflight') asked++;
  return ask.call(this, message, ...rest);
};

function blockingDuring(run) {
  const before = blocking.length;
  return Promise.resolve(run()).then((value) => ({ value, ops: blocking.slice(before) }));
}

const bash = (command) => ({ command, description: 'ahead' });
const allowed = (outcomes) => outcomes.map((outcome) => outcome.denied === undefined);

async function repeat(dsh, agent, times, args) {
  const outcomes = [];
  for (let index = 0; index < times; index++) outcomes.push(await dsh.call(agent, 'bash', args));
  return outcomes;
}

function workerPids() {
  return childPids().filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('breaker.worker');
    } catch {
      return false;
    }
  });
}

test('calls one after another never block the event loop, and the fifth repeat is still denied', async () => {
  const dsh = mount({});
  const agent = makeAgent('sequential');
  const { value, ops } = await blockingDuring(() => repeat(dsh, agent, 6, bash('cat notes.txt')));
  assert.deepEqual(allowed(value), [true, true, true, true, false, false]);
  assert.match(value[4].denied, /^REPEAT_TOOL_BLOCKED:[\s\S]*ran call-/, 'the denial quotes the previous result');
  assert.deepEqual(ops, []);
});

test('a call another listener denies after this preflight keeps no budget', async () => {
  const dsh = new FakeDsh();
  let veto = true;
  dsh.ctx.on('tools/pre-execute', async (exec, next) => {
    const decision = await next(); // runs this plugin's preflight, then overrides it
    return veto ? { kind: 'deny', reason: 'policy says no' } : decision;
  });
  disposers.push(apply(dsh.ctx, {}));
  const agent = makeAgent('vetoed');
  const vetoed = await repeat(dsh, agent, 8, bash('cat vetoed.txt'));
  assert.ok(vetoed.every((outcome) => outcome.denied === 'policy says no'));
  veto = false;
  assert.deepEqual(allowed(await repeat(dsh, agent, 5, bash('cat vetoed.txt'))), [true, true, true, true, false]);
});

test('a call an earlier guard denies keeps no budget', async () => {
  const dsh = new FakeDsh();
  let veto = true;
  dsh.ctx.tools.guard(() => (veto ? 'an earlier guard says no' : undefined));
  disposers.push(apply(dsh.ctx, {}));
  const agent = makeAgent('guarded');
  const denied = await repeat(dsh, agent, 8, bash('cat guarded.txt'));
  assert.ok(denied.every((outcome) => outcome.denied === 'an earlier guard says no'));
  veto = false;
  assert.deepEqual(allowed(await repeat(dsh, agent, 5, bash('cat guarded.txt'))), [true, true, true, true, false]);
});

// Three identical calls answered, then a step of three more that dsh pre-executes all before
// running their guards: their verdicts, and the guards that asked the worker (blocking).
async function parallelStep(body) {
  const dsh = mount({}, { body });
  const agent = makeAgent('parallel');
  await repeat(dsh, agent, 3, bash('cat parallel.txt'));
  const execs = [0, 1, 2].map(() => dsh.execution(agent, 'bash', bash('cat parallel.txt')));
  const decisions = await Promise.all(execs.map((exec) => dsh.preExecute(exec)));
  const { value, ops } = await blockingDuring(() =>
    Promise.all(execs.map((exec, index) => dsh.afterPreExecute(exec, decisions[index]))),
  );
  return { verdicts: allowed(value), ops };
}

// The core's verdicts for both are the 4th allowed, the 5th and 6th denied; the answer to the 1st
// call promised the 2nd to the 4th on condition that each result is news.
test('several calls of one agent pre-executed before their guards: after answers that differ the 4th goes on its conditional pass, the 5th by its preflight, only the 6th asks', async () => {
  const { verdicts, ops } = await parallelStep((exec) => `ran ${exec.callId}`);
  assert.deepEqual(verdicts, [true, false, false], 'the 4th runs, the 5th and 6th are denied');
  // The 4th is committed at its pre-execute, before the 5th's preflight: the 5th's guard uses it;
  // the 5th's commit came before the 6th's guard, which asks.
  assert.deepEqual(ops, ['guard']);
});

// The first result went without its reply asked for (the first answer's passes left two more):
// the 4th to the 6th wait for the 3rd result's answer, which brings one pass, the 4th's.
test('several calls of one agent pre-executed before their guards: after alike answers (no conditional pass) the 4th goes on the pass the last answer brings, the 5th by its preflight, only the 6th asks', async () => {
  const { verdicts, ops } = await parallelStep(() => 'ran');
  assert.deepEqual(verdicts, [true, false, false], 'the 4th runs, the 5th and 6th are denied');
  assert.deepEqual(ops, ['guard'], "the 5th's guard uses its preflight; the 5th's commit came before the 6th's guard, which asks");
});

test('a call that reaches the guard without this preflight gets a blocking round trip, as before', async () => {
  const dsh = mount({});
  const agent = makeAgent('no-preflight');
  const exec = (n) => dsh.execution(agent, 'bash', bash('cat direct.txt'), `direct-${n}`);
  const { value, ops } = await blockingDuring(() => [0, 1, 2, 3, 4].map((n) => dsh.guardReason(exec(n))));
  assert.deepEqual(value.map((reason) => reason === undefined), [true, true, true, true, false]);
  assert.deepEqual(ops, ['guard', 'guard', 'guard', 'guard', 'guard']);
});

// A mount whose agent made `before` calls, then pre-executed `alongside` (each took a pass or was
// preflighted) and `args`, together as the calls of one model turn; its worker is then killed.
// Returns how many preflights the pre-execute of `args` sent (0: it took a pass).
async function preExecutedThenKilled(name, before, args, alongside = []) {
  const { dsh, bridge } = mountWithWorker({ preset: 'seed' }); // the caps alone
  const agent = makeAgent(name);
  for (const call of before) await dsh.call(agent, 'bash', call);
  const worker = workerOf(bridge);
  const others = alongside.map((call) => dsh.execution(agent, 'bash', call));
  const othersDecided = others.map((other) => dsh.preExecute(other));
  const exec = dsh.execution(agent, 'bash', args);
  const preflightsBefore = asked;
  const decision = await dsh.preExecute(exec);
  const preflights = asked - preflightsBefore;
  const turn = await Promise.all(othersDecided);
  process.kill(worker, 'SIGKILL');
  assert.ok(await waitUntil(() => !isAlive(worker)));
  return { dsh, worker, agent, exec, decision, preflights, others: others.map((other, index) => [other, turn[index]]) };
}

test('a worker killed between a preflight and its guard: the verdict stands and the window survives', async () => {
  // After three repeats the answer to the last result promises one more call; another call of
  // the turn takes that pass, so the repeat is preflighted, and its verdict kept.
  const before = Array(3).fill(bash('cat survive.txt'));
  const { dsh, worker, agent, exec, decision, preflights, others } =
    await preExecutedThenKilled('killed-between', before, bash('cat survive.txt'), [bash('ls')]);
  assert.equal(preflights, 1, 'no pass was left: the call was preflighted');
  const fourth = await dsh.afterPreExecute(exec, decision);
  assert.equal(fourth.denied, undefined, 'the 4th call ran on the verdict its preflight carried');
  for (const [other, otherDecision] of others) assert.equal((await dsh.afterPreExecute(other, otherDecision)).denied, undefined);
  const fifth = await dsh.call(agent, 'bash', bash('cat survive.txt'));
  assert.match(fifth.denied ?? '', /^REPEAT_TOOL_BLOCKED:/, 'the replacement counted all four');
  assert.ok(!workerPids().includes(worker));
});

test('a worker lost before the guard is known to be lost: the guard asks the replacement', async () => {
  const { dsh, bridge } = mountWithWorker({});
  const agent = makeAgent('replaced-first');
  const other = makeAgent('replaced-other');
  await repeat(dsh, agent, 4, bash('cat replaced.txt'));
  const worker = workerOf(bridge);
  const exec = dsh.execution(agent, 'bash', bash('cat replaced.txt'));
  const decision = await dsh.preExecute(exec);
  process.kill(worker, 'SIGKILL');
  assert.ok(await waitUntil(() => !isAlive(worker)));
  await dsh.call(other, 'bash', bash('ls')); // this call finds the worker gone and replaces it
  const { value, ops } = await blockingDuring(() => dsh.afterPreExecute(exec, decision));
  assert.match(value.denied ?? '', /^REPEAT_TOOL_BLOCKED:/);
  assert.deepEqual(ops, ['guard']);
});

test('a human message between a preflight and its guard: the guard decides afresh', async () => {
  const dsh = mount({});
  const agent = makeAgent('human-between');
  await repeat(dsh, agent, 4, bash('cat human.txt'));
  const exec = dsh.execution(agent, 'bash', bash('cat human.txt'));
  const decision = await dsh.preExecute(exec);
  await dsh.step(agent, [userMessage('start over')]);
  const { value, ops } = await blockingDuring(() => dsh.afterPreExecute(exec, decision));
  assert.equal(value.denied, undefined, 'a fresh window: the preflight said deny, the guard allows');
  assert.deepEqual(ops, ['guard']);
});

test('an approved ask reaches the guard, which counts it as the approval', async () => {
  const dsh = mount({}, { approval: 'allowed-once' });
  const agent = makeAgent('approved');
  const local = (n) => bash(`curl -s http://localhost:8080/health | head -c ${n + 1}`);
  for (let n = 0; n < 4; n++) await dsh.call(agent, 'bash', local(n));
  const { value, ops } = await blockingDuring(() => dsh.call(agent, 'bash', local(4)));
  assert.ok(value.asked);
  assert.equal(value.denied, undefined);
  assert.deepEqual(ops, ['guard'], 'an asked call has no verdict kept: its guard is a round trip');
});

test('a call preflighted before its agent is forgotten for others (maxAgents) keeps its verdict: the guard asks, and denies', async () => {
  const dsh = mount({ maxAgents: 2 });
  const agent = makeAgent('evictable');
  await repeat(dsh, agent, 4, bash('cat evict.txt'));
  const exec = dsh.execution(agent, 'bash', bash('cat evict.txt'));
  const decision = await dsh.preExecute(exec); // the worker would deny this 5th repeat now
  for (const other of ['evictor-1', 'evictor-2']) await dsh.call(makeAgent(other), 'bash', bash('ls'));
  const { value, ops } = await blockingDuring(() => dsh.afterPreExecute(exec, decision));
  assert.deepEqual(ops, ['guard'], 'two agents came since: the shim cannot tell, so it asks');
  assert.equal(typeof value.denied, 'string', 'the worker kept the verdict the preflight gave, its agent forgotten since: denied, as rtb replay says');
});

test('calls the worker promised to allow ask it nothing: distinct calls one after another send one preflight', async () => {
  const dsh = mount({ preset: 'seed' }); // the caps alone: each key counts one a call
  const agent = makeAgent('promised');
  const before = asked;
  const { value, ops } = await blockingDuring(async () => {
    const outcomes = [];
    for (let n = 0; n < 12; n++) outcomes.push(await dsh.call(agent, 'bash', bash(`cat promised-${n}.txt`)));
    return outcomes;
  });
  assert.ok(allowed(value).every(Boolean));
  assert.deepEqual(ops, []);
  // The first call is preflighted; the answer to each result promises more, so each later call
  // finds a pass.
  assert.equal(asked - before, 1, 'the first call alone was preflighted');
  const repeats = await repeat(dsh, agent, 5, bash('cat promised-11.txt'));
  assert.deepEqual(allowed(repeats), [true, true, true, false, false], 'passes never let a fifth repeat through');
});

test('a large call goes through on a pass too, and its journal keeps the stand-in the answer to its guard brings', async () => {
  const { dsh, bridge } = mountWithWorker({});
  const agent = makeAgent('large-passes');
  const before = asked;
  const content = (n) => `# file ${n}\n${'x = compute(values)\n'.repeat(4000)}`; // 80 KB: counted by its digest
  for (let n = 0; n < 4; n++) {
    const outcome = await dsh.call(agent, 'write', { path: `big-${n}.py`, content: content(n) });
    assert.equal(outcome.denied, undefined);
  }
  assert.equal(asked - before, 1, 'only the first call was preflighted');
  // The journal of the mount's one agent: every write (a call let through on a pass is sent, and
  // journaled, once the event loop is idle) by its stand-in once the answers are in.
  const writes = () => bridge.replay(1).requests.filter((request) => request.op === 'guard');
  assert.ok(await waitUntil(() => writes().length === 4 && bridge.replay(1).weight < 20_000), `${bridge.replay(1).weight} bytes journaled`);
});

test('a call on a pass is committed at its pre-execute: an answer to any later request counts it', () => {
  const ahead = new AheadVerdicts(100, SETTINGS.operations);
  const agent = AheadVerdicts.agent(1);
  for (let n = 0; n < 3; n++) ahead.committing(agent, 'guard');
  ahead.granted(agent, 3, 1, 7); // the answer to a request sent after three commits: one more
  const first = {};
  assert.ok(ahead.reserve(first, agent, 7));
  assert.equal(agent.committed, 4, 'committed at once (sent before any later request)');
  assert.ok(!ahead.reserve({}, agent, 7), 'that one promise is the first call\'s');
  ahead.granted(agent, agent.committed, 1, 7); // a request sent now: the worker has the first call
  assert.ok(ahead.reserve({}, agent, 7));
  assert.equal(agent.spent, 5);
  assert.ok(!ahead.reserve({}, agent, 7));
});

test('a call on a pass is let through by its guard whatever ran since its pre-execute, once', () => {
  const ahead = new AheadVerdicts(100, SETTINGS.operations);
  const agent = AheadVerdicts.agent(1);
  ahead.granted(agent, 0, 1, 7); // one more call surely passes
  const first = {};
  assert.ok(ahead.reserve(first, agent, 7));
  ahead.committing(agent, 'guard'); // another call's guard ran first: it comes after this one
  assert.ok(ahead.usePass(first), 'committed at its pre-execute: the guard lets it through');
  assert.ok(!ahead.usePass(first), 'taken');
  assert.ok(!ahead.usePass({}), 'a call that took no pass is decided at its guard');
});

test("a result's answer brings passes counted from the calls committed when it was sent; a lost worker's brings none", async () => {
  const ahead = new AheadVerdicts(100, SETTINGS.operations);
  const agent = AheadVerdicts.agent(1);
  ahead.committing(agent, 'guard');
  const answer = ahead.refreshing(agent, agent.committed, 7);
  const waiting = ahead.nextReply(agent);
  assert.ok(waiting, 'on its way: a pre-execute that finds no pass waits for it');
  assert.ok(!ahead.reserve({}, agent, 7), 'no pass before it comes');
  answer({ ok: true, passes: 1 });
  await waiting;
  assert.equal(ahead.nextReply(agent), null, 'none on its way any more');
  assert.ok(ahead.reserve({}, agent, 7), 'one more call than the one committed when it was sent');
  assert.ok(!ahead.reserve({}, agent, 7));
  const lost = ahead.refreshing(agent, agent.committed, 7);
  const waitingLost = ahead.nextReply(agent);
  lost(new Error('the worker was stopped'));
  await waitingLost;
  assert.equal(ahead.nextReply(agent), null, 'a lost answer is waited for no more');
  assert.ok(!ahead.reserve({}, agent, 7), 'and grants nothing');
});

test('a pass belongs to the worker that gave it', () => {
  const ahead = new AheadVerdicts(100, SETTINGS.operations);
  const agent = AheadVerdicts.agent(1);
  ahead.granted(agent, 0, 4, 1);
  assert.ok(!ahead.reserve({}, agent, 2), 'a replacement gave nothing yet');
  assert.ok(ahead.reserve({}, agent, 1), 'the worker that gave it');
});

test('a worker killed between a pre-execute that took a pass and its guard: the call runs and the window survives', async () => {
  const before = Array(2).fill(bash('cat pass.txt'));
  const { dsh, agent, exec, decision, preflights } =
    await preExecutedThenKilled('killed-after-pass', before, bash('cat pass.txt'));
  assert.equal(preflights, 0, 'the call took a pass');
  const { value: third, ops } = await blockingDuring(() => dsh.afterPreExecute(exec, decision));
  assert.equal(third.denied, undefined);
  assert.deepEqual(ops, [], 'a promise of the lost worker holds: the call goes to the replacement as an event');
  const after = await repeat(dsh, agent, 3, bash('cat pass.txt'));
  assert.deepEqual(allowed(after), [true, false, false], 'the replacement counted all three');
});

test('a call let through on a pass writes nothing while it runs: its event and its result go out together once the loop is idle, before any later request', async () => {
  const { dsh, bridge } = mountWithWorker({});
  const agent = makeAgent('idle-writes');
  await dsh.call(agent, 'bash', bash('cat idle-0.txt')); // preflighted
  assert.ok(await waitUntil(() => bridge.idle.size === 0 && bridge.awaiting.size === 0));
  const writes = [];
  const write = bridge.write;
  bridge.write = function recordWrite(frames) {
    const ops = []; // the frames of one write: each a 4-byte length, then the request
    const view = new DataView(frames.buffer, frames.byteOffset, frames.byteLength);
    for (let at = 0; at < frames.length; at += 4 + view.getUint32(at)) {
      ops.push(decode(frames.subarray(at + 4, at + 4 + view.getUint32(at))).op);
    }
    writes.push(ops);
    return write.call(this, frames);
  };
  try {
    const before = asked;
    // The default body answers at once: the whole call runs without a turn of the event loop.
    const outcome = await dsh.call(agent, 'bash', bash('cat idle-1.txt'));
    assert.equal(outcome.denied, undefined);
    assert.equal(asked, before, 'it went through on a pass');
    assert.deepEqual(writes, [], 'nothing was written while the call ran');
    // Another agent's request now: what waited goes out first, in the order it was made.
    await dsh.call(makeAgent('idle-other'), 'bash', bash('ls'));
    assert.deepEqual(writes[0], ['guard', 'result']);
    assert.deepEqual(writes[1], ['preflight']);
  } finally {
    bridge.write = write;
  }
});
