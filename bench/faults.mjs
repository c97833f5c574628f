// The guard's worst latency under each fault and hostile input (not a test):
//   node --expose-gc bench/faults.mjs [liveAgents=10000]
//
// Each row mounts the real shim (its own worker), injects one fault or feeds one hostile argument,
// and times every guard call from its top to its return. Printed per row: the worst latency, the
// calls the guard could not check (answered per onWorkerFailure), the workers started, and
// whether a loop was still stopped afterwards (the 5th identical call denied). The default
// guardTimeoutMs (500 ms) and startTimeoutMs (10 s) are the deadlines the figures are held to.
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { apply } from '../node-shim/index.js';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const [liveAgents = 10_000] = process.argv.slice(2).map(Number);
const rows = [];

function children() {
  return readdirSync('/proc/self/task').flatMap((task) => {
    try {
      return readFileSync(`/proc/self/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
    } catch {
      return [];
    }
  });
}

// One mounted shim, its guard timed, its log lines counted.
async function mount(config = {}) {
  globalThis.gc?.(); // the previous row's garbage is not this row's pause
  const guards = [];
  const hooks = new Map();
  const before = new Set(children());
  const dispose = await apply({ tools: { guard: (guard) => (guards.push(guard), () => {}) }, on: (name, hook) => (hooks.set(name, hook), () => {}) }, config);
  const workers = new Set(children().filter((pid) => !before.has(pid)));
  const shim = { worst: 0, unchecked: 0, dispose, hooks, worker: () => [...workers].at(-1) };
  shim.guard = (exec) => {
    const started = performance.now();
    const verdict = guards[0](exec);
    shim.worst = Math.max(shim.worst, performance.now() - started);
    for (const pid of children()) if (!before.has(pid)) workers.add(pid);
    return verdict;
  };
  shim.workers = () => workers.size;
  return shim;
}

// The shim's lines saying a call went unchecked, counted while `run` runs.
async function countingUnchecked(shim, run) {
  const write = process.stderr.write;
  process.stderr.write = function count(chunk, ...rest) {
    if (/that call is (allowed|denied) \(onWorkerFailure|every counted call is/.test(String(chunk))) shim.unchecked++;
    return write.call(this, chunk, ...rest);
  };
  try {
    await run();
  } finally {
    process.stderr.write = write;
  }
}

function loopStopped(shim, agent, name = 'bash', args = { command: 'cat loop.txt' }) {
  const verdicts = [];
  for (let index = 0; index < 5; index++) verdicts.push(shim.guard({ name, callId: `loop-${index}-${Math.random()}`, agent, arguments: args }));
  return verdicts.slice(0, 4).every((verdict) => verdict === undefined) && typeof verdicts[4] === 'string';
}

function record(fault, shim, stopped, note = '') {
  rows.push({ fault, worst: shim.worst, unchecked: shim.unchecked, workers: shim.workers(), stopped, note });
  shim.dispose();
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const bash = (command) => ({ command, description: 'bench' });

// --- rows ---------------------------------------------------------------------------------------

{
  const shim = await mount();
  const agent = {};
  for (let index = 0; index < 1000; index++) shim.guard({ name: 'bash', callId: `b${index}`, agent, arguments: bash(`echo ${index}`) });
  record('none (1,000 calls)', shim, loopStopped(shim, {}));
}

await (async () => {
  const shim = await mount();
  const agent = {};
  await countingUnchecked(shim, async () => {
    for (let kill = 0; kill < 5; kill++) {
      for (let index = 0; index < 3; index++) shim.guard({ name: 'bash', callId: `k${kill}-${index}`, agent, arguments: bash('cat notes.txt') });
      process.kill(shim.worker(), 'SIGKILL');
      await sleep(300);
    }
  });
  record('worker SIGKILLed between calls, 5 times', shim, loopStopped(shim, {}));
})();

await (async () => {
  const shim = await mount();
  const agent = {};
  const content = 'x'.repeat(10 * 1024 * 1024);
  shim.guard({ name: 'write', callId: 'w0', agent, arguments: { path: 'a', content } });
  await countingUnchecked(shim, async () => {
    spawn('sh', ['-c', `sleep 0.03; kill -9 ${shim.worker()}`], { stdio: 'ignore' });
    shim.guard({ name: 'write', callId: 'w1', agent, arguments: { path: 'a', content: `${content}y` } });
  });
  record('worker SIGKILLed during a 10 MB call', shim, loopStopped(shim, {}));
})();

await (async () => {
  const shim = await mount();
  const agent = {};
  shim.guard({ name: 'bash', callId: 's0', agent, arguments: bash('ls') });
  process.kill(shim.worker(), 'SIGSTOP');
  await countingUnchecked(shim, async () => {
    shim.guard({ name: 'bash', callId: 's1', agent, arguments: bash('ls') });
  });
  record('worker hung (SIGSTOP)', shim, loopStopped(shim, {}));
})();

// dsh's stderr a pipe nobody reads while the worker floods it and hangs: in a child process.
{
  const program = `
    import { apply } from ${JSON.stringify(join(ROOT, 'node-shim', 'index.js'))};
    import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
    import { tmpdir } from 'node:os';
    import { join } from 'node:path';
    const folder = mkdtempSync(join(tmpdir(), 'rtb-bench-'));
    const python = join(folder, 'python');
    writeFileSync(python, '#!/bin/sh\\nexec ' + JSON.stringify(process.env.RTB_PYTHON || 'python3') + ' ' +
      ${JSON.stringify(join(ROOT, 'node-shim', 'test', 'noisy-hung-worker.py'))} + '\\n', { mode: 0o755 });
    const guards = [];
    apply({ tools: { guard: (guard) => (guards.push(guard), () => {}) }, on: () => () => {} }, { python });
    const started = performance.now();
    guards[0]({ name: 'bash', callId: 'c1', agent: {}, arguments: { command: 'ls' } });
    process.stdout.write(String(performance.now() - started));
    rmSync(folder, { recursive: true, force: true });
    process.exit(0);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', program], { stdio: ['ignore', 'pipe', 'pipe'] });
  // stderr is never read: once its pipe buffer is full, a blocking write to it would wait forever
  let output = '';
  child.stdout.on('data', (chunk) => { output += chunk; });
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  await new Promise((resolve) => child.on('exit', resolve));
  clearTimeout(timer);
  const worst = Number(output) || Infinity;
  rows.push({ fault: 'stderr a pipe nobody reads; the worker floods it and hangs', worst, unchecked: 1, workers: 1, stopped: '–', note: 'in a child process' });
}

const COSTLY = {
  'argument: 300,000 empty objects': () => ({ items: Array.from({ length: 300_000 }, () => ({})) }),
  'argument: 200,000 small edit objects': () => ({ edits: Array.from({ length: 200_000 }, (_, index) => ({ oldText: `l${index}`, newText: `r${index}` })) }),
  'argument: a 1 MB typed array': () => ({ bytes: new Uint8Array(1024 * 1024).fill(1) }),
  'argument: a sparse array of length 1e7': () => {
    const sparse = [];
    sparse.length = 1e7;
    return { sparse };
  },
  'argument: a million keys': () => Object.fromEntries(Array.from({ length: 1_000_000 }, (_, index) => [`k${index}`, index])),
  'argument: a 70 MB string (over the 64 MB frame limit)': () => ({ content: 'x'.repeat(70 * 1024 * 1024) }),
};
for (const [fault, make] of Object.entries(COSTLY)) {
  const shim = await mount();
  const args = make();
  let stopped;
  await countingUnchecked(shim, async () => {
    stopped = loopStopped(shim, {}, 'edit', args);
  });
  record(fault, shim, stopped && loopStopped(shim, {}));
}

await (async () => {
  const shim = await mount();
  const agents = Array.from({ length: 100 }, () => ({}));
  const content = 'y'.repeat(1024 * 1024);
  for (let write = 0; write < 12; write++) {
    for (const [index, agent] of agents.entries()) {
      shim.guard({ name: 'write', callId: `j${write}-${index}`, agent, arguments: { path: `f${index}`, content: `${write}${content}` } });
    }
  }
  globalThis.gc?.();
  const heap = process.memoryUsage().heapUsed / 2 ** 20;
  process.kill(shim.worker(), 'SIGKILL');
  await sleep(100);
  shim.worst = 0;
  await countingUnchecked(shim, async () => {
    shim.guard({ name: 'write', callId: 'after', agent: agents[99], arguments: { path: 'f99', content: `11${content}` } });
  });
  record('100 agents x 12 writes of 1 MB, then SIGKILL', shim, loopStopped(shim, {}), `shim heap ${heap.toFixed(0)} MB after gc, before the kill`);
})();

await (async () => {
  const shim = await mount();
  const agents = Array.from({ length: liveAgents }, () => ({}));
  for (let round = 0; round < 3; round++) {
    for (const [index, agent] of agents.entries()) {
      shim.guard({ name: 'bash', callId: `m${round}-${index}`, agent, arguments: bash(`curl -s https://api.example.org/items/${index} -o /tmp/item-${index}.json`) });
    }
  }
  process.kill(shim.worker(), 'SIGKILL');
  await sleep(100);
  shim.worst = 0;
  let caught = 0;
  await countingUnchecked(shim, async () => {
    for (let index = 0; index < 100; index++) {
      const agent = agents[(index * 97) % liveAgents];
      const i = (index * 97) % liveAgents;
      const args = bash(`curl -s https://api.example.org/items/${i} -o /tmp/item-${i}.json`);
      shim.guard({ name: 'bash', callId: `n${index}`, agent, arguments: args });
      if (typeof shim.guard({ name: 'bash', callId: `o${index}`, agent, arguments: args }) === 'string') caught++;
    }
  });
  record(`${liveAgents.toLocaleString('en')} live agents (3 calls each), SIGKILL, 100 of them call again`, shim, caught === 100, `${caught} of 100 windows came over`);
})();

await (async () => {
  const shim = await mount();
  const agents = Array.from({ length: 10_000 }, () => ({}));
  for (const [index, agent] of agents.entries()) shim.guard({ name: 'bash', callId: `e${index}`, agent, arguments: bash('ls') });
  const preStep = shim.hooks.get('agent/pre-step');
  const human = [{ source: { kind: 'user' } }];
  for (let round = 0; round < 15; round++) {
    for (const agent of agents) preStep({ agent, messages: human }, () => undefined);
  }
  await countingUnchecked(shim, async () => {
    shim.guard({ name: 'bash', callId: 'after-events', agent: agents[0], arguments: bash('ls') });
  });
  record('150,000 events (user messages) in a row, then a call', shim, loopStopped(shim, {}));
})();

console.log('| fault | worst guard latency | calls unchecked | workers started | loop still stopped | note |');
console.log('|---|---|---|---|---|---|');
for (const { fault, worst, unchecked, workers, stopped, note } of rows) {
  const latency = Number.isFinite(worst) ? `${worst.toFixed(0)} ms` : 'never returned';
  console.log(`| ${fault} | ${latency} | ${unchecked} | ${workers} | ${stopped === true ? 'yes' : stopped === false ? 'NO' : stopped} | ${note} |`);
}
process.exit(0);
