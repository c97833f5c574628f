// A pre-execute that finds no pass while answers to its agent's results are on their way waits
// for them (call/hooks.js, call/ahead.js `nextReply`): it wakes at each answer, since the worker
// answers the results in order and an earlier one's answer may bring the pass the call needs
// before the latest one's comes. The worker here is a scripted bridge whose answers the test
// gives one at a time, so what the pre-execute does between two answers can be seen.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { CallHooks } from '../call/hooks.js';
import { Journal } from '../call/journal.js';
import { IdleSends } from '../worker/idle.js';
import { workerSettings } from './processes.js';

const SETTINGS = workerSettings();
const allow = () => Promise.resolve({ kind: 'allow' });

/** A worker bridge whose every answer the test gives: the frames it was sent, in order; the
 * awaited replies, oldest first, each taken by `answer`. */
class ScriptedBridge {
  constructor() {
    this.idle = new IdleSends((line) => assert.fail(line), undefined, 60_000); // deferred: until the next send
    this.generation = 1;
    this.later = true; // answers come through the event loop
    this.frames = [];
    this.replies = [];
    this.sentWaiters = [];
  }

  record(message) {
    this.idle.flush(); // what waits for an idle moment goes before any request, as bridge.js does
    this.frames.push(`${message.op} ${message.agent} ${message.call ?? ''}`.trim());
    for (const waiter of this.sentWaiters.splice(0)) waiter();
  }

  notify(message) {
    this.record(message);
  }

  askThen(message, since, patient, resolve) {
    this.record(message);
    this.replies.push({ op: message.op, call: message.call, resolve });
  }

  ask(message) {
    return new Promise((resolve) => this.askThen(message, undefined, false, resolve));
  }

  call(message) {
    assert.fail(`no call here asks the worker and blocks (${message.op})`);
  }

  /** The oldest awaited reply is `reply` (an answer, or the error of a lost worker). */
  answer(op, reply) {
    const awaited = this.replies.shift();
    assert.equal(awaited?.op, op, `the next reply awaited answers a ${op}`);
    awaited.resolve(reply);
  }

  /** Settled once some frame is sent. */
  sent() {
    return new Promise((resolve) => this.sentWaiters.push(resolve));
  }
}

/** The shim's hooks over a scripted worker, and a way to run one agent's calls through them. */
function mount() {
  const bridge = new ScriptedBridge();
  const journal = new Journal(SETTINGS);
  const hooks = new CallHooks({ bridge, journal, settings: SETTINGS, plugin: 'rtb', log: assert.fail, logOnce: assert.fail });
  let number = 0;
  const execution = (agent) => ({ callId: `c${++number}`, name: 'read', arguments: { path: `f${number}.txt` }, agent });
  const done = (exec, text, isError = false) => hooks.postExecute(exec, { content: [{ type: 'text', text }], isError }, allow);
  return { bridge, hooks, execution, done };
}

/** Whether `promise` is settled once the microtasks queued now have run (no turn of the event loop). */
async function settledNow(promise) {
  const pending = {};
  const first = await Promise.race([promise, new Promise((resolve) => setImmediate(() => resolve(pending)))]);
  return first !== pending;
}

/** A call's pre-execute that sends a preflight, answered with `answer`: its decision. */
async function preflighted({ bridge, hooks }, exec, answer) {
  const sent = bridge.sent();
  const decided = hooks.preExecute(exec, allow);
  await sent;
  bridge.answer('preflight', answer);
  return decided;
}

/**
 * One agent's first call preflighted and promised one more call (its answer: `passes` 2, the
 * call's own and the next), both calls done, their results awaited; then a third call's
 * pre-execute, which finds no pass. Returns it on its way (`decided`).
 */
async function thirdCallWaits(secondResult = { text: 'line 2' }, shim = mount()) {
  const { bridge, hooks, execution, done } = shim;
  const agent = {};
  const first = execution(agent);
  assert.equal((await preflighted(shim, first, { ok: true, decided: true, passes: 2 })).kind, 'allow');
  assert.equal(hooks.guard(first), undefined, 'the verdict its preflight kept');
  await done(first, 'line 1');
  const second = execution(agent);
  assert.equal((await hooks.preExecute(second, allow)).kind, 'allow');
  assert.equal(hooks.guard(second), undefined);
  await done(second, secondResult.text, secondResult.isError);
  const third = execution(agent);
  const decided = hooks.preExecute(third, allow);
  assert.ok(!(await settledNow(decided)), 'no pass yet: it waits for the answers');
  assert.deepEqual(bridge.replies.map((reply) => reply.op), ['result', 'result'], 'both results went out, their answers awaited');
  return { ...shim, agent, third, decided };
}

const preflights = (bridge) => bridge.frames.filter((frame) => frame.startsWith('preflight')).length;

test("a waiting pre-execute goes through on the pass an earlier result's answer brings, before the latest result's answer comes", async () => {
  const { bridge, hooks, third, decided } = await thirdCallWaits();
  bridge.answer('result', { ok: true, passes: 2 }); // the first result's: two more calls from the one committed then
  assert.ok(await settledNow(decided), 'woken by that answer');
  assert.equal((await decided).kind, 'allow');
  assert.equal(bridge.replies.length, 1, "the latest result's answer is still on its way");
  assert.equal(preflights(bridge), 1, 'only the first call was preflighted: the third took a pass');
  assert.equal(hooks.guard(third), undefined, 'and its guard lets it through');
  bridge.idle.flush();
  assert.equal(bridge.frames.at(-1), 'guard 1 c3', 'the call on a pass goes to the worker, committed');
});

test('a waiting pre-execute keeps waiting when an answer brings no pass, and takes the one a later answer brings', async () => {
  const { bridge, decided } = await thirdCallWaits();
  bridge.answer('result', { ok: true }); // the worker read both results at once: the last answer brings the passes
  assert.ok(!(await settledNow(decided)), 'still waiting');
  assert.equal(preflights(bridge), 1, 'nothing asked meanwhile');
  bridge.answer('result', { ok: true, passes: 1 }); // from the two calls committed when it was sent
  assert.equal((await decided).kind, 'allow');
  assert.equal(preflights(bridge), 1, 'the third call took a pass');
});

test("a pre-execute whose agent's last answer brings no pass preflights at its place: before what was made to wait after it", async () => {
  // Another agent's call, let through before the third call began to wait, is done while it
  // waits: its result waits for an idle moment, after the third call's place.
  const shim = mount();
  const other = shim.execution({});
  await preflighted(shim, other, { ok: true, decided: true, passes: 1 });
  assert.equal(shim.hooks.guard(other), undefined);
  const { bridge, done, decided } = await thirdCallWaits(undefined, shim);
  await done(other, 'another file');
  const preflightSent = bridge.sent();
  bridge.answer('result', { ok: true });
  bridge.answer('result', { ok: true, passes: 0 }); // the third call is not promised
  await preflightSent;
  assert.deepEqual(bridge.frames.slice(-2), ['preflight 2 c4', 'result 1 c1'], "the preflight went first, at the call's place");
  bridge.answer('preflight', { ok: true, decided: true, passes: 1 });
  assert.equal((await decided).kind, 'allow', 'the verdict its preflight brought');
});

test('a lost worker ends the wait: the pre-execute preflights (to its successor)', async () => {
  const { bridge, decided } = await thirdCallWaits();
  const preflightSent = bridge.sent();
  bridge.answer('result', new Error('the worker was lost'));
  bridge.answer('result', new Error('the worker was lost'));
  await preflightSent;
  assert.equal(bridge.frames.at(-1), 'preflight 1 c3');
  bridge.answer('preflight', { ok: true, decided: true, passes: 1 });
  assert.equal((await decided).kind, 'allow');
});

test('a call cannot go through on a condition a later result did not meet: an earlier answer\'s conditional pass is checked against it, and the call waits', async () => {
  // The first result's answer promises three calls while the results sent after it are news.
  const conditional = { ok: true, passes: 0, conditional: { passes: 3, digests: [] } };
  const news = await thirdCallWaits({ text: 'line 2' });
  news.bridge.answer('result', conditional);
  assert.equal((await news.decided).kind, 'allow');
  assert.equal(preflights(news.bridge), 1, 'the second result is news: the third call took the conditional pass');

  const failed = await thirdCallWaits({ text: 'Error: no such file', isError: true });
  failed.bridge.answer('result', conditional);
  assert.ok(!(await settledNow(failed.decided)), 'the second result broke the condition: still waiting');
  const preflightSent = failed.bridge.sent();
  failed.bridge.answer('result', { ok: true, passes: 0 });
  await preflightSent;
  assert.equal(failed.bridge.frames.at(-1), 'preflight 1 c3', 'no pass: the worker decides it');
  failed.bridge.answer('preflight', { ok: true, decided: true, passes: 0, deny: 'stopped' });
  assert.equal((await failed.decided).kind, 'allow');
  assert.equal(failed.hooks.guard(failed.third), 'stopped', "the worker's verdict, not a pass");
});

/** Once the event loop has been idle a few times (0 ms timers fired), well within DEFER_MS. */
const idleMoments = () => new Promise((resolve) => setTimeout(resolve, 20));

/** One agent's first call preflighted and promised `passes` calls (its own and the next), and
 * `conditional` ones when given, done. */
async function firstCallDone(passes, conditional = undefined) {
  const shim = mount();
  const agent = {};
  const first = shim.execution(agent);
  assert.equal((await preflighted(shim, first, { ok: true, decided: true, passes, conditional })).kind, 'allow');
  assert.equal(shim.hooks.guard(first), undefined);
  await shim.done(first, 'line 1');
  await idleMoments();
  return { ...shim, agent };
}

test('a result sent while its agent has two passes left or more goes without its reply asked for, and waits with the calls on a pass for the next send that must go', async () => {
  const { bridge, hooks, execution, done, agent } = await firstCallDone(4); // three passes left
  assert.deepEqual(bridge.frames, ['preflight 1 c1', 'commit 1 c1'], 'nothing woke the worker for the result');
  for (const text of ['line 2', 'line 3']) {
    const next = execution(agent);
    assert.equal((await hooks.preExecute(next, allow)).kind, 'allow', 'on a pass');
    assert.equal(hooks.guard(next), undefined);
    await done(next, text);
    await idleMoments();
    if (text === 'line 2') assert.equal(bridge.frames.length, 2, 'the second call, on a pass, and its result (two passes left) wait too');
  }
  // The third call's result left one pass: it asks for its reply, and what waited goes before it.
  assert.deepEqual(bridge.frames, ['preflight 1 c1', 'commit 1 c1', 'result 1 c1', 'guard 1 c2', 'result 1 c2', 'guard 1 c3', 'result 1 c3']);
  assert.deepEqual(bridge.replies.map((reply) => reply.op), ['result'], 'one reply awaited: the last result\'s');
});

test('while an answer to its results is on its way, a call of the agent on a pass waits too, for the next send that must go', async () => {
  const { bridge, hooks, execution, agent } = await firstCallDone(2); // one pass left: the result asks for its answer
  assert.deepEqual(bridge.replies.map((reply) => reply.op), ['result'], 'its answer is on its way');
  const second = execution(agent);
  assert.equal((await hooks.preExecute(second, allow)).kind, 'allow', 'on the pass left');
  await idleMoments();
  assert.equal(bridge.frames.at(-1), 'result 1 c1', 'not sent for an idle moment alone');
  bridge.idle.flush();
  assert.equal(bridge.frames.at(-1), 'guard 1 c2', 'it goes with the next send, in its place');
});

/** One agent's first call promised no further call but by group (a window of no groups, a
 * room of 4), done: its result waits. */
const groupedFirstCallDone = () => firstCallDone(1, { passes: 1, digests: [], groups: [], window: [], room: 4 });

/** A call of `agent` on a pass, done with `text`. */
async function onPass({ hooks, execution, done }, agent, text) {
  const exec = execution(agent);
  assert.equal((await hooks.preExecute(exec, allow)).kind, 'allow', 'on a pass');
  assert.equal(hooks.guard(exec), undefined);
  await done(exec, text);
}

test('the results of a run of calls that go by their group ask for one reply: the latest as it goes out', async () => {
  const shim = await groupedFirstCallDone();
  const { bridge, agent } = shim;
  await onPass(shim, agent, 'line 2'); // no pass left but by its group
  await onPass(shim, agent, 'line 3');
  await idleMoments();
  assert.deepEqual(bridge.frames, ['preflight 1 c1', 'commit 1 c1'], 'the results wait with the calls on a pass');
  bridge.idle.flush(); // the next send that must go, or DEFER_MS
  assert.deepEqual(bridge.frames.slice(2), ['result 1 c1', 'guard 1 c2', 'result 1 c2', 'guard 1 c3', 'result 1 c3']);
  assert.deepEqual(bridge.replies.map(({ op, call }) => `${op} ${call}`), ['result c3'], 'the earlier results went as events');
});

test('while the answer a late result asked for is on its way, the next such results go as events; once it came, the latest asks again', async () => {
  const shim = await groupedFirstCallDone();
  const { bridge, agent } = shim;
  bridge.idle.flush();
  assert.deepEqual(bridge.replies.map(({ call }) => call), ['c1'], 'the one result waiting asked');
  await onPass(shim, agent, 'line 2');
  bridge.idle.flush();
  assert.equal(bridge.frames.at(-1), 'result 1 c2');
  assert.equal(bridge.replies.length, 1, 'an answer was on its way: no second ask');
  bridge.answer('result', { ok: true, passes: 0, conditional: { passes: 0, digests: [], groups: [], window: [], room: 4 } });
  await onPass(shim, agent, 'line 3');
  bridge.idle.flush();
  assert.deepEqual(bridge.replies.map(({ call }) => call), ['c3'], 'no answer on its way: the latest asks');
});

test('a result that breaks the condition does not wait to ask: it asks at the next idle moment', async () => {
  const shim = await groupedFirstCallDone();
  const { bridge, agent } = shim;
  await onPass(shim, agent, 'Error: no such file');
  await idleMoments();
  assert.deepEqual(bridge.replies.map(({ call }) => call), ['c2'], 'the promise by group is over: its reply is asked for at once');
  assert.deepEqual(bridge.frames.slice(-3), ['result 1 c1', 'guard 1 c2', 'result 1 c2'], 'what waited went before it, the earlier result as an event');
});
