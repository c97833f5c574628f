// @ts-check
// Which Python: an interpreter's version, and the base interpreter an environment is made from.
import { spawnSync } from 'node:child_process';

import { EnvironmentUnavailable, MINIMUM_PYTHON, minimum } from './package.js';

/** Tried in order when the plugin prepares its own environment; the first new enough one is used. */
const BASE_INTERPRETERS = ['python3', 'python', 'python3.14', 'python3.13', 'python3.12', 'python3.11', 'python3.10'];

/** `[major, minor]` of an interpreter, or an object saying why it could not be run. */
export function pythonVersion(command, env = process.env) {
  const probe = spawnSync(command, ['-c', 'import sys; print(*sys.version_info[:2])'], {
    encoding: 'utf8',
    env,
    timeout: 30_000,
  });
  if (probe.error) return { failure: /** @type {NodeJS.ErrnoException} */ (probe.error).code ?? probe.error.message };
  const version = /^(\d+) (\d+)$/.exec(probe.stdout.trim());
  if (probe.status !== 0 || !version) return { failure: `exit ${probe.status}: ${probe.stderr.trim().split('\n').at(-1)}` };
  return [Number(version[1]), Number(version[2])];
}

/** @param {readonly number[]} version `[major, minor]` */
export function isSupported([major, minor]) {
  return major > MINIMUM_PYTHON[0] || (major === MINIMUM_PYTHON[0] && minor >= MINIMUM_PYTHON[1]);
}

/** The first interpreter on PATH that is new enough to build the environment from. */
export function baseInterpreter(env) {
  const tooOld = [];
  for (const command of BASE_INTERPRETERS) {
    const version = pythonVersion(command, env);
    if (!Array.isArray(version)) continue;
    if (isSupported(version)) return { command, version };
    tooOld.push(`${command} is ${version.join('.')}`);
  }
  if (tooOld.length) {
    throw new EnvironmentUnavailable(
      `the worker needs Python >= ${minimum}, but ${tooOld.join(', ')}. Install Python >= ${minimum} ` +
        '(Debian/Ubuntu: `apt-get install python3`), or set RTB_PYTHON to one that has the worker\'s packages.',
    );
  }
  throw new EnvironmentUnavailable(
    `the worker needs Python >= ${minimum} and none is on PATH (tried ${BASE_INTERPRETERS.join(', ')}). ` +
      'Install it (Debian/Ubuntu: `apt-get install python3 python3-venv`) and boot again.',
  );
}
