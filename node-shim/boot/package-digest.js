// @ts-check
// The package's code by content: its digest, and what an environment keeps per digest (the
// configurations that code accepted, its compiled modules); and the variables a Python process of
// this package runs with.
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, delimiter, dirname, join } from 'node:path';

import { PACKAGE_ROOT } from './package.js';
import { entries, makePrivateFolder, readJson } from './trust.js';

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
const DIGESTS = 'digests';
/**
 * The package's files must be this much older than a boot before it keeps their digest by their
 * times: file times are coarse (a rewrite within the same tick keeps them), so only a signature
 * of files that settled before it was taken tells them from any later rewrite.
 */
const SETTLED_MS = 2000;
/**
 * The digest of every Python module of the package at `root` and its manifests, read afresh each
 * time (~3 ms): files upgraded in place under a running dsh are seen by the next worker it starts.
 * The boot works it out once (worker/start.js) and passes it to what it reads per digest.
 */
export function decidingDigest(root = PACKAGE_ROOT) {
  const hash = createHash('sha256');
  for (const file of decidingFiles(root)) hash.update(file).update('\0').update(readFileSync(join(root, file))).update('\0');
  return hash.digest('hex');
}

/**
 * `decidingDigest`, kept in the environment `dir` per stat signature of the package's files (path,
 * size, times, inode): a boot after the first stats them instead of reading and hashing them all
 * (600 KB; ~20 million instructions on dsh's main thread before the worker's spawn). A signature
 * is kept only for files settled `SETTLED_MS` before `now`.
 */
export function keptDigest(dir, root = PACKAGE_ROOT, now = Date.now()) {
  const signature = createHash('sha256');
  let newest = 0;
  for (const file of decidingFiles(root)) {
    const { size, mtimeMs, ctimeMs, ino } = statSync(join(root, file));
    signature.update(`${file}\0${size}\0${mtimeMs}\0${ctimeMs}\0${ino}\0`);
    newest = Math.max(newest, mtimeMs, ctimeMs);
  }
  const name = `${signature.digest('hex').slice(0, 32)}.json`;
  const kept = readJson(join(dir, DIGESTS, name));
  if (typeof kept === 'string' && /^[0-9a-f]{64}$/.test(kept)) return kept;
  const digest = decidingDigest(root);
  if (newest <= now - SETTLED_MS) keep(join(dir, DIGESTS), name, digest);
  return digest;
}

/** `value` as JSON in `folder` under `name` (a few dozen files at most; then they start over). */
function keep(folder, name, value) {
  try {
    if (entries(folder).length >= ACCEPTED_KEPT) rmSync(folder, { recursive: true, force: true });
    makePrivateFolder(folder);
    const partial = join(folder, `${name}.${process.pid}-${randomBytes(4).toString('hex')}`);
    writeFileSync(partial, JSON.stringify(value), { mode: 0o600 });
    renameSync(partial, join(folder, name));
  } catch {
    // a read-only cache only means the next boot works it out again
  }
}

// Infinity and NaN spelled apart from null (JSON's spelling of them), which they are not.
const spelled = (_key, value) => (typeof value === 'number' && !Number.isFinite(value) ? { '\u0000': String(value) } : value);

function acceptedFile(dir, config, digest) {
  const key = createHash('sha256').update(digest).update(JSON.stringify(config, spelled)).digest('hex').slice(0, 32);
  return join(dir, ACCEPTED, `${key}.json`);
}

/**
 * The settings the worker of the environment in `dir` answered when this package's code last
 * accepted `config` (exactly that value), or undefined. Only accepted configurations are kept, so
 * a bad one always waits for the worker's verdict.
 */
export function acceptedSettings(dir, config, root = PACKAGE_ROOT, digest = undefined) {
  try {
    const kept = readJson(acceptedFile(dir, config, digest ?? decidingDigest(root)));
    return kept && typeof kept === 'object' && typeof kept.countedTools === 'string' ? kept : undefined;
  } catch {
    return undefined;
  }
}

/** Remember that `config` was accepted with `settings` (a few dozen at most; then they start over);
 * a read-only cache only means the next boot waits for the worker again. */
export function rememberAccepted(dir, config, settings, root = PACKAGE_ROOT, digest = undefined) {
  try {
    const file = acceptedFile(dir, config, digest ?? decidingDigest(root));
    keep(dirname(file), basename(file), settings);
  } catch {
    // the package could not be read: nothing is remembered
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
export function bytecodeFolder(dir, root = PACKAGE_ROOT, digest = decidingDigest(root)) {
  return join(dir, BYTECODE, digest.slice(0, 16));
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
export function pythonEnvironment(env = process.env, root = PACKAGE_ROOT, python = undefined, digest = undefined) {
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
    result.PYTHONPYCACHEPREFIX = bytecodeFolder(python.dir, root, digest);
  }
  return result;
}
