// The journal's bounds, and the long-session soak in small: agents created and dropped are
// forgotten by the worker through the FinalizationRegistry.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { WorkerBridge } from '../worker/bridge.js';
import { apply } from '../index.js';
import { JOURNAL_BYTES, Journal } from '../call/journal.js';
import { workerSettings } from './processes.js';

const { operations } = workerSettings();

const guardOf = (agent, call) => ({ op: 'guard', agent, call, name: 'bash', args: { command: 'ls' } });
const resultOf = (agent, call) => ({ op: 'result', agent, call, text: 'ok' });

test('the journal holds the last `window` guards per agent and what came after the oldest', () => {
  const journal = new Journal({ window: 4, maxAgents: 100, operations });
  for (let index = 0; index < 1000; index++) {
    journal.guard(guardOf(1, `c${index}`), 1);
    journal.result(resultOf(1, `c${index}`), 1);
  }
  journal.result(resultOf(1, 'c1'), 1); // about a call long gone: changes nothing, not kept
  const kept = journal.of(1).requests;
  assert.deepEqual(kept.map((request) => `${request.op}:${request.call}`),
    ['guard:c996', 'result:c996', 'guard:c997', 'result:c997', 'guard:c998', 'result:c998', 'guard:c999', 'result:c999']);
  journal.asked({ op: 'preflight', agent: 1, call: 'c1000' }, 1);
  journal.result(resultOf(1, 'c1000'), 1); // the declined ask settles: kept
  assert.equal(journal.of(1).requests.length, 10);
  journal.drop(1);
  assert.equal(journal.of(1).requests.length, 0);
});

test("a call journaled as sent is kept as its stand-in once the worker gives one, unless it left the journal", () => {
  const journal = new Journal({ window: 2, maxAgents: 100, operations });
  const large = journal.guard(guardOf(1, 'big'), 1000);
  journal.restate(1, large, { ...guardOf(1, 'big'), args: { command: 'cat <digest>' } }, 40);
  assert.deepEqual(journal.of(1), { requests: [{ ...guardOf(1, 'big'), args: { command: 'cat <digest>' } }], weight: 40 });
  assert.equal(journal.bytes, 40);
  const gone = journal.guard(guardOf(1, 'big2'), 1000);
  journal.guard(guardOf(1, 'c1'), 1);
  journal.guard(guardOf(1, 'c2'), 1); // big2 left the window
  journal.restate(1, gone, guardOf(1, 'big2'), 40);
  assert.deepEqual(journal.of(1).requests.map((request) => request.call), ['c1', 'c2']);
  assert.equal(journal.bytes, 2);
});

test('calls let through on a pass whose stand-ins are on their way are not pushed out for bytes the stand-ins give back', () => {
  const journal = new Journal({ window: 16, maxAgents: 100, operations }, 1000);
  journal.guard(guardOf(1, 'c0'), 40); // a preflighted call, by its stand-in
  const owed = [1, 2, 3].map((n) => journal.guard(guardOf(1, `c${n}`), 600, 'guard', true));
  assert.deepEqual(journal.of(1).requests.map((request) => request.call), ['c0', 'c1', 'c2', 'c3'], 'all kept while owed');
  owed.forEach((entry, n) => journal.restate(1, entry, guardOf(1, `c${n + 1}`), 40));
  assert.deepEqual(journal.of(1), { requests: [0, 1, 2, 3].map((n) => guardOf(1, `c${n}`)), weight: 160 });
  assert.equal(journal.owed, 0);
  // A stand-in that will not come (the answer failed): the call weighs as sent, and the next guard trims.
  const lost = [4, 5].map((n) => journal.guard(guardOf(1, `c${n}`), 600, 'guard', true));
  lost.forEach((entry) => journal.unowed(entry));
  journal.guard(guardOf(1, 'c6'), 40);
  assert.ok(journal.bytes <= 1000, `${journal.bytes} bytes journaled`);
  assert.deepEqual(journal.of(1).requests.map((request) => request.call), ['c5', 'c6']);
});

test('the journal forgets its idlest agent past maxAgents, as the core does', () => {
  const journal = new Journal({ window: 4, maxAgents: 3, operations });
  for (const agent of [1, 2, 3, 1, 4]) journal.guard(guardOf(agent, `c${agent}`), 1);
  assert.deepEqual([...journal.agents.keys()], [3, 1, 4]);
});

test('the journal forgets its idlest agent past maxAgents though a call of it awaits its result, as the core does', () => {
  const journal = new Journal({ window: 4, maxAgents: 2, operations });
  journal.guard(guardOf(1, 'a0'), 1); // its result is still to come
  journal.guard(guardOf(2, 'b0'), 1);
  journal.result(resultOf(2, 'b0'), 1); // a result moves no agent, nor keeps one
  journal.guard(guardOf(3, 'c0'), 1);
  assert.deepEqual([...journal.agents.keys()], [2, 3]);
  journal.result(resultOf(1, 'a0'), 1); // of an agent forgotten: nothing is kept, nothing made
  assert.deepEqual([...journal.agents.keys()], [2, 3]);
});

test('the journal is bounded in bytes: 100 agents writing 12 files of 1 MB keep at most JOURNAL_BYTES', () => {
  const journal = new Journal({ window: 12, maxAgents: 10_000, operations });
  const megabyte = 1024 * 1024;
  for (let agent = 1; agent <= 100; agent++) {
    for (let write = 0; write < 12; write++) journal.guard(guardOf(agent, `w${write}`), megabyte);
  }
  assert.ok(journal.bytes <= JOURNAL_BYTES, `${journal.bytes} bytes journaled`);
  const held = [...journal.agents.values()].reduce((total, agent) => total + agent.bytes, 0);
  assert.equal(held, journal.bytes, 'the running total is the sum of what is held');
  assert.equal(journal.of(100).requests.length, 12, 'the most recent agent keeps its whole window');
  assert.equal(journal.of(1).requests.length, 0, 'the idlest ones went first');
  // One agent heavier than the bound alone keeps its newest requests.
  const single = new Journal({ window: 12, maxAgents: 10, operations }, 3 * megabyte);
  for (let write = 0; write < 12; write++) single.guard(guardOf(1, `w${write}`), megabyte);
  assert.deepEqual(single.of(1).requests.map((request) => request.call), ['w9', 'w10', 'w11']);
});

test('2,000 agents made and dropped are all forgotten by the worker', async () => {
  setFlagsFromString('--expose-gc');
  const collectGarbage = runInNewContext('gc');
  let forgets = 0;
  const send = WorkerBridge.prototype.send;
  WorkerBridge.prototype.send = function count(message) {
    if (message.op === 'forget') forgets++;
    return send.call(this, message);
  };
  const guards = [];
  const dispose = await apply({ tools: { guard: (guard) => (guards.push(guard), () => {}) }, on: () => () => {} }, {});
  try {
    (() => {
      for (let index = 0; index < 2000; index++) {
        const agent = { id: `session-${index}` };
        for (let step = 0; step < 2; step++) guards[0]({ name: 'bash', callId: `c${step}`, agent, arguments: { command: 'ls' } });
      }
    })();
    const deadline = Date.now() + 10_000;
    while (forgets < 2000 && Date.now() < deadline) {
      collectGarbage();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(forgets, 2000);
  } finally {
    WorkerBridge.prototype.send = send;
    dispose();
  }
});
