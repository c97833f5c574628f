// A worker's start with the shared temporary folder empty and crowded by another user:
// node bench/crowded_tmp.mjs [names] [rounds]
//
// Another local user can fill the sticky, world-writable temporary folder with names shaped like
// the plugin's own (`rtb-<pid of no process>-N`, made as hard links: no inodes). A start looks
// only in its private folder (node-shim/worker/fifo-folder.js), so its cost must not depend on that
// crowd. Times WorkerBridge.boot (spawn, FIFOs, the worker's answer to `configure`) with TMPDIR
// an empty folder and one holding `names` such names (default 200,000), interleaved, the order
// alternating; prints the medians and their ratio. RTB_PYTHON is the worker's interpreter.
import { spawnSync } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { WorkerBridge } from '../node-shim/worker/bridge.js';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const names = Number(process.argv[2] ?? 200_000);
const rounds = Number(process.argv[3] ?? 7);
const python = process.env.RTB_PYTHON || 'python3';

const scratch = mkdtempSync(join(tmpdir(), 'rtb-bench-crowded-'));
const empty = join(scratch, 'empty');
const crowded = join(scratch, 'crowded');
const seeds = join(scratch, 'seeds');
for (const folder of [empty, crowded, seeds]) mkdirSync(folder);
const gone = spawnSync('true').pid;
const made = performance.now();
for (let n = 0; n < names; n++) {
  if (n % 50_000 === 0) writeFileSync(join(seeds, String(n)), ''); // ~65,000 links a file at most
  linkSync(join(seeds, String(n - (n % 50_000))), join(crowded, `rtb-${gone}-${n}`));
}
console.log(`${names} names made in the crowded folder in ${((performance.now() - made) / 1000).toFixed(1)} s`);

function start(folder) {
  process.env.TMPDIR = folder; // the helper thread started next reads it
  const bridge = new WorkerBridge({
    command: python,
    args: ['-m', 'breaker.worker'],
    cwd: ROOT,
    env: { ...process.env, PYTHONPATH: ROOT, XDG_RUNTIME_DIR: '' },
    log: () => {},
  });
  const started = performance.now();
  const reply = bridge.boot({ op: 'configure', config: null }, 30_000);
  const took = performance.now() - started;
  bridge.close();
  if (!reply.ok) throw new Error(`the worker refused: ${reply.error}`);
  return took;
}

const seconds = { empty: [], crowded: [] };
const saved = process.env.TMPDIR;
try {
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 ? ['crowded', 'empty'] : ['empty', 'crowded'];
    for (const label of order) seconds[label].push(start(label === 'empty' ? empty : crowded));
  }
} finally {
  if (saved === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = saved;
  rmSync(scratch, { recursive: true, force: true });
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`| worker start (${rounds} interleaved rounds) | median | runs |`);
console.log('|---|---|---|');
for (const [label, values] of Object.entries(seconds)) {
  const what = label === 'empty' ? 'shared temporary folder empty' : `crowded by ${names} names of another user`;
  console.log(`| ${what} | ${median(values).toFixed(0)} ms | ${values.map((value) => value.toFixed(0)).join(', ')} |`);
}
console.log(`| ratio, crowded / empty | ${(median(seconds.crowded) / median(seconds.empty)).toFixed(2)} | |`);
