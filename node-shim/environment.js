// @ts-check
// The worker's Python environment: which interpreter runs `python -m breaker.worker`, and, when
// none is ready, preparing one.
//
// No install script is needed: pnpm 10 and later skip a dependency's build scripts, npm may run
// with --ignore-scripts, a plugin mounted from a path has no install step at all, and a
// content-addressed or read-only node_modules must not be written. So the first boot that finds
// no ready environment prepares one itself (prepare_environment.py), in the per-user cache:
//
//   <cache>/dsh-repeat-tool-breaker/            this user's, mode 700
//     py3.11-<digest of the dependency list>/   one venv per Python dependency list and interpreter
//     users/<digest of a package folder>.json   which environment each installed copy uses
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
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir, userInfo } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The directory holding `breaker/` and pyproject.toml: the Python code shipped with this module. */
export const PACKAGE_ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
export const MINIMUM_PYTHON = [3, 10];
/** Tried in order when the plugin prepares its own environment; the first new enough one is used. */
const BASE_INTERPRETERS = ['python3', 'python', 'python3.14', 'python3.13', 'python3.12', 'python3.11', 'python3.10'];
export const CACHE_FOLDER = 'dsh-repeat-tool-breaker';
const MARKER = 'rtb-environment.json';
const USERS = 'users';
/** Creating the venv and installing the dependencies may take this long before it counts as failed. */
const PREPARE_TIMEOUT_MS = 300_000;
const SETUP_SCRIPT = join(PACKAGE_ROOT, 'node-shim', 'setup.js');
const PREPARE_SCRIPT = join(PACKAGE_ROOT, 'node-shim', 'prepare_environment.py');
/** An environment's folder name: the interpreter's version and the dependency list's digest. */
const ENVIRONMENT_NAME = /^py(\d+)\.(\d+)-([0-9a-f]{12})$/;
/** What earlier versions of this plugin named theirs: `<package version>-<digest>`. */
const OLD_ENVIRONMENT_NAME = /^\d+\.\d+\.\d+[^/]*-[0-9a-f]{12}$/;
/** A preparation's or a removal's private folder, named after the process that made it. */
const WORK_FOLDER = /\.(?:partial|pruning)-(\d+)-[0-9a-f]+$/;

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

/** What an environment is made for, besides its interpreter: a digest of the dependency list. */
export function dependencyDigest(dependencies) {
  return createHash('sha256').update(JSON.stringify(dependencies)).digest('hex').slice(0, 12);
}

/**
 * The folder name of the environment for `dependencies` made from a Python `[major, minor]`.
 * @param {readonly number[]} version @param {string[]} dependencies
 */
export function environmentName([major, minor], dependencies) {
  return `py${major}.${minor}-${dependencyDigest(dependencies)}`;
}

function interpreterOf(dir) {
  return process.platform === 'win32' ? join(dir, 'Scripts', 'python.exe') : join(dir, 'bin', 'python');
}

// --- who may have written it ----------------------------------------------------------------

/** This process's uid; undefined where there are no uids (Windows: no ownership checks there). */
const myUid = () => process.getuid?.();

function writers(mode) {
  const group = mode & 0o020;
  const others = mode & 0o002;
  return group && others ? 'its group and others' : group ? 'its group' : 'others';
}

/**
 * Why `path` may not be trusted, or null: it must be this user's, writable by no one else, and no
 * symbolic link (except `link`: a venv's interpreter is a link to the Python it was made from).
 */
function distrust(path, { directory = false, link = false } = {}) {
  let stats;
  try {
    stats = lstatSync(path);
  } catch (error) {
    return `${path} cannot be examined (${error.code})`;
  }
  if (stats.isSymbolicLink() && !link) return `${path} is a symbolic link`;
  if (directory && !stats.isDirectory()) return `${path} is not a folder`;
  const uid = myUid();
  if (uid === undefined) return null;
  if (stats.uid !== uid) return `${path} belongs to another user (uid ${stats.uid})`;
  if (!stats.isSymbolicLink() && stats.mode & 0o022) {
    return `${path} can be written by ${writers(stats.mode)} (mode ${(stats.mode & 0o7777).toString(8)})`;
  }
  return null;
}

/**
 * Why another user could replace what a folder holds, or null: each folder above it (links
 * resolved) must be this user's or root's, and writable by no one else unless sticky (like /tmp).
 */
function distrustAncestors(folder) {
  const uid = myUid();
  if (uid === undefined) return null;
  let current = folder;
  while (!existsSync(current) && dirname(current) !== current) current = dirname(current);
  try {
    current = realpathSync(current);
    for (;;) {
      const stats = statSync(current);
      if (stats.uid !== uid && stats.uid !== 0) return `${current} belongs to another user (uid ${stats.uid})`;
      if (stats.mode & 0o022 && !(stats.mode & 0o1000)) {
        return `${current} can be written by ${writers(stats.mode)} (mode ${(stats.mode & 0o7777).toString(8)})`;
      }
      if (dirname(current) === current) return null;
      current = dirname(current);
    }
  } catch (error) {
    return `${current} cannot be examined (${error.code})`;
  }
}

/** Why this plugin's cache folder may not be used, or null; a folder of ours is made private (700). */
function distrustCache(folder) {
  const above = distrustAncestors(dirname(folder));
  if (above) return above;
  let stats;
  try {
    stats = lstatSync(folder);
  } catch {
    return null; // made, private, when an environment is first prepared
  }
  const uid = myUid();
  if (uid !== undefined && stats.isDirectory() && stats.uid === uid && stats.mode & 0o077) {
    chmodSync(folder, 0o700); // ours (earlier versions made it 755): nobody else needs to look inside
    stats = lstatSync(folder);
  }
  return distrust(folder, { directory: true });
}

/**
 * The folder this plugin keeps its environments in: `<cache>/dsh-repeat-tool-breaker`, unless
 * another user could change what is there; then `~/.cache/dsh-repeat-tool-breaker` of this user's
 * home, when that is safe; else a new private temporary folder (`temporary`, only when `make`).
 * `distrusted` says why the first was not used.
 */
export function cacheFolder(env = process.env, { make = true } = {}) {
  const preferred = join(cacheHome(env), CACHE_FOLDER);
  const distrusted = distrustCache(preferred);
  if (!distrusted) return { folder: preferred };
  let home = env.HOME;
  try {
    home ||= userInfo().homedir;
  } catch {
    home = null;
  }
  const fallback = home && join(home, '.cache', CACHE_FOLDER);
  if (fallback && fallback !== preferred && !distrustCache(fallback)) return { folder: fallback, distrusted };
  if (!make) return { folder: null, distrusted };
  return { folder: mkdtempSync(join(tmpdir(), `${CACHE_FOLDER}-`)), distrusted, temporary: true };
}

function makePrivateFolder(folder) {
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  chmodSync(folder, 0o700); // whatever the umask
}

/**
 * The state of the environment in `dir`: `{python}` when it is complete (the marker is written
 * last) and may be run, `{missing}`, `{broken}` (its interpreter has gone: the Python it was made
 * from was removed or upgraded) or `{distrusted: why}`.
 */
export function environmentState(dir) {
  if (!existsSync(dir) && !isLink(dir)) return { missing: true };
  const python = interpreterOf(dir);
  const why = distrust(dir, { directory: true }) ??
    distrust(dirname(python), { directory: true }) ??
    distrust(join(dir, MARKER)) ??
    distrust(python, { link: true });
  if (why && !/cannot be examined \(ENOENT\)/.test(why)) return { distrusted: why };
  if (!existsSync(join(dir, MARKER)) || !existsSync(python)) return { broken: true };
  const target = statSync(python); // the Python the venv was made from: root's or this user's
  const uid = myUid();
  if (uid !== undefined && ((target.uid !== uid && target.uid !== 0) || target.mode & 0o022)) {
    return { distrusted: `its interpreter ${realpathSync(python)} is not root's or this user's, or others can write it` };
  }
  return { python };
}

function isLink(path) {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

// --- which installed copy uses which environment --------------------------------------------

function usersFolder(folder) {
  return join(folder, USERS);
}

/** The file that records which environment the package copy at `root` uses. */
function useRecord(folder, root) {
  let real = root;
  try {
    real = realpathSync(root);
  } catch {
    // a root that is not there records nothing useful, but harms nothing either
  }
  return { file: join(usersFolder(folder), `${createHash('sha256').update(real).digest('hex').slice(0, 16)}.json`), real };
}

function readJson(file) {
  try {
    if (distrust(file)) return undefined;
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

function recordUse(folder, root, name) {
  const { file, real } = useRecord(folder, root);
  if (readJson(file)?.environment === name && readJson(file)?.root === real) return;
  makePrivateFolder(usersFolder(folder));
  const partial = `${file}.${process.pid}-${randomBytes(4).toString('hex')}`;
  writeFileSync(partial, `${JSON.stringify({ root: real, environment: name })}\n`, { mode: 0o600 });
  renameSync(partial, file);
}

function entries(folder) {
  try {
    return readdirSync(folder);
  } catch {
    return [];
  }
}

/** The environments made for `digest`, the one `root` used last first, then the newest Python first. */
function candidates(folder, root, digest) {
  const used = readJson(useRecord(folder, root).file)?.environment;
  const version = (name) => ENVIRONMENT_NAME.exec(name).slice(1, 3).map(Number);
  const mine = entries(folder)
    .filter((name) => ENVIRONMENT_NAME.exec(name)?.[3] === digest)
    .sort((a, b) => {
      const [x, y] = [version(a), version(b)];
      return y[0] - x[0] || y[1] - x[1];
    });
  return [...new Set([...(mine.includes(used) ? [used] : []), ...mine])].map((name) => join(folder, name));
}

// --- preparing ------------------------------------------------------------------------------

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

/**
 * Build the environment in a private folder beside `dir` (prepare_environment.py, whose progress
 * lines go to `progress`, stderr by default), then rename it into place: a boot that dies half-way
 * leaves no half environment, and of two boots preparing at once the first rename wins and the
 * other uses its result.
 */
function prepare(dir, identity, base, env, { progress, prefix }) {
  const partial = `${dir}.partial-${process.pid}-${randomBytes(4).toString('hex')}`;
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
    const step = spawnSync(base.command, ['-I', PREPARE_SCRIPT, partial, prefix, ...identity.dependencies], {
      encoding: 'utf8',
      env,
      timeout: PREPARE_TIMEOUT_MS,
      stdio: ['ignore', 'pipe', progress],
    });
    if (/** @type {NodeJS.ErrnoException | undefined} */ (step.error)?.code === 'ETIMEDOUT') {
      throw new EnvironmentUnavailable(`preparing the worker environment did not finish within ${PREPARE_TIMEOUT_MS / 1000} s. ${retry}`);
    }
    let outcome;
    try {
      outcome = JSON.parse(step.stdout.trim().split('\n').at(-1));
    } catch {
      outcome = { ok: false, step: 'venv', detail: `${step.error?.message ?? `exit ${step.status}`} ${step.stdout ?? ''}`.trim() };
    }
    if (!outcome.ok && outcome.step === 'pip') {
      throw new EnvironmentUnavailable(
        `installing the worker's Python packages (${identity.dependencies.join(' ')}) failed:\n${outcome.detail}\n${retry}`,
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

// --- removing what no installed copy uses ---------------------------------------------------

function isRunning(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** Remove one entry of our cache folder: a link is unlinked, a folder of ours renamed away and removed. */
function removeEntry(path) {
  const stats = lstatSync(path, { throwIfNoEntry: false });
  if (!stats) return false;
  if (stats.isSymbolicLink() || !stats.isDirectory()) {
    unlinkSync(path);
    return true;
  }
  const uid = myUid();
  if (uid !== undefined && stats.uid !== uid) return false;
  const away = `${path}.pruning-${process.pid}-${randomBytes(4).toString('hex')}`;
  renameSync(path, away); // from now on no boot finds it: it is gone at once, whatever rm takes
  rmSync(away, { recursive: true, force: true });
  return true;
}

/**
 * Remove the environments no installed copy of the plugin uses, and what interrupted preparations
 * and removals left. A copy records its environment when it boots (users/); a record whose
 * package folder is gone, or whose dependency list has changed since, no longer counts. `keep`:
 * names kept whatever the records say. Returns the names removed. Only entries named as this
 * plugin names them are touched, in the cache folder of this user.
 */
export function pruneEnvironments({ env = process.env, folder = cacheFolder(env, { make: false }).folder, keep = [] } = {}) {
  if (!folder || distrustCache(folder)) return [];
  const used = new Set(keep);
  for (const record of entries(usersFolder(folder))) {
    const file = join(usersFolder(folder), record);
    const use = readJson(file);
    let digest;
    try {
      digest = dependencyDigest(readDependencies(readFileSync(join(use.root, 'pyproject.toml'), 'utf8')));
    } catch {
      digest = undefined; // the copy is gone (or unreadable): its record goes
    }
    if (digest !== undefined && ENVIRONMENT_NAME.exec(use.environment)?.[3] === digest) used.add(use.environment);
    else if (digest === undefined) rmSync(file, { force: true });
  }
  const removed = [];
  for (const name of entries(folder)) {
    const work = WORK_FOLDER.exec(name);
    const unused = work
      ? !isRunning(Number(work[1]))
      : (ENVIRONMENT_NAME.test(name) || OLD_ENVIRONMENT_NAME.test(name)) && !used.has(name);
    if (unused && removeEntry(join(folder, name))) removed.push(name);
  }
  return removed;
}

/** Remove this plugin's cache folder and everything in it (uninstalling); returns the folder or null. */
export function removeCacheFolder(env = process.env) {
  const { folder } = cacheFolder(env, { make: false });
  if (!folder || !existsSync(folder)) return null;
  for (const name of entries(folder)) removeEntry(join(folder, name));
  removeEntry(folder);
  return folder;
}

// --- choosing ------------------------------------------------------------------------------

/**
 * The interpreter for the worker and who chose it: the `python` config key, RTB_PYTHON, or this
 * plugin's own environment for this package's dependency list. When none is ready it is prepared
 * now (announced on `log`, its progress on `progress`), unless `prepare` is false: then null.
 * Environments no installed copy uses any more are removed on the way. Throws
 * EnvironmentUnavailable, naming the fix, when no environment can be had.
 * @param {{ configured?: unknown, env?: NodeJS.ProcessEnv, log: (text: string) => void, root?: string,
 *   rebuild?: boolean, prepare?: boolean, progress?: import('node:child_process').StdioNull | 'pipe',
 *   prefix?: string }} options
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
}) {
  if (typeof configured === 'string' && configured.trim()) return { command: configured, chosenBy: 'the `python` config key' };
  if (env.RTB_PYTHON) return { command: env.RTB_PYTHON, chosenBy: 'RTB_PYTHON' };
  const identity = packageIdentity(root);
  const digest = dependencyDigest(identity.dependencies);
  const { folder, distrusted, temporary } = cacheFolder(env, { make: mayPrepare });
  if (!folder) return null;
  if (distrusted) {
    log(`not using the worker environments in ${join(cacheHome(env), CACHE_FOLDER)}: ${distrusted}; ` +
      `using ${folder} instead${temporary ? ' (private to this process, so prepared again at each boot)' : ''}`);
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
  const what = `a Python ${base.version.join('.')} venv (${base.command}) with ${identity.dependencies.join(' ')}`;
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

// --- configurations accepted before --------------------------------------------------------

/**
 * What decides whether a configuration is accepted and what the answer carries: this code, all of
 * it (every Python module of the package, whichever imports whichever, and the manifests), so no
 * list of files can fall behind the imports.
 */
function decidingFiles(root) {
  const files = ['package.json', 'pyproject.toml'];
  const walk = (folder) => {
    for (const entry of readdirSync(join(root, folder), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = `${folder}/${entry.name}`;
      if (entry.isDirectory() && entry.name !== '__pycache__') walk(path);
      else if (entry.isFile() && entry.name.endsWith('.py')) files.push(path);
    }
  };
  walk('breaker');
  return files;
}
const ACCEPTED = 'accepted';
const ACCEPTED_KEPT = 32;
/** The digest of the deciding files, per package root (a process reads them once). */
const decidingDigests = new Map();

/** The digest of every Python module of the package at `root` and its manifests. */
function decidingDigest(root) {
  let digest = decidingDigests.get(root);
  if (digest === undefined) {
    const hash = createHash('sha256');
    for (const file of decidingFiles(root)) hash.update(file).update('\0').update(readFileSync(join(root, file))).update('\0');
    digest = hash.digest('hex');
    decidingDigests.set(root, digest);
  }
  return digest;
}

function acceptedFile(dir, config, root) {
  const key = createHash('sha256').update(decidingDigest(root)).update(JSON.stringify(config)).digest('hex').slice(0, 32);
  return join(dir, ACCEPTED, `${key}.json`);
}

/**
 * The settings the worker of the environment in `dir` answered when this package's code last
 * accepted `config` (exactly that value), or undefined. Only accepted configurations are kept, so
 * a bad one always waits for the worker's verdict.
 */
export function acceptedSettings(dir, config, root = PACKAGE_ROOT) {
  try {
    const kept = readJson(acceptedFile(dir, config, root));
    return kept && typeof kept === 'object' && typeof kept.countedTools === 'string' ? kept : undefined;
  } catch {
    return undefined;
  }
}

/** Remember that `config` was accepted with `settings` (a few dozen at most; then they start over). */
export function rememberAccepted(dir, config, settings, root = PACKAGE_ROOT) {
  try {
    const file = acceptedFile(dir, config, root);
    const folder = dirname(file);
    if (entries(folder).length >= ACCEPTED_KEPT) rmSync(folder, { recursive: true, force: true });
    makePrivateFolder(folder);
    const partial = `${file}.${process.pid}-${randomBytes(4).toString('hex')}`;
    writeFileSync(partial, JSON.stringify(settings), { mode: 0o600 });
    renameSync(partial, file);
  } catch {
    // a read-only cache only means the next boot waits for the worker again
  }
}

const BYTECODE = 'bytecode';
/** Package contents whose bytecode an environment keeps; past this it starts over. */
const BYTECODE_KEPT = 8;

/**
 * Where the plugin's own environment in `dir` keeps the bytecode of the modules the package at
 * `root` runs: one folder per content of the package. Python checks bytecode against a source's
 * size and modification time only, and npm gives every file of a package the same time, so an
 * upgrade in place whose module kept its size must not find the old bytecode.
 */
export function bytecodeFolder(dir, root = PACKAGE_ROOT) {
  return join(dir, BYTECODE, decidingDigest(root).slice(0, 16));
}

// Bytecode of package contents no longer run is dropped once there are too many.
function pruneBytecode(dir) {
  try {
    if (entries(join(dir, BYTECODE)).length > BYTECODE_KEPT) rmSync(join(dir, BYTECODE), { recursive: true, force: true });
  } catch {
    // a read-only cache: Python writes no bytecode there either
  }
}

/**
 * The environment a Python process of this package runs with: its own `breaker/` importable
 * first. With `python` from the plugin's own environment, compiled modules are kept in that
 * environment (never beside the package's sources, which may be read-only), even where
 * PYTHONDONTWRITEBYTECODE is set: every start after the first reads them instead of compiling
 * the sources again (about a third of a worker's start).
 */
export function pythonEnvironment(env = process.env, root = PACKAGE_ROOT, python = undefined) {
  const inherited = env.PYTHONPATH;
  /** @type {Record<string, string | undefined>} */
  const result = {
    // pydantic would look for plugins among every installed distribution at each start: the
    // worker uses none
    PYDANTIC_DISABLE_PLUGINS: '__all__',
    ...env,
    PYTHONPATH: inherited ? `${root}${delimiter}${inherited}` : root,
  };
  if (python?.chosenBy === 'environment') {
    pruneBytecode(python.dir);
    delete result.PYTHONDONTWRITEBYTECODE;
    result.PYTHONPYCACHEPREFIX = bytecodeFolder(python.dir, root);
  }
  return result;
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
  if (error.code === 'TIMEOUT') {
    // Not run again to ask its version: an interpreter that hangs would hang that question too.
    return `the Python worker (${command} from ${source}) ${error.message}: on a slow or busy machine raise ` +
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
  return `the Python worker did not start: ${error.message}${stderr ? `\n${stderr}` : ''}`;
}
