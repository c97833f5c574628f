// A replacement worker must start from the very state the lost one had, whatever was still waiting
// for an idle moment when it was lost (idle.js) and however results were sent: each session runs
// once unbroken and once with the worker killed at one point, and every verdict must be the same.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { WorkerBridge } from '../worker/bridge.js';
import { apply } from '../index.js';
import { FakeDsh, makeAgent, userMessage } from './fake-dsh.js';
import { captureStderr, isAlive, waitUntil } from './processes.js';

const disposers = [];
// apply returns a promise of its disposer (dsh awaits it): a hook run before it settles waits for the worker
after(async () => {
  for (const dispose of disposers) (await dispose)();
});

// The bridge each `apply` made: the first to send a request after it.
let lastBridge = null;
const send = WorkerBridge.prototype.send;
WorkerBridge.prototype.send = function record(...args) {
  lastBridge = this;
  return send.apply(this, args);
};

const FAILING = { command: 'ls /missing', output: "ls: cannot access '/missing'\n[exit code: 2]" };

// Run `steps` through a fresh shim: 'call' (the failing command), a command of its own, 'turn',
// 'human' or 'idle' (the event loop turns), each for the agent named before a colon ('a:' when
// none); with `killAt`, the worker is killed (and seen to be gone) before that step. The verdicts
// of the calls, allowed or not.
async function session(config, steps, killAt = -1) {
  const dsh = new FakeDsh({ body: (exec) => exec.arguments.output ?? `ran ${exec.arguments.command}` });
  lastBridge = null;
  disposers.push(apply(dsh.ctx, config));
  const bridge = lastBridge;
  const agents = new Map();
  const verdicts = [];
  for (const [index, step] of steps.entries()) {
    if (index === killAt) {
      bridge.drain(); // the helper's news: the worker's pid
      const pid = bridge.pid;
      process.kill(pid, 'SIGKILL');
      assert.ok(await waitUntil(() => !isAlive(pid)));
    }
    const [name, what] = step.includes(':') ? step.split(':') : ['a', step];
    if (!agents.has(name)) agents.set(name, makeAgent(name));
    const agent = agents.get(name);
    if (what === 'idle') await new Promise((resolve) => setTimeout(resolve, 20));
    else if (what === 'turn' || what === 'human') await dsh.step(agent, what === 'human' ? [userMessage('try something else')] : []);
    else {
      const args = what === 'call' ? FAILING : { command: what };
      verdicts.push((await dsh.call(agent, 'bash', args)).denied === undefined);
    }
  }
  return verdicts;
}

async function sameWhenKilled(config, steps, killAt) {
  const expected = await session(config, steps);
  assert.ok(expected.includes(false), `the session has denials: ${expected}`);
  let killed;
  await captureStderr(async () => {
    killed = await session(config, steps, killAt);
  });
  assert.deepEqual(killed, expected);
}

test('a human message that came while a passed call and its result waited for an idle moment: the replacement has it after them', async () => {
  // The second call goes through on a pass; the human message comes before the event loop is idle.
  await sameWhenKilled({}, ['turn', 'call', 'call', 'human', 'call', 'call', 'call', 'call', 'call'], 4);
});

test('with notices on (results answered at once), the replacement still has the results', async () => {
  await sameWhenKilled({ warnAt: 9, sameResultLimit: 3 }, ['call', 'call', 'call', 'call', 'call', 'call'], 2);
});

test("another agent's request made while a passed call waited for an idle moment: the journal forgets the agent the worker forgot", async () => {
  // With room for two agents: b reaches its cap (no pass left), a's call goes through on a pass
  // and b asks before the event loop is idle; so a's call reached the worker first, and when c
  // comes, the worker forgets a (the idlest), not b, whose window the replacement must have.
  const steps = ['b:cat x', 'b:cat x', 'b:cat x', 'a:ls', 'idle', 'a:ls', 'b:pwd', 'idle', 'c:ls', 'b:cat x'];
  await sameWhenKilled({ maxAgents: 2, limits: { exact: 3 } }, steps, 9);
});

test("an agent's first model turn, told before any call of it: the replacement has it", async () => {
  // Told before its first call, the turn makes the worker's state for the agent: its calls are
  // then one turn's, whose answers alike are not repetition; a replacement without it reads each
  // call as a turn of its own and stops the fourth.
  await sameWhenKilled({ sameResultLimit: 3 }, ['turn', 'cat a', 'cat a', 'cat a', 'cat a', 'cat a', 'cat a'], 3);
});
