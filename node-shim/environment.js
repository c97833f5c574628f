// The worker's Python environment: which interpreter runs `python -m breaker.worker`, and, when
// none is ready, preparing one.
//
// No install script is needed: pnpm 10 and later skip a dependency's build scripts, npm may run
// with --ignore-scripts, a plugin mounted from a path has no install step at all, and a
// content-addressed or read-only node_modules must not be written. So the first boot that finds
// no ready environment prepares one itself, in the per-user cache, keyed by this package's version
// and its Python dependency list: reinstalls and profiles share it, and an upgrade whose
// dependencies changed gets a fresh one. Only the runtime dependencies are installed (the
// `[project].dependencies` of pyproject.toml, the one list); the worker itself runs from this
// package's own `breaker/` through PYTHONPATH, so no build of the package is needed.
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The directory holding `breaker/` and pyproject.toml: the Python code shipped with this module. */
export const PACKAGE_ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
export const MINIMUM_PYTHON = [3, 10];
/** Tried in order when the plugin prepares its own environment; the first new enough one is used. */
const BASE_INTERPRETERS = ['python3', 'python', 'python3.14', 'python3.13', 'python3.12', 'python3.11', 'python3.10'];
const CACHE_FOLDER = 'dsh-repeat-tool-breaker';
const MARKER = 'rtb-environment.json';
/** Creating the venv and installing the dependencies may take this long before it counts as failed. */
const PREPARE_TIMEOUT_MS = 300_000;
const SETUP_SCRIPT = join(PACKAGE_ROOT, 'node-shim', 'setup.js');

/** The environment could not be found or prepared; the message names the fix. */
export class EnvironmentUnavailable extends Error {
  constructor(message) {
    super(message);
    this.name = 'EnvironmentUnavailable';
  }
}

const minimum = MINIMUM_PYTHON.join('.');

/**
 * The strings of `[project].dependencies` in a pyproject.toml text. Reads only that one array of
 * plain strings (what this package writes there), and refuses anything else rather than guess.
 */
export function readDependencies(pyproject) {
  const unreadable = (why) => new EnvironmentUnavailable(`cannot read [project].dependencies of pyproject.toml: ${why}`);
  const lines = pyproject.split(/\r?\n/);
  const start = lines.findIndex((line) => /^\s*\[project\]\s*(#.*)?$/.test(line));
  if (start < 0) throw unreadable('no [project] table');
  const end = lines.findIndex((line, index) => index > start && /^\s*\[/.test(line));
  const table = lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
  const opening = /^\s*dependencies\s*=\s*\[/m.exec(table);
  if (!opening) throw unreadable('no dependencies key');
  const dependencies = [];
  let index = opening.index + opening[0].length;
  for (;;) {
    const token = /\s*(?:#[^\n]*\s*)*/y;
    token.lastIndex = index;
    index += token.exec(table)[0].length;
    const quote = table[index];
    if (quote === ']') return dependencies;
    if (quote !== '"' && quote !== "'") throw unreadable(`unexpected ${JSON.stringify(table.slice(index, index + 20))}`);
    const close = table.indexOf(quote, index + 1);
    const text = close < 0 ? '' : table.slice(index + 1, close);
    if (close < 0 || text.includes('\n') || (quote === '"' && text.includes('\\'))) {
      throw unreadable(`an unterminated or escaped string near ${JSON.stringify(table.slice(index, index + 20))}`);
    }
    dependencies.push(text);
    const separator = /\s*(?:#[^\n]*\s*)*(,|\])/y;
    separator.lastIndex = close + 1;
    const found = separator.exec(table);
    if (!found) throw unreadable(`expected , or ] after ${JSON.stringify(text)}`);
    if (found[1] === ']') return dependencies;
    index = separator.lastIndex;
  }
}

/** This package's version and Python runtime dependencies: what identifies its environment. */
export function packageIdentity(root = PACKAGE_ROOT) {
  const { name, version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const dependencies = readDependencies(readFileSync(join(root, 'pyproject.toml'), 'utf8'));
  return { name, version, dependencies };
}

/** `$XDG_CACHE_HOME`, or `~/.cache` (the XDG spec ignores a relative XDG_CACHE_HOME). */
export function cacheHome(env = process.env) {
  const configured = env.XDG_CACHE_HOME;
  return configured && isAbsolute(configured) ? configured : join(env.HOME || homedir(), '.cache');
}

/** Where the environment of this version and dependency list lives. */
export function environmentDir({ version, dependencies }, env = process.env) {
  const digest = createHash('sha256').update(JSON.stringify([version, dependencies])).digest('hex');
  return join(cacheHome(env), CACHE_FOLDER, `${version}-${digest.slice(0, 12)}`);
}

function interpreterOf(dir) {
  return process.platform === 'win32' ? join(dir, 'Scripts', 'python.exe') : join(dir, 'bin', 'python');
}

/** The environment's interpreter, when a complete environment is there (the marker is written last). */
export function readyInterpreter(dir) {
  const python = interpreterOf(dir);
  return existsSync(join(dir, MARKER)) && existsSync(python) ? python : null;
}

/** `[major, minor]` of an interpreter, or an object saying why it could not be run. */
export function pythonVersion(command, env = process.env) {
  const probe = spawnSync(command, ['-c', 'import sys; print(*sys.version_info[:2])'], {
    encoding: 'utf8',
    env,
    timeout: 30_000,
  });
  if (probe.error) return { failure: probe.error.code ?? probe.error.message };
  const version = /^(\d+) (\d+)$/.exec(probe.stdout.trim());
  if (probe.status !== 0 || !version) return { failure: `exit ${probe.status}: ${probe.stderr.trim().split('\n').at(-1)}` };
  return [Number(version[1]), Number(version[2])];
}

export function isSupported([major, minor]) {
  return major > MINIMUM_PYTHON[0] || (major === MINIMUM_PYTHON[0] && minor >= MINIMUM_PYTHON[1]);
}

/** The first interpreter on PATH that is new enough to build the environment from. */
function baseInterpreter(env) {
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

function lastLines(text, count = 6) {
  return text.trim().split('\n').slice(-count).join('\n');
}

function runStep(command, args, env, what, fix) {
  const step = spawnSync(command, args, { encoding: 'utf8', env, timeout: PREPARE_TIMEOUT_MS });
  if (step.error?.code === 'ETIMEDOUT') {
    throw new EnvironmentUnavailable(`${what} did not finish within ${PREPARE_TIMEOUT_MS / 1000} s. ${fix}`);
  }
  if (step.error || step.status !== 0) {
    const said = lastLines(`${step.stderr ?? ''}\n${step.stdout ?? ''}`) || String(step.error?.message ?? '');
    throw new EnvironmentUnavailable(`${what} failed:\n${said}\n${fix}`);
  }
}

/**
 * Build the environment in a private folder beside `dir`, then rename it into place: a boot that
 * dies half-way leaves no half environment, and of two boots preparing at once the first rename
 * wins and the other uses its result.
 */
function prepare(dir, identity, base, env) {
  const partial = `${dir}.partial-${process.pid}-${randomBytes(4).toString('hex')}`;
  const retry = `With network access, run \`node ${SETUP_SCRIPT}\` (or boot again), or set RTB_PYTHON ` +
    `to a Python >= ${minimum} that has ${identity.dependencies.join(' ')}.`;
  try {
    mkdirSync(dirname(dir), { recursive: true });
  } catch (error) {
    throw new EnvironmentUnavailable(
      `cannot create the worker environment's cache folder ${dirname(dir)} (${error.code}). ` +
        'Set XDG_CACHE_HOME to a writable folder, or RTB_PYTHON to a prepared interpreter.',
    );
  }
  try {
    runStep(
      base.command,
      ['-m', 'venv', partial],
      env,
      `\`${base.command} -m venv\` (Python ${base.version.join('.')})`,
      'On Debian/Ubuntu the venv module is a separate package: `apt-get install python3-venv`, then boot again.',
    );
    runStep(
      interpreterOf(partial),
      ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-input', ...identity.dependencies],
      env,
      `installing the worker's Python packages (${identity.dependencies.join(' ')})`,
      retry,
    );
    const marker = { ...identity, python: base.version.join('.'), base: base.command, prepared: new Date().toISOString() };
    writeFileSync(join(partial, MARKER), `${JSON.stringify(marker, null, 2)}\n`);
    try {
      renameSync(partial, dir);
    } catch (error) {
      if (!readyInterpreter(dir)) throw error; // not a lost race: report it
    }
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
  return interpreterOf(dir);
}

/**
 * The interpreter for the worker and who chose it: the `python` config key, RTB_PYTHON, or this
 * plugin's own environment, prepared now when it is not ready (announced on `log`, with the time
 * it took). Throws EnvironmentUnavailable, naming the fix, when no environment can be had.
 */
export function workerInterpreter({ configured, env = process.env, log, root = PACKAGE_ROOT, rebuild = false }) {
  if (typeof configured === 'string' && configured.trim()) return { command: configured, chosenBy: 'the `python` config key' };
  if (env.RTB_PYTHON) return { command: env.RTB_PYTHON, chosenBy: 'RTB_PYTHON' };
  const identity = packageIdentity(root);
  const dir = environmentDir(identity, env);
  if (rebuild) rmSync(dir, { recursive: true, force: true });
  const ready = readyInterpreter(dir);
  if (ready) return { command: ready, chosenBy: 'environment', dir };
  // Only a complete environment is ever renamed into place, so one that is there but not ready
  // has lost its interpreter since (the Python it was made from was removed or upgraded).
  const broken = existsSync(dir);
  const base = baseInterpreter(env);
  const what = `a Python ${base.version.join('.')} venv (${base.command}) with ${identity.dependencies.join(' ')}`;
  log(broken
    ? `the worker environment ${dir} no longer has a working Python: preparing it again (${what})`
    : `no worker environment for ${identity.name} ${identity.version} yet: preparing ${dir} ` +
      `(${what}); this happens once per version`);
  const started = performance.now();
  let command;
  try {
    if (broken) rmSync(dir, { recursive: true, force: true });
    command = prepare(dir, identity, base, env);
  } catch (error) {
    if (error instanceof EnvironmentUnavailable) throw error;
    throw new EnvironmentUnavailable(
      `preparing the worker environment ${dir} failed: ${error.message}. Fix the cause and run ` +
        `\`node ${SETUP_SCRIPT}\`, or set RTB_PYTHON to a Python >= ${minimum} that has ${identity.dependencies.join(' ')}.`,
    );
  }
  log(`worker environment ready after ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return { command, chosenBy: 'environment', dir };
}

/** The environment a Python process of this package runs with: its own `breaker/` importable first. */
export function pythonEnvironment(env = process.env, root = PACKAGE_ROOT) {
  const inherited = env.PYTHONPATH;
  return { ...env, PYTHONPATH: inherited ? `${root}${delimiter}${inherited}` : root };
}

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
  return `the Python worker did not start: ${error.message}${stderr ? `\n${stderr}` : ''}`;
}
