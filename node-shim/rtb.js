#!/usr/bin/env node
// @ts-check
// `rtb` from an npm or pnpm install (`npx rtb …` in the profile): the Python package's own
// command line (`python -m breaker`), run in the worker's environment, prepared first when the
// plugin has not booted yet. The same `rtb` as a `pip install` of the Python package gives.
import { spawnSync } from 'node:child_process';

import { EnvironmentUnavailable, pythonEnvironment, workerInterpreter } from './environment.js';

function log(text) {
  process.stderr.write(`rtb: ${text}\n`);
}

let python;
try {
  python = workerInterpreter({ log });
} catch (error) {
  if (!(error instanceof EnvironmentUnavailable)) throw error;
  log(error.message);
  process.exit(2);
}
// PYTHONSAFEPATH keeps the working directory, which may hold a `breaker/` of its own, off sys.path.
const run = spawnSync(python.command, ['-m', 'breaker', ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { ...pythonEnvironment(process.env, undefined, python), PYTHONSAFEPATH: '1' },
});
if (run.error) {
  log(`cannot run ${python.command} (from ${python.chosenBy}): ${run.error.message}`);
  process.exit(2);
}
if (run.signal) process.kill(process.pid, run.signal);
process.exit(run.status ?? 1);
