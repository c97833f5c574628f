// The frames the shim sends the worker for bench/pipeline.mjs's call shapes, one agent calling back
// to back under the defaults: node bench/worker_frames.mjs [calls] [agents] [shape index...]
//
// Prints JSON {configure, shapes: [{label, tool, calls, agents: [[frame, ...], ...]}]}: every frame
// the real shim sent (node-shim/index.js mounted on node-shim/test/fake-dsh.js, its worker running),
// without its id, in the order it sent them, by agent. bench/worker_time.py replays them through the
// worker's own handler. Needs RTB_PYTHON (or python3) with the worker's packages.
import * as ours from '../node-shim/index.js';
import { FakeDsh, makeAgent } from '../node-shim/test/fake-dsh.js';
import { WorkerBridge } from '../node-shim/worker/bridge.js';
import { SHAPES, answerOf } from './shapes.mjs';

const [callsArgument, agentsArgument, ...picked] = process.argv.slice(2);
const AGENTS = Number(agentsArgument ?? 3);

const recording = [];
const send = WorkerBridge.prototype.send;
WorkerBridge.prototype.send = function record(message, reply) {
  recording.push(reply === undefined ? message : { ...message, reply });
  return send.call(this, message, reply);
};

const yieldOnce = () => new Promise((resolve) => setImmediate(resolve));
let shape = SHAPES[0];
let served = 0;
const fake = new FakeDsh({
  body: async () => {
    await yieldOnce();
    served++;
    return answerOf(shape.result, served);
  },
});
const dispose = await ours.apply(fake.ctx, undefined);
let nextCall = 0;
let nextAgent = 0;
// The first call starts the worker and configures it.
await fake.call(makeAgent('warm-up'), 'read', { path: '/w/warm-up' }, { callId: `call-${nextCall++}` });
const configure = recording.find((frame) => frame.op === 'configure');
const shapes = [];
for (const index of picked.length ? picked.map(Number) : SHAPES.map((_, n) => n)) {
  shape = SHAPES[index];
  const calls = Number(callsArgument ?? shape.calls);
  const agents = [];
  for (let round = 0; round < AGENTS; round++) {
    const agent = makeAgent(`frames-${nextAgent++}`);
    agents.push(`call-${nextCall}`);
    for (let count = 0; count < calls; count++) {
      const n = nextCall++;
      const outcome = await fake.call(agent, shape.tool, shape.args(n), { callId: `call-${n}` });
      if (outcome.denied !== undefined) throw new Error(`a distinct call was denied: ${outcome.denied.slice(0, 300)}`);
    }
  }
  shapes.push({ label: shape.label, tool: shape.tool, calls, agents });
}
dispose();
// Each agent's frames, found by the worker's number of the agent that sent its first call (a
// call's event or result may go out after the next agent's first call).
for (const { agents } of shapes) {
  agents.forEach((first, round) => {
    const number = recording.find((frame) => frame.call === first).agent;
    agents[round] = recording.filter((frame) => frame.agent === number);
  });
}
process.stdout.write(JSON.stringify({ configure, shapes }));
