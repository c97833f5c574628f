// @ts-check
// Why the first worker could not answer, said with the fix.
import { spawnSync } from 'node:child_process';

import { isSupported, pythonVersion } from './interpreters.js';
import { PACKAGE_ROOT, SETUP_SCRIPT, minimum, packageIdentity } from './package.js';

/** What to do about an interpreter that does not work, by who chose it. */
function remedy(chosenBy) {
  return chosenBy === 'environment'
    ? `rebuild the plugin's environment: \`node ${SETUP_SCRIPT} --force\``
    : `point ${chosenBy} at a Python >= ${minimum}, or unset it to let the plugin prepare its own environment`;
}

/** Why the first worker could not answer (a WorkerUnavailable from the bridge), with the fix. */
export function startupFailure(error, { command, chosenBy }, root = PACKAGE_ROOT) {
  const source = chosenBy === 'environment' ? "the plugin's environment" : chosenBy;
  if (error.code === 'ENOENT' || error.code === 'EACCES') {
    return `cannot run the Python interpreter ${JSON.stringify(command)} (${error.code}) from ${source}: ${remedy(chosenBy)}.`;
  }
  if (error.code === 'TIMEOUT') {
    // Not run again to ask its version: an interpreter that hangs would hang that question too.
    return `the Python worker (${command} from ${source}) did not answer within ${error.timeoutMs} ms: on a slow or busy machine raise ` +
      `startTimeoutMs in the config; if it never answers, ${remedy(chosenBy)}.`;
  }
  const version = pythonVersion(command);
  if (Array.isArray(version) && !isSupported(version)) {
    return `the worker needs Python >= ${minimum}, but ${command} (from ${source}) is Python ${version.join('.')}: ` +
      `${remedy(chosenBy)}.`;
  }
  const missing = /ModuleNotFoundError: No module named '([^']+)'/.exec(error.stderr ?? '');
  if (missing) {
    const dependencies = packageIdentity(root).dependencies.map((text) => JSON.stringify(text)).join(' ');
    const install = chosenBy === 'environment' ? '' : `run \`${command} -m pip install ${dependencies}\`, or `;
    return `the Python worker cannot import ${missing[1]} (interpreter ${command} from ${source}): ` +
      `${install}${remedy(chosenBy)}.`;
  }
  const stderr = error.stderr?.trim();
  return `the Python worker (${command} from ${source}) did not start: ${error.message}. Fix: ${remedy(chosenBy)}.` +
    (stderr ? `\nWhat it wrote on stderr:\n${stderr}` : '');
}

/**
 * Why an interpreter chosen by hand (RTB_PYTHON, the `python` key) could not run the worker, said
 * as a boot would say it, found by importing the worker's packages with it; null when it can.
 * @param {{ command: string, chosenBy: string }} python
 */
export function chosenInterpreterProblem(python, root = PACKAGE_ROOT) {
  const modules = packageIdentity(root).worker.map((requirement) => /^[A-Za-z0-9_.-]+/.exec(requirement)?.[0].replace(/[-.]/g, '_'));
  const probe = spawnSync(python.command, ['-c', `import ${modules.join(', ')}`], { encoding: 'utf8', timeout: 60_000 });
  if (probe.error) return startupFailure(probe.error, python, root);
  if (probe.status === 0) return null;
  return startupFailure({ message: `importing ${modules.join(', ')} failed (exit ${probe.status})`, stderr: probe.stderr }, python, root);
}
