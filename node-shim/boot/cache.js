// @ts-check
// The per-user cache folder of worker environments and how it is kept:
//
//   <cache>/dsh-repeat-tool-breaker/            this user's, mode 700
//     py3.11-<digest of the dependency list>/   one venv per Python dependency list and interpreter
//     users/<digest of a package folder>.json   which environment each installed copy uses
//
// where it is (and where instead when another user could change it), the state of one
// environment, which installed copy uses which, and removing what none uses.
import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';

import { mayBeAtWork, ownerTag } from '../shared/owners.js';
import { dependencyDigest, readDependencies } from './package.js';
import { PRIVATE_PREFIX, privateFolder, temporaryBase } from '../shared/private-folder.js';
import { distrust, distrustCache, entries, makePrivateFolder, myUid, readJson } from './trust.js';

export const CACHE_FOLDER = 'dsh-repeat-tool-breaker';
/** Written last into a prepared environment: what it was made for. */
export const MARKER = 'rtb-environment.json';
const USERS = 'users';
/** The cache folder's name in this user's private temporary folder. */
const TEMPORARY_CACHE = 'environments';
/** An environment's folder name: the interpreter's version and the dependency list's digest. */
const ENVIRONMENT_NAME = /^py(\d+)\.(\d+)-([0-9a-f]{12})$/;
/** What earlier versions of this plugin named theirs: `<package version>-<digest>`. */
const OLD_ENVIRONMENT_NAME = /^\d+\.\d+\.\d+[^/]*-[0-9a-f]{12}$/;
/** A preparation's or a removal's private folder, named after the process that made it (owners.js). */
const WORK_FOLDER = /\.(?:partial|pruning)-(.+)-[0-9a-f]+$/;
/** Longer than a preparation may take (its timeout is 300 s): a work folder of another PID
 * namespace idle this long is abandoned. */
const WORK_STALE_MS = 600_000;

/** The name of a work folder beside `path`: `kind` is `partial` (a preparation) or `pruning`. */
export function workFolder(path, kind) {
  return `${path}.${kind}-${ownerTag()}-${randomBytes(4).toString('hex')}`;
}

/** `$XDG_CACHE_HOME`, or `~/.cache` (the XDG spec ignores a relative XDG_CACHE_HOME). */
export function cacheHome(env = process.env) {
  const configured = env.XDG_CACHE_HOME;
  return configured && isAbsolute(configured) ? configured : join(env.HOME || homedir(), '.cache');
}

/**
 * The folder name of the environment for `dependencies` made from a Python `[major, minor]`.
 * @param {readonly number[]} version @param {string[]} dependencies
 */
export function environmentName([major, minor], dependencies) {
  return `py${major}.${minor}-${dependencyDigest(dependencies)}`;
}

export function interpreterOf(dir) {
  return process.platform === 'win32' ? join(dir, 'Scripts', 'python.exe') : join(dir, 'bin', 'python');
}

/**
 * The folder this plugin keeps its environments in: `<cache>/dsh-repeat-tool-breaker`, unless
 * another user could change what is there; then `~/.cache/dsh-repeat-tool-breaker` of this user's
 * home, when that is safe; else `environments` in this user's private temporary folder
 * (private-folder.js; `temporary`), reused by every boot and `rtb` until the system clears it;
 * when even that cannot be had, a new private temporary folder (only when `make`). `distrusted`
 * says why the first was not used.
 */
export function cacheFolder(env = process.env, { make = true } = {}) {
  const preferred = join(cacheHome(env), CACHE_FOLDER);
  const distrusted = distrustCache(preferred);
  if (!distrusted) return { folder: preferred };
  const fallback = homeCache(env);
  if (fallback && fallback !== preferred && !distrustCache(fallback)) return { folder: fallback, distrusted };
  const temporary = temporaryCache(env, make);
  if (temporary) return { folder: temporary, distrusted, temporary: true };
  if (!make) return { folder: null, distrusted };
  return { folder: mkdtempSync(join(temporaryBase(env), PRIVATE_PREFIX)), distrusted, temporary: true, once: true };
}

/** Where each process using a temporary cache folder leaves its tag (owners.js), in that folder. */
const LIVE = 'live';
const held = new Set();

/**
 * Hold the temporary cache `folder` (`cacheFolder`'s `temporary` one) for this process: its tag is
 * left in it and, when the process exits, the folder goes with every environment in it, unless a
 * process that may still be running left its tag there too (one of another PID namespace always
 * may); a folder made for this process alone (`once`) goes whatever. So no environment is left in
 * the temporary folder once the last dsh or rtb using it has exited. One killed first leaves it to
 * the next (which reuses it) and to `setup.js --remove`.
 */
export function holdTemporary(folder, { once = false } = {}) {
  if (held.has(folder)) return;
  held.add(folder);
  const tag = join(folder, LIVE, ownerTag());
  if (!once) {
    makePrivateFolder(join(folder, LIVE));
    writeFileSync(tag, '', { mode: 0o600 });
  }
  process.once('exit', () => {
    try {
      rmSync(tag, { force: true });
      if (once || !othersLive(folder)) removeTemporary(folder, once);
    } catch {
      // exiting: what is left is the next process's, or --remove's
    }
  });
}

// Whether a process other than this one that may still be running left its tag in `folder`.
function othersLive(folder) {
  return entries(join(folder, LIVE)).some((tag) => tag !== ownerTag() && mayBeAtWork(tag, 0, Infinity));
}

// Renamed away first, so no boot finds it from then on; given back when a boot that came meanwhile
// left its tag in it before the rename.
function removeTemporary(folder, once) {
  const away = workFolder(folder, 'pruning');
  renameSync(folder, away);
  if (!once && othersLive(away)) {
    renameSync(away, folder);
    return;
  }
  rmSync(away, { recursive: true, force: true });
}

// `~/.cache/dsh-repeat-tool-breaker` of this user's home, or null when there is no home.
function homeCache(env) {
  let home = env.HOME;
  try {
    home ||= userInfo().homedir;
  } catch {
    home = null;
  }
  return home ? join(home, '.cache', CACHE_FOLDER) : null;
}

// `environments` in this user's private temporary folder, when it is safe (and, unless `make`,
// already there); else null.
function temporaryCache(env, make) {
  const base = temporaryBase(env);
  if (!make && !existsSync(join(base, `${PRIVATE_PREFIX}${myUid()}`, TEMPORARY_CACHE))) return null;
  const own = privateFolder(base);
  const folder = own && join(own, TEMPORARY_CACHE);
  return folder && !distrustCache(folder) ? folder : null;
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

export function recordUse(folder, root, name) {
  const { file, real } = useRecord(folder, root);
  if (readJson(file)?.environment === name && readJson(file)?.root === real) return;
  makePrivateFolder(usersFolder(folder));
  const partial = `${file}.${process.pid}-${randomBytes(4).toString('hex')}`;
  writeFileSync(partial, `${JSON.stringify({ root: real, environment: name })}\n`, { mode: 0o600 });
  renameSync(partial, file);
}

/** The environments made for `digest`, the one `root` used last first, then the newest Python first. */
export function candidates(folder, root, digest) {
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

// --- removing what no installed copy uses ---------------------------------------------------

/** Remove one entry of our cache folder: a link is unlinked, a folder of ours renamed away and removed. */
/** Remove the folder `path` when it is empty (rmdir); whether it was. */
function removeIfEmpty(path) {
  try {
    rmdirSync(path);
    return true;
  } catch {
    return false;
  }
}

export function removeEntry(path) {
  const stats = lstatSync(path, { throwIfNoEntry: false });
  if (!stats) return false;
  if (stats.isSymbolicLink() || !stats.isDirectory()) {
    unlinkSync(path);
    return true;
  }
  const uid = myUid();
  if (uid !== undefined && stats.uid !== uid) return false;
  const away = workFolder(path, 'pruning');
  renameSync(path, away); // from now on no boot finds it: it is gone at once, whatever rm takes
  rmSync(away, { recursive: true, force: true });
  return true;
}

// Whether the work folder at `path`, made by the process `tag` names, was left by one that is gone.
// A pid of another namespace is never taken for a dead one (owners.js): its folder waits until idle.
function isAbandoned(path, tag) {
  const stats = lstatSync(path, { throwIfNoEntry: false });
  return stats !== undefined && !mayBeAtWork(tag, Date.now() - stats.mtimeMs, WORK_STALE_MS);
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
      ? isAbandoned(join(folder, name), work[1])
      : (ENVIRONMENT_NAME.test(name) || OLD_ENVIRONMENT_NAME.test(name)) && !used.has(name);
    if (unused && removeEntry(join(folder, name))) removed.push(name);
  }
  return removed;
}

/**
 * Remove every cache folder of this plugin's, with everything in it (uninstalling): the one in
 * use, the one in this user's home, and the temporary ones (this user's private temporary folder,
 * and the folder per boot earlier versions made there); returns the folders removed.
 */
export function removeCacheFolders(env = process.env) {
  const removed = [];
  const preferred = join(cacheHome(env), CACHE_FOLDER);
  for (const folder of new Set([preferred, homeCache(env)])) {
    if (!folder || distrustCache(folder) || !existsSync(folder)) continue;
    for (const name of entries(folder)) removeEntry(join(folder, name));
    removeEntry(folder);
    removed.push(folder);
  }
  const base = temporaryBase(env);
  for (const name of entries(base)) {
    const path = join(base, name);
    const stats = lstatSync(path, { throwIfNoEntry: false });
    if (!name.startsWith(PRIVATE_PREFIX) || !stats?.isDirectory() || stats.uid !== myUid() || stats.mode & 0o077) continue;
    // Ours and private: nobody else could have put anything in it. Of this user's private folder
    // only the environments go, then the folder itself once empty (a running dsh may be making
    // its FIFOs there: then it stays).
    const own = name === `${PRIVATE_PREFIX}${myUid()}`;
    const gone = own ? join(path, TEMPORARY_CACHE) : path;
    if (existsSync(gone) && removeEntry(gone)) removed.push(gone);
    if (own && removeIfEmpty(path)) removed.push(path);
  }
  const runtime = env.XDG_RUNTIME_DIR && isAbsolute(env.XDG_RUNTIME_DIR) ? join(env.XDG_RUNTIME_DIR, `${PRIVATE_PREFIX}${myUid()}`) : '';
  if (runtime && removeIfEmpty(runtime)) removed.push(runtime);
  return removed;
}
