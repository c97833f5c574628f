// Guard round trip, ours (shim + Python worker) side by side with the in-process reference plugin:
//   node bench/guard.mjs <reference index.js> [calls]
//
// Both plugins are mounted on the fake dsh pipeline of the shim tests (node-shim/test/fake-dsh.js),
// with seed-equivalent settings, and get the same calls: bash calls whose arguments are about
// 100 B, 1 KB, 64 KB and 1 MB, every one a different command so each is fingerprinted and
// committed like real work. "guard" is the pipeline's guard stage alone (deep-frozen arguments, as
// dsh passes them); "call" is one whole FakeDsh.call (pre-execute, guard, body, post-execute).
// Node CPU is process.cpuUsage() over the guard loop (all of Node's threads; not the worker).
import * as ours from '../node-shim/index.js';
import { FakeDsh, makeAgent } from '../node-shim/test/fake-dsh.js';
import { REFERENCE_CONFIG, loadReference } from './reference.mjs';

const [referencePath, callsArgument] = process.argv.slice(2);
const reference = await loadReference(referencePath, 'bench/guard.mjs');
const CALLS = Number(callsArgument ?? 10_000);
const SIZES = [
  { label: '100 B', bytes: 100, share: 1 },
  { label: '1 KB', bytes: 1024, share: 1 },
  { label: '64 KB', bytes: 64 * 1024, share: 10 },
  { label: '1 MB', bytes: 1024 * 1024, share: 200 },
];

// Local hosts are counted by both (no call here is local), so no call is preflighted.
const OUR_CONFIG = { localHosts: 'deny' };

function bashArguments(bytes, index) {
  const head = `echo ${index} `;
  return { command: head + 'x'.repeat(Math.max(1, bytes - head.length - 40)), description: 'bench' };
}

function deepFreeze(value) {
  if (value !== null && typeof value === 'object') {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}

/** An execution as FakeDsh.call builds it, for timing the guard stage alone. */
function execution(agent, index, args) {
  const callId = `call-${index}`;
  return { token: Symbol('execution'), callId, rootCallId: callId, name: 'bash', agent, arguments: deepFreeze(args) };
}

function percentile(sorted, fraction) {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))];
}

/** Time the guard stage over `count` distinct calls; a fresh agent per size keeps windows comparable. */
function timeGuard(fake, bytes, count) {
  const agent = makeAgent(`guard-${bytes}`);
  const warmUp = Math.min(200, count);
  const execs = Array.from({ length: count + warmUp }, (_, index) => execution(agent, index, bashArguments(bytes, index)));
  for (let index = 0; index < warmUp; index++) fake.guardReason(execs[index]);
  const samples = new Float64Array(count);
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  for (let index = 0; index < count; index++) {
    const before = process.hrtime.bigint();
    const denied = fake.guardReason(execs[warmUp + index]);
    samples[index] = Number(process.hrtime.bigint() - before) / 1000;
    if (denied !== undefined) throw new Error(`a distinct call was denied: ${denied.slice(0, 200)}`);
  }
  const wallSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  const { user, system } = process.cpuUsage(cpu);
  samples.sort();
  return {
    p50: percentile(samples, 0.5),
    p99: percentile(samples, 0.99),
    p999: percentile(samples, 0.999),
    perSecond: count / wallSeconds,
    cpu: (user + system) / count,
  };
}

/** Median microseconds of one whole pipeline call (pre-execute, guard, body, post-execute). */
async function timeWholeCall(fake, bytes, count) {
  const agent = makeAgent(`call-${bytes}`);
  const samples = new Float64Array(count);
  for (let index = 0; index < count; index++) {
    const args = bashArguments(bytes, 1_000_000 + index);
    const before = process.hrtime.bigint();
    await fake.call(agent, 'bash', args);
    samples[index] = Number(process.hrtime.bigint() - before) / 1000;
  }
  return percentile(samples.sort(), 0.5);
}

function mount(plugin, config) {
  const fake = new FakeDsh();
  const disposal = plugin.apply(fake.ctx, config); // this plugin's: a promise of the disposer
  return { fake, dispose: async () => (await disposal)() };
}

const mounted = { ours: mount(ours, OUR_CONFIG), reference: mount(reference, REFERENCE_CONFIG) };
const rows = [];
for (const { label, bytes, share } of SIZES) {
  const count = Math.max(50, Math.floor(CALLS / share));
  const result = {};
  for (const [which, { fake }] of Object.entries(mounted)) {
    result[which] = timeGuard(fake, bytes, count);
    result[which].call = await timeWholeCall(fake, bytes, Math.max(20, Math.floor(count / 10)));
  }
  rows.push({ label, count, ...result });
}
for (const { dispose } of Object.values(mounted)) await dispose();

const us = (value) => (value >= 1000 ? `${(value / 1000).toFixed(2)} ms` : `${value.toFixed(0)} µs`);
const ratio = (a, b) => `${(a / b).toFixed(2)}×`;
console.log(`| size | calls | plugin | p50 | p99 | p99.9 | calls/s | Node CPU/call | whole call p50 |`);
console.log(`|---|---|---|---|---|---|---|---|---|`);
for (const { label, count, ours: o, reference: r } of rows) {
  for (const [name, x] of [['ours', o], ['reference 0.5.2', r]]) {
    console.log(
      `| ${label} | ${count} | ${name} | ${us(x.p50)} | ${us(x.p99)} | ${us(x.p999)} | ` +
        `${Math.round(x.perSecond).toLocaleString('en')} | ${us(x.cpu)} | ${us(x.call)} |`,
    );
  }
  console.log(
    `| ${label} | | **ours / reference** | ${ratio(o.p50, r.p50)} | ${ratio(o.p99, r.p99)} | ${ratio(o.p999, r.p999)} | ` +
      `${ratio(o.perSecond, r.perSecond)} | ${ratio(o.cpu, r.cpu)} | ${ratio(o.call, r.call)} |`,
  );
}
