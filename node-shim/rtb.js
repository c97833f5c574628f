#!/usr/bin/env node
// @ts-check
// `rtb` from an npm or pnpm install (`npx --no rtb …` in the profile): the Python package's own
// command line (`python -m breaker`), run in the worker's environment, prepared first when the
// plugin has not booted yet, with what only rtb uses (installed by the first rtb: a boot fetches
// only the worker's packages). The same `rtb` as a `pip install` of the Python package gives.
import { spawnSync } from 'node:child_process';
import { delimiter } from 'node:path';

import { EnvironmentUnavailable, pythonEnvironment, rtbPackages, workerInterpreter } from './boot/environment.js';

function log(text) {
  process.stderr.write(`rtb: ${text}\n`);
}

/** `env` with `packages` importable after the package's own `breaker/`. */
function withPackages(env, packages) {
  return packages ? { ...env, PYTHONPATH: `${env.PYTHONPATH}${delimiter}${packages}` } : env;
}

let python;
let packages; // what only rtb uses (zstandard, pyyaml): installed by the first rtb, not by a boot
try {
  python = workerInterpreter({ log, prefix: 'rtb: ' });
  packages = rtbPackages(python, { log });
} catch (error) {
  if (!(error instanceof EnvironmentUnavailable)) throw error;
  log(error.message);
  process.exit(2);
}
// PYTHONSAFEPATH keeps the working directory, which may hold a `breaker/` of its own, off sys.path.
const run = spawnSync(python.command, ['-m', 'breaker', ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: withPackages({ ...pythonEnvironment(process.env, undefined, python), PYTHONSAFEPATH: '1' }, packages),
});
if (run.error) {
  log(`cannot run ${python.command} (from ${python.chosenBy}): ${run.error.message}`);
  process.exit(2);
}
if (run.signal) process.kill(process.pid, run.signal);
process.exit(run.status ?? 1);
