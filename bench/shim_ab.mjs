// The shim against an earlier copy of itself, mounted side by side in one process and taking
// turns: node bench/shim_ab.mjs <earlier index.js> [rounds] [reference index.js]
//
// On a shared machine the event loop's busy time per call drifts with the load by more than one
// step of the shim takes off it; two mounts measured in turns, shape by shape, see the same
// load, so their ratio shows through it. Each round measures, for each short shape of
// bench/shapes.mjs, one agent calling back to back, one with a pause before each call and one
// in model turns of one call (bench/mounts.mjs `alone`, `paused`, `inTurns`) on every mount in a rotating order: no plugin, the earlier copy (its own node-shim/ and breaker/, under the
// defaults), this one, and the in-process reference 0.5.2 when given (its settings as in
// bench/pipeline.mjs). Round 0 warms up and is dropped. Printed per shape: the medians of the
// extra busy time, main-thread CPU time, wall back to back, wall paused and busy time in turns
// of one call over no plugin, the
// median of the rounds' after / before ratios, and this shim against the reference.
import { pathToFileURL } from 'node:url';

import * as ours from '../node-shim/index.js';
import { REFERENCE_CONFIG, loadReference } from './reference.mjs';
import { alone, inTurns, median, mount, paused } from './mounts.mjs';
import { SHAPES } from './shapes.mjs';

const [beforePath, roundsArgument, referencePath] = process.argv.slice(2);
if (!beforePath) throw new Error('usage: node bench/shim_ab.mjs <earlier index.js> [rounds] [reference index.js]');
const before = await import(pathToFileURL(beforePath).href);
const ROUNDS = Number(roundsArgument ?? 5);
/** Model turns of one call each, with the pause before each, whose busy time is measured. */
const TURNS = 60;
/** The shapes whose busy time is above the reference's (the large ones are far below it). */
const SHORT = SHAPES.filter((shape) => shape.calls >= 300);

const mounts = { none: mount(null), before: mount(before, undefined), after: mount(ours, undefined) };
if (referencePath) mounts.reference = mount(await loadReference(referencePath, 'bench/shim_ab.mjs'), REFERENCE_CONFIG);
const names = Object.keys(mounts);
const samples = SHORT.map(() => Object.fromEntries(names.map((name) => [name, []])));
for (let round = 0; round <= ROUNDS; round++) {
  for (const [index, shape] of SHORT.entries()) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(k + round + index) % names.length];
      mounts[name].setResult(shape.result);
      const fake = mounts[name].fake;
      const figures = { ...(await alone(fake, shape)), ...(await paused(fake, shape)), turn: (await inTurns(fake, shape, 1, TURNS)).busy };
      if (round > 0) samples[index][name].push(figures);
    }
  }
}
for (const { dispose } of Object.values(mounts)) await dispose();

const extra = (bySample, name, key) => bySample[name].map((s, round) => s[key] - bySample.none[round][key]);
const us = (value) => `${value.toFixed(0)} µs`;

console.log(`${ROUNDS} rounds, one agent back to back, medians; "+" is the extra over no plugin; after / before is the median of the rounds' ratios\n`);
const KEYS = ['busy', 'cpu', 'wall', 'paused', 'turn'];
const head = ['call shape', ...KEYS.flatMap((key) => [`${key}, before`, `${key}, after`, 'after / before'])];
const VERSUS = ['busy', 'cpu', 'paused', 'turn'];
if (referencePath) head.push(...VERSUS.flatMap((key) => [`${key}, reference`, 'after / reference']));
console.log(`| ${head.join(' | ')} |`);
console.log(`|${head.map(() => '---').join('|')}|`);
for (const [index, shape] of SHORT.entries()) {
  const bySample = samples[index];
  const cells = [shape.label.replaceAll('|', '\\|')];
  for (const key of KEYS) {
    const b = extra(bySample, 'before', key);
    const a = extra(bySample, 'after', key);
    cells.push(`+${us(median(b))}`, `+${us(median(a))}`, `${median(a.map((value, round) => value / b[round])).toFixed(2)}×`);
  }
  for (const key of referencePath ? VERSUS : []) {
    const r = extra(bySample, 'reference', key);
    const a = extra(bySample, 'after', key);
    cells.push(`+${us(median(r))}`, `${median(a.map((value, round) => value / r[round])).toFixed(2)}×`);
  }
  console.log(`| ${cells.join(' | ')} |`);
}
console.log(`\nno plugin, busy / cpu per call: ${SHORT.map((shape, index) => `${shape.tool} ${us(median(samples[index].none.map((s) => s.busy)))} / ${us(median(samples[index].none.map((s) => s.cpu)))}`).join('; ')}`);
