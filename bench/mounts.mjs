// A mount of the dsh pipeline (node-shim/test/fake-dsh.js) driven through the call shapes of
// bench/shapes.mjs, for bench/pipeline.mjs and bench/shim_ab.mjs: one agent back to back, or with
// a pause before each call, or in model turns of a few calls. Every call is distinct.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

import { FakeDsh, makeAgent } from '../node-shim/test/fake-dsh.js';
import { answerOf } from './shapes.mjs';

/** Between one call's end and the next one's start, in the paused measure. */
export const PAUSE_MS = 5;
/** Before each measure, not timed: a worker still reading the calls a measure before let
 * through on passes (the shim runs ahead of it back to back) is done before the next begins, as
 * it is in use while the model takes its time; each measure starts from every process idle. */
export const SETTLE_MS = 100;
const PAUSED_CALLS = 100;

const yieldOnce = () => new Promise((resolve) => setImmediate(resolve));

/** One pipeline per mount; its body answers with the shape's result after one loop turn (answerOf). */
export function mount(plugin, config) {
  let result = '';
  let served = 0;
  const fake = new FakeDsh({
    body: async () => {
      await yieldOnce();
      served++;
      return answerOf(result, served);
    },
  });
  const disposal = plugin ? plugin.apply(fake.ctx, config) : () => {}; // this plugin's: a promise of it
  return { fake, dispose: async () => (await disposal)(), setResult: (text) => (result = text) };
}

let nextCall = 0;
let nextAgent = 0;

/** A fresh agent of the fake dsh, named for what it measures. */
export const freshAgent = (kind) => makeAgent(`${kind}-${nextAgent++}`);

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The wait before a measure (SETTLE_MS). */
export const settle = () => pause(SETTLE_MS);

/** `count` calls of `agent`, each `pauseMs` after the one before; the ms spent in the calls. */
export async function callsInARow(fake, shape, agent, count, pauseMs = 0) {
  let spent = 0;
  for (let index = 0; index < count; index++) {
    if (pauseMs > 0) await pause(pauseMs);
    const n = nextCall++;
    const started = performance.now();
    const outcome = await fake.call(agent, shape.tool, shape.args(n), { callId: `call-${n}` });
    spent += performance.now() - started;
    if (outcome.denied !== undefined) throw new Error(`a distinct call was denied: ${outcome.denied.slice(0, 300)}`);
  }
  return spent;
}

const napCell = new Int32Array(new SharedArrayBuffer(4));

/**
 * The main thread's CPU time so far in µs, where Linux tells it (/proc schedstat: time on a CPU,
 * in ns), else NaN. Unlike the event loop's busy time it leaves out the time the thread waited
 * for a CPU, which grows with the machine's load. The kernel brings a running thread's figure up
 * to date when it sleeps, so the thread sleeps for 20 µs first (else it lags by up to a tick).
 */
function mainThreadCpu() {
  try {
    Atomics.wait(napCell, 0, 0, 0.02);
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'latin1').split(' ')[0]) / 1000;
  } catch {
    return NaN;
  }
}

/** The median of `values` (numbers). */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** One agent back to back: wall, event-loop busy and main-thread CPU microseconds per call. */
export async function alone(fake, shape) {
  await settle();
  const agent = freshAgent('alone');
  const loop = performance.eventLoopUtilization();
  const cpu = mainThreadCpu();
  const started = performance.now();
  await callsInARow(fake, shape, agent, shape.calls);
  const wall = performance.now() - started;
  const { active } = performance.eventLoopUtilization(loop);
  return { wall: (wall * 1000) / shape.calls, busy: (active * 1000) / shape.calls, cpu: (mainThreadCpu() - cpu) / shape.calls };
}

/** One agent with a pause before each call: wall microseconds per call, the pauses left out. */
export async function paused(fake, shape) {
  await settle();
  const agent = freshAgent('paused');
  const count = Math.min(shape.calls, PAUSED_CALLS);
  return { paused: ((await callsInARow(fake, shape, agent, count, PAUSE_MS)) * 1000) / count };
}


/** Model turns of `size` calls back to back, PAUSE_MS before each turn (the model's time between
 * them, not timed): wall µs per call, and the event loop's busy µs per call over the whole run
 * (what a plugin leaves for an idle moment after a turn counts too). */
export async function inTurns(fake, shape, size, turns) {
  await settle();
  const agent = freshAgent(`turns-${size}`);
  const loop = performance.eventLoopUtilization();
  let spent = 0;
  for (let turn = 0; turn < turns; turn++) {
    await pause(PAUSE_MS);
    spent += await callsInARow(fake, shape, agent, size);
  }
  await pause(PAUSE_MS);
  const { active } = performance.eventLoopUtilization(loop);
  const calls = size * turns;
  return { wall: (spent * 1000) / calls, busy: (active * 1000) / calls };
}

/** How the benchmarks write a figure: µs or ms, an extra with its sign, a ratio. */
export const us = (value) => (Math.abs(value) >= 1000 ? `${(value / 1000).toFixed(2)} ms` : `${value.toFixed(0)} µs`);
export const plus = (value) => `${value >= 0 ? '+' : '−'}${us(Math.abs(value))}`;
export const ratio = (a, b) => (b > 0 ? `${(a / b).toFixed(2)}×` : '–');
