// @ts-check
// The worker's Python environment: which interpreter runs `python -m breaker.worker`, and, when
// none is ready, preparing one.
//
// No install script is needed: pnpm 10 and later skip a dependency's build scripts, npm may run
// with --ignore-scripts, a plugin mounted from a path has no install step at all, and a
// content-addressed or read-only node_modules must not be written. So the first boot that finds
// no ready environment prepares one itself (prepare_environment.py), in the per-user cache
// (cache.js).
//
// Package versions and profiles with the same dependency list share one environment; an upgrade
// whose dependencies changed gets a fresh one, and an environment no installed copy uses any more
// is removed at the next boot (or by `npm run setup -- --prune`). Only the runtime dependencies are
// installed (the `[project].dependencies` of pyproject.toml, the one list); the worker itself runs
// from this package's own `breaker/` through PYTHONPATH, so no build of the package is needed.
//
// Finding a ready environment spawns nothing: a few stat calls. An environment is run only when
// nobody else could have changed it: its folders are this user's, not writable by group or others,
// and no symbolic link leads into it; a cache that fails this is not used (one line says why) and
// the environment is kept in a private folder instead.
//
// The parts: package.js (this package, its dependency list), trust.js (who may have written a
// file), cache.js (the cache folder, an environment's state, pruning), interpreters.js (which
// Python), package-digest.js (what is kept per content of the package; a worker's variables),
// startup.js (why a worker did not start).
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import {
  CACHE_FOLDER,
  MARKER,
  cacheFolder,
  cacheHome,
  candidates,
  environmentName,
  environmentState,
  holdTemporary,
  interpreterOf,
  pruneEnvironments,
  recordUse,
  removeEntry,
  workFolder,
} from './cache.js';
import { baseInterpreter } from './interpreters.js';
import { EnvironmentUnavailable, PACKAGE_ROOT, SETUP_SCRIPT, dependencyDigest, minimum, packageIdentity } from './package.js';
import { distrust, makePrivateFolder } from './trust.js';

export { CACHE_FOLDER, cacheFolder, cacheHome, environmentName, environmentState, pruneEnvironments, removeCacheFolders } from './cache.js';
export { isSupported, pythonVersion } from './interpreters.js';
export { EnvironmentUnavailable, MINIMUM_PYTHON, PACKAGE_ROOT, dependencyDigest, packageIdentity, readDependencies } from './package.js';
export { acceptedSettings, bytecodeFolder, decidingDigest, keptDigest, pythonEnvironment, rememberAccepted } from './package-digest.js';
export { startupFailure } from './startup.js';

/** Creating the venv and installing the dependencies may take this long before it counts as failed. */
const PREPARE_TIMEOUT_MS = 300_000;
const PREPARE_SCRIPT = join(PACKAGE_ROOT, 'node-shim', 'boot', 'prepare_environment.py');

// Run prepare_environment.py with `args` under the base interpreter `command`; its outcome (the
// JSON of its last line; `step: 'stopped'` when a signal ended it), progress lines on `progress`.
// `retry` ends the error of a timeout. Its temporary files (pip's, when pip runs) go into a work
// folder of its own beside `path` (TMPDIR), removed after it, or by a later prune when this
// process is killed meanwhile: nothing is left in the temporary folder.
function runPrepare(command, args, env, progress, retry, path) {
  const temporary = workFolder(path, 'partial');
  mkdirSync(temporary, { mode: 0o700 });
  let step;
  try {
    // -B: its imports (index_access.py, pinned_wheels.py) leave no __pycache__ in a linked checkout
    step = spawnSync(command, ['-I', '-B', PREPARE_SCRIPT, ...args], {
      encoding: 'utf8',
      env: { ...env, TMPDIR: temporary },
      timeout: PREPARE_TIMEOUT_MS,
      stdio: ['ignore', 'pipe', progress],
    });
  } finally {
    rmSync(temporary, { recursive: true, force: true });
  }
  if (/** @type {NodeJS.ErrnoException | undefined} */ (step.error)?.code === 'ETIMEDOUT') {
    throw new EnvironmentUnavailable(`preparing the worker environment did not finish within ${PREPARE_TIMEOUT_MS / 1000} s. ${retry}`);
  }
  if (step.signal) return { ok: false, step: 'stopped', detail: `prepare_environment.py was stopped by ${step.signal}` };
  try {
    return JSON.parse(step.stdout.trim().split('\n').at(-1));
  } catch {
    return { ok: false, step: 'venv', detail: `${step.error?.message ?? `exit ${step.status}`} ${step.stdout ?? ''}`.trim() };
  }
}

/**
 * Build the environment in a private folder beside `dir` (prepare_environment.py, whose progress
 * lines go to `progress`, stderr by default), then rename it into place: a boot that dies half-way
 * leaves no half environment, and of two boots preparing at once the first rename wins and the
 * other uses its result. Only the worker's packages are installed (`identity.worker`); what only
 * `rtb` uses comes at the first `rtb` (rtbPackages).
 */
function prepare(dir, identity, base, env, { progress, prefix }) {
  const partial = workFolder(dir, 'partial');
  const retry = `With network access, run \`node ${SETUP_SCRIPT}\` (or boot again), or set RTB_PYTHON ` +
    `to a Python >= ${minimum} that has ${identity.dependencies.join(' ')}.`;
  try {
    makePrivateFolder(dirname(dir));
  } catch (error) {
    throw new EnvironmentUnavailable(
      `cannot create the worker environment's cache folder ${dirname(dir)} (${error.code}). ` +
        'Set XDG_CACHE_HOME to a writable folder, or RTB_PYTHON to a prepared interpreter.',
    );
  }
  try {
    const pinned = identity.pinned.length ? ['--pinned', identity.pinned.join(',')] : [];
    const outcome = runPrepare(base.command, [...pinned, partial, prefix, ...identity.worker], env, progress, retry, dir);
    if (!outcome.ok && outcome.step !== 'venv') {
      throw new EnvironmentUnavailable(
        `installing the worker's Python packages (${identity.worker.join(' ')}) failed:\n${outcome.detail}\n${retry}`,
      );
    }
    if (!outcome.ok) {
      throw new EnvironmentUnavailable(
        `\`${base.command} -m venv\` (Python ${base.version.join('.')}) failed:\n${outcome.detail}\n` +
          'On Debian/Ubuntu the venv module is a separate package: `apt-get install python3-venv`, then boot again.',
      );
    }
    const marker = {
      ...identity,
      python: base.version.join('.'),
      base: base.command,
      pip: outcome.pip,
      seconds: outcome.seconds,
      prepared: new Date().toISOString(),
    };
    writeFileSync(join(partial, MARKER), `${JSON.stringify(marker, null, 2)}\n`);
    chmodSync(partial, 0o700);
    try {
      renameSync(partial, dir);
    } catch (error) {
      if (!environmentState(dir).python) throw error; // not a lost race: report it
    }
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
  return interpreterOf(dir);
}

/** The folder of an environment holding what only `rtb` uses (`later` of the package identity). */
export const RTB_PACKAGES = 'rtb-packages';

/**
 * For `rtb` in the plugin's own environment (`python`, as workerInterpreter chose it): the folder
 * holding the packages only `rtb` uses, installed now when it is not there yet (announced on
 * `log`, progress on `progress`), built beside it and renamed into place; null when `python` is
 * not the plugin's environment or nothing is missing. Throws EnvironmentUnavailable naming the fix.
 */
export function rtbPackages(python, { env = process.env, log, root = PACKAGE_ROOT, progress = 'inherit', prefix = 'rtb: ' }) {
  const identity = packageIdentity(root);
  if (python?.chosenBy !== 'environment' || identity.later.length === 0) return null;
  const folder = join(python.dir, RTB_PACKAGES);
  const why = distrust(folder, { directory: true });
  if (!why) return folder;
  if (!/cannot be examined \(ENOENT\)/.test(why)) removeEntry(folder);
  const retry = `With network access, run \`node ${SETUP_SCRIPT}\` (or \`npx --no rtb\` again), or set RTB_PYTHON ` +
    `to a Python >= ${minimum} that has ${identity.dependencies.join(' ')}.`;
  log(`rtb needs ${identity.later.join(' ')} besides the worker's packages: installing them into ${folder} (once)`);
  const started = performance.now();
  const base = baseInterpreter(env);
  const partial = workFolder(folder, 'partial');
  try {
    const outcome = runPrepare(base.command, ['--packages', python.command, partial, prefix, ...identity.later], env, progress, retry, folder);
    if (!outcome.ok) throw new EnvironmentUnavailable(`installing ${identity.later.join(' ')} for rtb failed:\n${outcome.detail}\n${retry}`);
    chmodSync(partial, 0o700);
    try {
      renameSync(partial, folder);
    } catch (error) {
      if (distrust(folder, { directory: true })) throw error; // not a lost race: report it
    }
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
  log(`ready after ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return folder;
}

// --- choosing ------------------------------------------------------------------------------

/**
 * The interpreter for the worker and who chose it: the `python` config key, RTB_PYTHON, or this
 * plugin's own environment for this package's dependency list. When none is ready it is prepared
 * now (announced on `log`, its progress on `progress`), unless `prepare` is false: then null.
 * Environments no installed copy uses any more are removed on the way. Throws
 * EnvironmentUnavailable, naming the fix, when no environment can be had. `foundEarlier`: the plugin's own
 * environment as this process found it moments ago (the early worker's), taken as it is when
 * neither the config key nor RTB_PYTHON chooses another: the boot looks it up once.
 * @param {{ configured?: unknown, env?: NodeJS.ProcessEnv, log: (text: string) => void, root?: string,
 *   rebuild?: boolean, prepare?: boolean, progress?: import('node:child_process').StdioNull | 'pipe',
 *   prefix?: string, foundEarlier?: { command: string, chosenBy: string, dir?: string } }} options
 */
export function workerInterpreter({
  configured,
  env = process.env,
  log,
  root = PACKAGE_ROOT,
  rebuild = false,
  prepare: mayPrepare = true,
  progress = 'inherit',
  prefix = '[repeat-tool-breaker] ',
  foundEarlier = undefined,
}) {
  if (typeof configured === 'string' && configured.trim()) return { command: configured, chosenBy: 'the `python` config key' };
  if (env.RTB_PYTHON) return { command: env.RTB_PYTHON, chosenBy: 'RTB_PYTHON' };
  if (foundEarlier?.chosenBy === 'environment' && !rebuild) return foundEarlier;
  const identity = packageIdentity(root);
  const digest = dependencyDigest(identity.dependencies);
  const { folder, distrusted, temporary, once } = cacheFolder(env, { make: mayPrepare });
  if (!folder) return null;
  if (temporary) holdTemporary(folder, { once });
  if (distrusted) {
    log(`not using the worker environments in ${join(cacheHome(env), CACHE_FOLDER)}: ${distrusted}; ` +
      `using ${folder} instead${once ? ' (private to this process, so prepared again at each boot and ' +
        'removed when it exits)' : temporary ? ' (your private temporary folder: removed when the last dsh ' +
        'or rtb using it exits, so prepared again at the next boot; make your home private to keep one)' : ''}`);
  }
  const found = candidates(folder, root, digest);
  if (rebuild) for (const dir of found) removeEntry(dir);
  const states = rebuild ? [] : found.map((dir) => ({ dir, ...environmentState(dir) }));
  const ready = states.find((state) => state.python);
  if (ready) {
    recordUse(folder, root, ready.dir.slice(folder.length + 1));
    pruneEnvironments({ folder });
    return { command: ready.python, chosenBy: 'environment', dir: ready.dir };
  }
  if (!mayPrepare) return null;
  for (const { dir, distrusted: why } of states) {
    if (!why) continue;
    log(`not running the worker environment ${dir}: ${why}; it is removed and prepared again`);
    removeEntry(dir);
  }
  const base = baseInterpreter(env);
  const dir = join(folder, environmentName(base.version, identity.dependencies));
  const broken = states.some((state) => state.dir === dir && state.broken);
  const what = `a Python ${base.version.join('.')} venv (${base.command}) with ${identity.worker.join(' ')}`;
  log(broken
    ? `the worker environment ${dir} no longer has a working Python: preparing it again (${what})`
    : `no worker environment for ${identity.name} ${identity.version} yet: preparing ${dir} ` +
      `(${what}); this happens once per Python dependency list`);
  const started = performance.now();
  let command;
  try {
    if (broken) removeEntry(dir);
    command = prepare(dir, identity, base, env, { progress, prefix });
  } catch (error) {
    if (error instanceof EnvironmentUnavailable) throw error;
    throw new EnvironmentUnavailable(
      `preparing the worker environment ${dir} failed: ${error.message}. Fix the cause and run ` +
        `\`node ${SETUP_SCRIPT}\`, or set RTB_PYTHON to a Python >= ${minimum} that has ${identity.dependencies.join(' ')}.`,
    );
  }
  recordUse(folder, root, dir.slice(folder.length + 1));
  const pruned = pruneEnvironments({ folder });
  log(`worker environment ready after ${((performance.now() - started) / 1000).toFixed(1)} s` +
    (pruned.length ? `; removed ${pruned.length} no installed copy uses (${pruned.join(', ')})` : ''));
  return { command, chosenBy: 'environment', dir };
}
