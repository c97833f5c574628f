// Cold start, restart after a crash, and worker memory: node bench/worker.mjs [runs]
//
// Cold start: from calling the shim's `apply` (which spawns and configures the worker) to the first
// answered guard. Restart: SIGKILL the worker, then time the next guard calls until one is answered
// by the new worker (onWorkerFailure 'deny' makes an unanswered call recognisable).
// Memory: the worker's RSS (VmRSS) with 1, 100 and 10,000 live agents, each with a full window of
// curl calls, then after every agent is forgotten (the `forget` op), on a bridge of its own.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { WorkerBridge } from '../node-shim/worker/bridge.js';
import { apply } from '../node-shim/index.js';
import { FakeDsh, makeAgent } from '../node-shim/test/fake-dsh.js';

const RUNS = Number(process.argv[2] ?? 5);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WINDOW = 12;
const UNAVAILABLE = 'loop guard is unavailable';

const ms = (nanoseconds) => Number(nanoseconds) / 1e6;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const sleep = (milliseconds) => new Promise((resolve) => setTimeout(resolve, milliseconds));

function exec(agent, index) {
  return { callId: `c${index}`, name: 'bash', agent, arguments: { command: `echo ${index}` } };
}

/** Pids of this process's children whose command line names the worker module. */
function workerPids() {
  const pids = [];
  for (const task of readdirSync('/proc/self/task')) {
    for (const pid of readFileSync(`/proc/self/task/${task}/children`, 'utf8').split(' ').filter(Boolean)) {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('breaker.worker')) pids.push(Number(pid));
    }
  }
  return pids;
}

async function coldAndRestart() {
  const cold = [];
  const restart = [];
  const failedCalls = [];
  for (let run = 0; run < RUNS; run++) {
    const fake = new FakeDsh();
    const agent = makeAgent(`cold-${run}`);
    const started = process.hrtime.bigint();
    const disposal = apply(fake.ctx, { onWorkerFailure: 'deny' }); // the first guard waits for the worker's answer
    const first = fake.guardReason(exec(agent, 0));
    cold.push(ms(process.hrtime.bigint() - started));
    if (first !== undefined) throw new Error(`the first guard was not answered: ${first}`);

    const [pid] = workerPids();
    const killed = process.hrtime.bigint();
    process.kill(pid, 'SIGKILL');
    let failed = 0;
    for (let index = 1; ; index++) {
      const reason = fake.guardReason(exec(agent, index));
      if (reason === undefined) break;
      if (!reason.includes(UNAVAILABLE)) throw new Error(`unexpected denial: ${reason}`);
      failed++;
      if (failed > 1000) throw new Error('the worker never came back');
    }
    restart.push(ms(process.hrtime.bigint() - killed));
    failedCalls.push(failed);
    (await disposal)();
    await sleep(50); // let the old helper thread and worker wind down between runs
  }
  return { cold, restart, failedCalls };
}

function rssKilobytes(pid) {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((text) => text.startsWith('VmRSS:'));
  return Number(line.split(/\s+/)[1]);
}

function curl(agent, index) {
  const command =
    `curl -sSL --max-time 30 "https://api${agent % 50}.example.org/v1/items?page=${index}&agent=${agent}" ` +
    `-o /tmp/items-${agent}-${index}.json`;
  return { op: 'guard', agent, call: `a${agent}-c${index}`, name: 'bash', args: { command } };
}

/** Worker RSS as agents fill their windows, then after they are all forgotten. */
function memory() {
  const bridge = new WorkerBridge({
    command: process.env.RTB_PYTHON || 'python3',
    args: ['-m', 'breaker.worker'],
    cwd: ROOT,
    env: { ...process.env, PYTHONPATH: ROOT },
    log: (text) => console.error(text),
  });
  bridge.boot({ op: 'configure', config: { guardTimeoutMs: 5000 } }, 10_000);
  const pid = bridge.pid;
  const rows = [{ label: 'configured, no agent', kb: rssKilobytes(pid), stats: bridge.call({ op: 'stats' }).stats }];
  let live = 0;
  for (const target of [1, 100, 10_000]) {
    for (; live < target; live++) {
      const agent = live + 1;
      for (let index = 0; index < WINDOW; index++) bridge.notify(curl(agent, index));
      if (live % 20 === 0) bridge.call({ op: 'stats' }); // keep the pipe from running far ahead
    }
    const { stats } = bridge.call({ op: 'stats' });
    rows.push({ label: `${target.toLocaleString('en')} live agent${target > 1 ? 's' : ''}, full windows`, kb: rssKilobytes(pid), stats });
  }
  for (let agent = 1; agent <= live; agent++) {
    bridge.notify({ op: 'forget', agent });
    if (agent % 1000 === 0) bridge.call({ op: 'stats' });
  }
  const { stats } = bridge.call({ op: 'stats' });
  rows.push({ label: 'all forgotten', kb: rssKilobytes(pid), stats });
  bridge.close();
  return rows;
}

const { cold, restart, failedCalls } = await coldAndRestart();
console.log(`| measure (${RUNS} runs) | median | min | max |`);
console.log('|---|---|---|---|');
const row = (label, values, unit = ' ms') =>
  console.log(`| ${label} | ${median(values).toFixed(0)}${unit} | ${Math.min(...values).toFixed(0)}${unit} | ${Math.max(...values).toFixed(0)}${unit} |`);
row('cold start: `apply` → first answered guard', cold);
row('restart: SIGKILL → next answered guard', restart);
row('guards failed (denied) in between', failedCalls, '');

console.log('\n| worker state | RSS | agents | window entries |');
console.log('|---|---|---|---|');
for (const { label, kb, stats } of memory()) {
  console.log(`| ${label} | ${(kb / 1024).toFixed(1)} MB | ${stats.agents} | ${stats.entries} |`);
}
