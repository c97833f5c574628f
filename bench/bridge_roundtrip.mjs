// Guard round-trip latency through the real shim: node bench/bridge_roundtrip.mjs [calls]
//
// Mounts node-shim/index.js on a minimal fake ctx (the real worker and core behind it) and times
// the synchronous guard for bash calls whose arguments are about 1 KB and 64 KB. Every call is a
// different command, so each one is fingerprinted and committed like real work. The `stats` line
// is the bridge alone (a request the worker answers without deciding anything): the floor.
import { WorkerBridge } from '../node-shim/worker/bridge.js';
import { apply } from '../node-shim/index.js';

const calls = Number(process.argv[2] ?? 20_000);
const WARM_UP = 500;

function percentile(sorted, fraction) {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))];
}

function report(label, samples) {
  const sorted = Float64Array.from(samples).sort();
  const mean = samples.reduce((total, value) => total + value, 0) / samples.length;
  const format = (value) => `${value.toFixed(0).padStart(6)} µs`;
  console.log(
    `${label.padEnd(22)} n=${String(samples.length).padEnd(6)} p50 ${format(percentile(sorted, 0.5))}` +
      `  p99 ${format(percentile(sorted, 0.99))}  mean ${format(mean)}`,
  );
}

function time(count, run) {
  for (let index = 0; index < WARM_UP; index++) run(index);
  const samples = new Array(count);
  for (let index = 0; index < count; index++) {
    const started = process.hrtime.bigint();
    run(WARM_UP + index);
    samples[index] = Number(process.hrtime.bigint() - started) / 1000;
  }
  return samples;
}

const guards = [];
await apply({ tools: { guard: (guard) => (guards.push(guard), () => {}) }, on: () => () => {} }, {});
const [guard] = guards;
const agent = { id: 'session-bench' };

for (const size of [1024, 64 * 1024]) {
  const padding = 'x'.repeat(size - 64);
  const count = size > 4096 ? Math.max(1000, calls / 4) : calls;
  const samples = time(count, (index) =>
    guard({ name: 'bash', callId: `c${index}`, agent, arguments: { command: `echo ${index} ${padding}`, description: 'bench' } }),
  );
  report(`guard ${size / 1024} KB`, samples);
}

// The bridge alone, on a worker of its own.
const bridge = new WorkerBridge({
  command: process.env.RTB_PYTHON || 'python3',
  args: ['-m', 'breaker.worker'],
  cwd: new URL('..', import.meta.url).pathname,
  env: { ...process.env, PYTHONPATH: new URL('..', import.meta.url).pathname },
  log: (text) => console.error(text),
});
bridge.boot({ op: 'configure', config: null }, 10_000);
report('bridge floor (stats)', time(calls, () => bridge.call({ op: 'stats' })));
bridge.close();
