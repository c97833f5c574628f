// What dsh pays per tool call, through the pipeline: node bench/pipeline.mjs <reference index.js> [runs]
//
// Every call goes through the dsh pipeline as node-shim/test/fake-dsh.js reproduces it from
// @deepseek-ai/dsh-tools 0.1.0-rc.8 (ToolRuntime.prepareExecution, serviceAsk, postExecute;
// cordis' waterfall): the arguments snapshotted and deep-frozen, the tools/pre-execute waterfall,
// the guards, a no-op body that returns the shape's result text after one turn of the event loop
// (as any real tool body returns through it), then the tools/post-execute waterfall. Five mounts
// share the process: no plugin, ours (shim + Python worker, default settings), ours under
// `preset: seed` (no rule reads results) and under it with every cap lifted (no call ever waits
// for the worker; each printed in a table of its own) and the in-process reference 0.5.2 (seed-like settings, bench/reference.mjs). Runs are interleaved (each run
// measures every shape on every mount, in rotating order; one warm-up run is dropped) and the
// figures are medians over runs:
//   wall       per call, one agent calling back to back; "+" is the extra over no plugin
//   paused     the same, with PAUSE_MS between one call's end and the next one's start, as a model
//              takes between an answer and its next call (far longer in use): only the calls are
//              timed, never the pause. Ours lets a call through on a pass when the worker's answer
//              to the previous result has come (node-shim/call/ahead.js); back to back it waits for it.
//              The shim's own work for a call on a pass (its event, its result) is sent once the
//              event loop is idle (node-shim/worker/idle.js): it counts in busy, not in the call's wall
//   busy       event-loop active time per call (performance.eventLoopUtilization()): what no
//              other agent, the model stream or the UI can use meanwhile; "+" over no plugin
//   calls/s    16 agents calling concurrently, each back to back
//   delay p99  event-loop delay p99 (monitorEventLoopDelay, 1 ms resolution) during those 16
// Every call is distinct (nothing is denied; the run fails if anything is).
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

import * as ours from '../node-shim/index.js';
import { PAUSE_MS, alone, callsInARow, freshAgent, median, mount, paused, plus, ratio, settle, us } from './mounts.mjs';
import { REFERENCE_CONFIG, loadReference } from './reference.mjs';
import { SHAPES } from './shapes.mjs';

const [referencePath, runsArgument] = process.argv.slice(2);
const reference = await loadReference(referencePath, 'bench/pipeline.mjs');
const RUNS = Number(runsArgument ?? 5);
const AGENTS = 16;
const mounts = {
  none: mount(null),
  ours: mount(ours, undefined),
  seed: mount(ours, { preset: 'seed' }), // ours with no rule that reads results
  // ours with no rule that could stop these calls at all: every answer promises every call to
  // come, so no call ever waits for the worker (the least any promise could cost a call)
  lifted: mount(ours, { preset: 'seed', limits: { exact: null, cmd: null, net: null, sink: null } }),
  reference: mount(reference, REFERENCE_CONFIG),
};

/** 16 agents at once: calls per second, and the event-loop delay p99 meanwhile (ms). */
async function crowd(fake, shape) {
  await settle();
  const agents = Array.from({ length: AGENTS }, () => freshAgent('crowd'));
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const started = performance.now();
  await Promise.all(agents.map((agent) => callsInARow(fake, shape, agent, shape.perAgent)));
  const seconds = (performance.now() - started) / 1000;
  delay.disable();
  return { perSecond: (AGENTS * shape.perAgent) / seconds, delayP99: delay.percentile(99) / 1e6 };
}

const names = Object.keys(mounts);
const samples = SHAPES.map(() => Object.fromEntries(names.map((name) => [name, []])));
for (let run = 0; run <= RUNS; run++) {
  for (const [index, shape] of SHAPES.entries()) {
    const order = names.map((_, k) => names[(k + run + index) % names.length]);
    for (const name of order) {
      const { fake, setResult } = mounts[name];
      setResult(shape.result);
      const figures = { ...(await alone(fake, shape)), ...(await paused(fake, shape)), ...(await crowd(fake, shape)) };
      if (run > 0) samples[index][name].push(figures); // run 0 warms up every path
    }
  }
}
for (const { dispose } of Object.values(mounts)) await dispose();

const medians = samples.map((bySample) =>
  Object.fromEntries(
    names.map((name) => [
      name,
      Object.fromEntries(['wall', 'paused', 'busy', 'perSecond', 'delayP99'].map((key) => [key, median(bySample[name].map((s) => s[key]))])),
    ]),
  ),
);

const rate = (value) => Math.round(value).toLocaleString('en');

console.log(
  `${RUNS} interleaved runs (medians), ${AGENTS} agents for calls/s and delay; "+" is the extra over no plugin; ` +
    `back to back: one agent's next call starts as its last ends; paused: ${PAUSE_MS} ms between them (the pauses not timed).\n`,
);
console.log('| call shape | wall back to back, ours | reference | ours / ref | wall paused, ours | reference | ours / ref | busy, ours | busy, reference | ours / ref | calls/s ×16: none / ours / ref | delay p99 ×16: none / ours / ref |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
const sums = { ours: 0, reference: 0 };
for (const [index, shape] of SHAPES.entries()) {
  const { none, ours: o, reference: r } = medians[index];
  const extra = (m, key) => Math.max(0, m[key] - none[key]);
  sums.ours += extra(o, 'busy');
  sums.reference += extra(r, 'busy');
  console.log(
    `| ${shape.label.replaceAll('|', '\\|')} | ${plus(o.wall - none.wall)} | ${plus(r.wall - none.wall)} | ${ratio(extra(o, 'wall'), extra(r, 'wall'))} | ` +
      `${plus(o.paused - none.paused)} | ${plus(r.paused - none.paused)} | ${ratio(extra(o, 'paused'), extra(r, 'paused'))} | ` +
      `${plus(o.busy - none.busy)} | ${plus(r.busy - none.busy)} | ${ratio(extra(o, 'busy'), extra(r, 'busy'))} | ` +
      `${rate(none.perSecond)} / ${rate(o.perSecond)} / ${rate(r.perSecond)} | ` +
      `${none.delayP99.toFixed(1)} / ${o.delayP99.toFixed(1)} / ${r.delayP99.toFixed(1)} ms |`,
  );
}
console.log(`| **event-loop busy, summed over the shapes** | | | | | | | ${plus(sums.ours)} | ${plus(sums.reference)} | ${ratio(sums.ours, sums.reference)} | | |`);
/** The table of one more mount of ours beside the defaults and the reference. */
function variantTable(name, heading, title) {
  console.log(`\n${heading}\n`);
  console.log(`| call shape | wall back to back, ${title} | ours (defaults) | reference | ${title} / ref | wall paused, ${title} | ${title} / ref | busy, ${title} | ${title} / ref |`);
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const [index, shape] of SHAPES.entries()) {
    const { none, ours: o, [name]: p, reference: r } = medians[index];
    const extra = (m, key) => Math.max(0, m[key] - none[key]);
    console.log(
      `| ${shape.label.replaceAll('|', '\\|')} | ${plus(p.wall - none.wall)} | ${plus(o.wall - none.wall)} | ${plus(r.wall - none.wall)} | ` +
        `${ratio(extra(p, 'wall'), extra(r, 'wall'))} | ${plus(p.paused - none.paused)} | ${ratio(extra(p, 'paused'), extra(r, 'paused'))} | ` +
        `${plus(p.busy - none.busy)} | ${ratio(extra(p, 'busy'), extra(r, 'busy'))} |`,
    );
  }
}
variantTable(
  'seed',
  'The same runs, ours under `preset: seed` (no rule reads results, so an answer promises ' +
    "the next calls whatever they return, up to the caps' 3 for an agent of distinct calls):",
  'seed',
);
variantTable(
  'lifted',
  'The same runs, ours under `preset: seed` with every cap lifted (`limits: {exact: null, cmd: null, ' +
    'net: null, sink: null}`: no rule could stop these calls, so every answer promises every call to ' +
    'come and no call ever waits for the worker; the least a call on a pass costs):',
  'lifted',
);
console.log('\nBaseline, no plugin, per call: ' + SHAPES.map((shape, index) => `${shape.tool} ${us(medians[index].none.wall)} wall / ${us(medians[index].none.busy)} busy`).join('; '));
