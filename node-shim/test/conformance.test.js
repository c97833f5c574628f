// One owner for the ahead-of-guard rule (breaker/core/history/agents.py OPERATIONS): a seeded trace of
// several agents' preflights, guards, results and human turns goes through the shim's
// AheadVerdicts and Journal, fed by a real worker's answers, and through a fresh Breaker. Every
// verdict the shim keeps for a guard must still be the worker's (a `commit` the worker has no plan
// for is an error reply), and after every frame the journal's agents must be the core's, in the
// core's order (the order in which both forget the idlest past maxAgents).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { AheadVerdicts } from '../call/ahead.js';
import { WorkerBridge } from '../worker/bridge.js';
import { Journal } from '../call/journal.js';
import { generator } from './processes.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const PACKAGE_ROOT = dirname(dirname(HERE));
const PYTHON = process.env.RTB_PYTHON || 'python3';
const closers = [];
after(() => closers.forEach((close) => close()));


const COMMANDS = ['make test', 'cat notes.txt', 'curl -s http://localhost:8080/health'];

for (const [name, config] of [
  ['three agents at most', { maxAgents: 3, window: 4, limits: { exact: 3, cmd: 3 } }],
  ['asks at any cap', { maxAgents: 2, window: 4, limits: { exact: 3, cmd: 3 }, onLimit: 'ask', localHosts: 'ask' }],
]) {
  test(`shim and core apply one ahead-of-guard rule (${name})`, () => {
    const bridge = new WorkerBridge({
      command: PYTHON,
      args: ['-m', 'breaker.worker'],
      cwd: PACKAGE_ROOT,
      env: { ...process.env, PYTHONPATH: PACKAGE_ROOT },
      log: (line) => assert.fail(`the worker refused a request: ${line}`),
    });
    closers.push(() => bridge.close());
    const { ok, settings } = bridge.boot({ op: 'configure', config }, 10_000);
    assert.ok(ok);
    const ahead = new AheadVerdicts(settings.maxAgents, settings.operations);
    const journal = new Journal(settings);
    const agents = [1, 2, 3, 4, 5].map((id) => AheadVerdicts.agent(id));
    const random = generator(7);
    const frames = [];
    const orders = [];
    const send = (message) => {
      frames.push(message);
      const reply = bridge.call(message);
      assert.ok(reply.ok, `${message.op} ${message.call ?? ''}: ${reply.error}`);
      orders.push([...journal.agents.keys()]);
      return reply;
    };
    const inFlight = []; // calls preflighted, their guard not run yet
    let kept = 0;
    for (let step = 0, number = 0; step < 600; step++) {
      const agent = agents[random.int(agents.length)];
      const choice = random.next();
      if (choice < 0.4) {
        const exec = { callId: `c${number++}` };
        const message = { op: 'preflight', agent: agent.id, call: exec.callId, name: 'bash', args: { command: COMMANDS[random.int(3)] } };
        const mark = ahead.preflighting(agent, bridge.generation);
        journal.sent('preflight', agent.id, message.call);
        const answer = send(message);
        ahead.answered(exec, agent, mark, answer, message, 1);
        if (typeof answer.ask === 'string') journal.asked(message, 1);
        inFlight.push({ exec, agent, message });
      } else if (choice < 0.75 && inFlight.length > 0) {
        const { exec, agent: owner, message } = inFlight.splice(random.int(inFlight.length), 1)[0];
        const held = ahead.take(exec, owner, bridge.generation);
        if (held) {
          kept++;
          journal.guard({ ...message, op: 'guard' }, 1, 'commit');
          ahead.committing(owner, 'commit');
          send({ op: 'commit', agent: owner.id, call: exec.callId }); // an error reply fails the test
        } else {
          const guard = { ...message, op: 'guard' };
          ahead.committing(owner, 'guard');
          journal.guard(guard, 1);
          send(guard);
        }
        const result = { op: 'result', agent: owner.id, call: exec.callId, text: `ran ${exec.callId}`, outcome: { isError: false } };
        ahead.sending(owner, 'result');
        journal.result(result, 1);
        send(result);
      } else if (choice < 0.8) {
        journal.cleared(agent.id);
        ahead.sending(agent, 'human');
        send({ op: 'human', agent: agent.id });
      }
    }
    assert.ok(kept > 20, `${kept} kept verdicts used`);
    const replay = spawnSync(PYTHON, [join(HERE, 'conformance-replay.py')], {
      cwd: PACKAGE_ROOT,
      env: { ...process.env, PYTHONPATH: PACKAGE_ROOT },
      input: JSON.stringify([config, frames]),
    });
    assert.equal(replay.status, 0, String(replay.stderr));
    const core = JSON.parse(String(replay.stdout));
    for (const [index, order] of core.entries()) {
      assert.deepEqual(orders[index], order, `after frame ${index} (${frames[index].op})`);
    }
  });
}
