// The journal's bounds, and the long-session soak in small: agents created and dropped are
// forgotten by the worker through the FinalizationRegistry.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { WorkerBridge } from '../bridge.js';
import { apply } from '../index.js';
import { Journal } from '../journal.js';

const guardOf = (agent, call) => ({ op: 'guard', agent, call, name: 'bash', args: { command: 'ls' } });
const resultOf = (agent, call) => ({ op: 'result', agent, call, text: 'ok' });

test('the journal holds the last `window` guards per agent and what came after the oldest', () => {
  const journal = new Journal({ window: 4, maxAgents: 100 });
  for (let index = 0; index < 1000; index++) {
    journal.guard(guardOf(1, `c${index}`));
    journal.result(resultOf(1, `c${index}`));
  }
  journal.result(resultOf(1, 'c1')); // about a call long gone: changes nothing, not kept
  const kept = [...journal.requests()];
  assert.deepEqual(kept.map((request) => `${request.op}:${request.call}`),
    ['guard:c996', 'result:c996', 'guard:c997', 'result:c997', 'guard:c998', 'result:c998', 'guard:c999', 'result:c999']);
  journal.asked({ op: 'preflight', agent: 1, call: 'c1000' });
  journal.result(resultOf(1, 'c1000')); // the declined ask settles: kept
  assert.equal([...journal.requests()].length, 10);
  journal.drop(1);
  assert.equal([...journal.requests()].length, 0);
});

test('the journal forgets its idlest agent past maxAgents, as the core does', () => {
  const journal = new Journal({ window: 4, maxAgents: 3 });
  for (const agent of [1, 2, 3, 1, 4]) journal.guard(guardOf(agent, `c${agent}`));
  assert.deepEqual([...journal.agents.keys()], [3, 1, 4]);
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
  const dispose = apply({ tools: { guard: (guard) => (guards.push(guard), () => {}) }, on: () => () => {} }, {});
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
