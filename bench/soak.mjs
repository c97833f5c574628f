// Long-session soak through the real shim and worker (not a test):
//   node --expose-gc bench/soak.mjs [agents=100000] [calls=1000000] [liveAgents=64]
//
// Phase 1 creates `agents` agents in two rounds, each making a few calls, and drops them; garbage collection
// and the FinalizationRegistry tell the worker to forget them. Phase 2 makes `calls` calls
// spread over at most `liveAgents` agents at a time, retiring one every 1,000 calls. Printed:
// the worker's resident memory (VmRSS), the shim's heap, and the forget requests sent.
import { readFileSync, readdirSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

import { apply } from '../node-shim/index.js';
import { decode } from '../node-shim/worker/msgpack.js';

const [agents = 100_000, calls = 1_000_000, liveAgents = 64] = process.argv.slice(2).map(Number);
if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc');

// Count the forget requests the shim posts to its bridge thread.
let forgets = 0;
const postMessage = Worker.prototype.postMessage;
Worker.prototype.postMessage = function count(message, transfer) {
  if (message instanceof ArrayBuffer && decode(new Uint8Array(message, 4)).op === 'forget') forgets++;
  return postMessage.call(this, message, transfer);
};

const guards = [];
await apply({ tools: { guard: (guard) => (guards.push(guard), () => {}) }, on: () => () => {} }, {});
const [guard] = guards;
const worker = readdirSync('/proc/self/task').flatMap((task) => {
  try {
    return readFileSync(`/proc/self/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    return [];
  }
})[0];

const workerRssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${worker}/status`, 'utf8'))[1]) / 1024;
const heapMb = () => process.memoryUsage().heapUsed / 2 ** 20;
const settle = async () => {
  for (let round = 0; round < 5; round++) {
    globalThis.gc();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  guard({ name: 'bash', callId: 'flush', agent: {}, arguments: { command: 'true' } }); // drains the forgets
};
const figures = (label) =>
  console.log(`${label.padEnd(34)} worker RSS ${workerRssMb().toFixed(1).padStart(6)} MB  shim heap ` +
    `${heapMb().toFixed(1).padStart(6)} MB  forgets ${forgets}`);

function call(agent, index) {
  const command = index % 3 ? `curl -s https://api.example.org/items?page=${index % 40}` : 'npm test';
  return guard({ name: 'bash', callId: `c${index}`, agent, arguments: { command, description: `#${index}` } });
}

await settle();
figures('baseline');
// Two rounds: after the first, the worker's allocator keeps its arenas (RSS does not shrink), so
// what shows that forgotten agents are really gone is that the second round needs no more.
let started;
for (const round of [1, 2]) {
  started = performance.now();
  for (let index = 0; index < agents / 2; index++) {
    const agent = { id: `session-${round}-${index}` };
    for (let step = 0; step < 3; step++) call(agent, index * 3 + step);
    if (index % 10_000 === 9_999) await new Promise((resolve) => setImmediate(resolve)); // let finalizers run
  }
  figures(`round ${round}: ${agents / 2} agents made (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  await settle();
  figures(`round ${round}: dropped, after gc`);
}

started = performance.now();
const live = Array.from({ length: liveAgents }, (_, index) => ({ id: `live-${index}` }));
let denied = 0;
for (let index = 0; index < calls; index++) {
  if (call(live[index % liveAgents], index) !== undefined) denied++;
  if (index % 1000 === 999) live[(index / 1000) % liveAgents | 0] = { id: `live-${index}` };
  if (index % (calls / 5) === calls / 5 - 1) {
    await settle();
    figures(`${index + 1} calls, ${liveAgents} live agents`);
  }
}
const seconds = (performance.now() - started) / 1000;
console.log(`${calls} calls in ${seconds.toFixed(1)} s (${((seconds / calls) * 1e6).toFixed(0)} µs per call), ${denied} denied`);
