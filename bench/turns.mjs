// What the calls of one model turn cost dsh: node bench/turns.mjs <reference index.js> [runs]
//
// A model's turn may hold several tool calls, which dsh runs one after another; between turns the
// model takes its time. One agent calls in turns of 1 to 4 calls back to back, with PAUSE_MS
// before each turn (not timed), through the mounts of bench/pipeline.mjs (no plugin, ours under
// its defaults, the reference 0.5.2); runs interleaved, the first dropped, medians. Ours lets a
// call through on a pass while the shim is fewer calls ahead of the worker than the last answer
// promised (node-shim/call/ahead.js; 3 for an agent of distinct calls under the default caps), so
// a turn longer than that waits for the worker at its later calls. bench/turn_sizes.py counts the
// turns of the real agent runs.
import * as ours from '../node-shim/index.js';
import { inTurns, median, mount, plus, ratio } from './mounts.mjs';
import { REFERENCE_CONFIG, loadReference } from './reference.mjs';
import { SHAPES } from './shapes.mjs';

const [referencePath, runsArgument] = process.argv.slice(2);
const reference = await loadReference(referencePath, 'bench/turns.mjs');
const RUNS = Number(runsArgument ?? 5);
const SIZES = [1, 2, 3, 4];
const TURNS = 40;
const mounts = { none: mount(null), ours: mount(ours, undefined), reference: mount(reference, REFERENCE_CONFIG) };
const names = Object.keys(mounts);

/** samples[shape][size][name]: the figures of each run after the first. */
const samples = SHAPES.map(() => SIZES.map(() => Object.fromEntries(names.map((name) => [name, []]))));
for (let run = 0; run <= RUNS; run++) {
  for (const [index, shape] of SHAPES.entries()) {
    for (const [at, size] of SIZES.entries()) {
      const order = names.map((_, k) => names[(k + run + index + at) % names.length]);
      for (const name of order) {
        mounts[name].setResult(shape.result);
        const figures = await inTurns(mounts[name].fake, shape, size, TURNS);
        if (run > 0) samples[index][at][name].push(figures);
      }
    }
  }
}
for (const { dispose } of Object.values(mounts)) await dispose();

console.log(
  `${RUNS} interleaved runs (medians) of ${TURNS} turns each; "+" is the extra per call over no plugin; ` +
    'wall: the calls of a turn back to back (the pause before each turn not timed); busy: the event loop, pauses included.\n',
);
const head = SIZES.map((size) => `turns of ${size}: wall, ours / reference (ratio) | busy, ours / reference (ratio)`).join(' | ');
console.log(`| call shape | ${head} |`);
console.log(`|---|${SIZES.map(() => '---|---|').join('')}`);
for (const [index, shape] of SHAPES.entries()) {
  const cells = SIZES.map((_, at) => {
    const of = (name, key) => median(samples[index][at][name].map((figures) => figures[key]));
    const extra = (name, key) => of(name, key) - of('none', key);
    const cell = (key) =>
      `${plus(extra('ours', key))} / ${plus(extra('reference', key))} (${ratio(Math.max(0, extra('ours', key)), Math.max(0, extra('reference', key)))})`;
    return `${cell('wall')} | ${cell('busy')}`;
  });
  console.log(`| ${shape.label.replaceAll('|', '\\|')} | ${cells.join(' | ')} |`);
}
