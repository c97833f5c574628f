// The worker's own CPU time per call, live, against an earlier copy of the plugin: node
// bench/worker_live.mjs <earlier index.js> [rounds] [calls] [shape index...]
//
// bench/worker_time.py replays the shim's frames through the worker's handler; live, the same
// frames cost the worker more (its poll loop, the replies' writes that wake the event loop, and
// what it reads at once). Here both copies (each its own node-shim/ and breaker/, under the
// defaults) are mounted on the fake dsh side by side and take turns, shape by shape, one agent
// calling back to back (`calls` calls a turn, 1,000 by default); each worker's CPU time is read
// from /proc (schedstat: ns, user and system), the main thread's too, the event loop's busy time
// and the wall time. Round 0 warms up and is dropped. Printed per shape: the medians per call of
// each copy's worker CPU, main-thread CPU, busy time and wall, and the median of the rounds'
// after / before ratios. Linux only (it reads /proc); not in bench/run.sh, as it needs the other
// copy.
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';

import * as ours from '../node-shim/index.js';
import { callsInARow, freshAgent, median, mount } from './mounts.mjs';
import { SHAPES } from './shapes.mjs';

const [beforePath, roundsArgument, callsArgument, ...picked] = process.argv.slice(2);
if (!beforePath) throw new Error('usage: node bench/worker_live.mjs <earlier index.js> [rounds] [calls] [shape index...]');
const ROUNDS = Number(roundsArgument ?? 5);
const CALLS = Number(callsArgument ?? 1000);
const shapes = picked.length ? picked.map((index) => SHAPES[Number(index)]) : SHAPES.filter((shape) => shape.calls >= 300);
const roots = {
  before: resolve(dirname(beforePath), '..'),
  after: resolve(dirname(fileURLToPath(import.meta.url)), '..'),
};
const mounts = {
  before: mount(await import(pathToFileURL(resolve(beforePath)).href), undefined),
  after: mount(ours, undefined),
};
const names = Object.keys(mounts);

/** Nanoseconds on a CPU of a process's or thread's /proc folder (schedstat's first field). */
const onCpu = (folder) => Number(readFileSync(`${folder}/schedstat`, 'latin1').split(' ')[0]);

/** The worker of the copy at `root`: this process's child whose working directory it is. */
function workerOf(root) {
  for (const task of readdirSync(`/proc/${process.pid}/task`)) {
    const children = readFileSync(`/proc/${process.pid}/task/${task}/children`, 'latin1').trim().split(/\s+/);
    for (const child of children.filter(Boolean)) {
      try {
        if (readlinkSync(`/proc/${child}/cwd`) === root) return `/proc/${child}`;
      } catch {
        // gone meanwhile
      }
    }
  }
  throw new Error(`no worker runs in ${root}`);
}

const mainThread = `/proc/${process.pid}/task/${process.pid}`;
const samples = shapes.map(() => Object.fromEntries(names.map((name) => [name, []])));
for (let round = 0; round <= ROUNDS; round++) {
  for (const [index, shape] of shapes.entries()) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(k + round + index) % names.length];
      const { fake, setResult } = mounts[name];
      setResult(shape.result);
      await callsInARow(fake, shape, freshAgent('warm'), 3); // the worker started, the shape's result set
      const worker = workerOf(roots[name]);
      const [workerBefore, mainBefore, started] = [onCpu(worker), onCpu(mainThread), performance.now()];
      const loop = performance.eventLoopUtilization();
      await callsInARow(fake, shape, freshAgent('live'), CALLS);
      const wall = ((performance.now() - started) * 1000) / CALLS;
      const { active } = performance.eventLoopUtilization(loop);
      const figures = {
        worker: (onCpu(worker) - workerBefore) / 1000 / CALLS,
        main: (onCpu(mainThread) - mainBefore) / 1000 / CALLS,
        busy: (active * 1000) / CALLS,
        wall,
      };
      if (round > 0) samples[index][name].push(figures);
    }
  }
}
for (const { dispose } of Object.values(mounts)) await dispose();

const load = readFileSync('/proc/loadavg', 'latin1').split(' ').slice(0, 3).join(' ');
console.log(`${ROUNDS} rounds of ${CALLS} calls, one agent back to back, load ${load}; medians per call, after / before the median of the rounds' ratios\n`);
const KEYS = { worker: 'worker CPU', main: 'main-thread CPU', busy: 'event-loop busy', wall: 'wall' };
const head = ['call shape', ...Object.values(KEYS).flatMap((name) => [`${name}, before`, `${name}, after`, 'after / before'])];
console.log(`| ${head.join(' | ')} |`);
console.log(`|${head.map(() => '---').join('|')}|`);
for (const [index, shape] of shapes.entries()) {
  const { before, after } = samples[index];
  const cells = [shape.label.replaceAll('|', '\\|')];
  for (const key of Object.keys(KEYS)) {
    const ratios = after.map((sample, round) => sample[key] / before[round][key]);
    cells.push(`${median(before.map((s) => s[key])).toFixed(1)} µs`, `${median(after.map((s) => s[key])).toFixed(1)} µs`, `${median(ratios).toFixed(2)}×`);
  }
  console.log(`| ${cells.join(' | ')} |`);
}
