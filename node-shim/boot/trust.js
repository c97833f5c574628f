// @ts-check
// Who may have written a file or folder: what the plugin runs or reads from its cache must be this
// user's, writable by no one else, and reached through no link another user could plant.
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/** This process's uid; undefined where there are no uids (Windows: no ownership checks there). */
export const myUid = () => process.getuid?.();

function writers(mode) {
  const group = mode & 0o020;
  const others = mode & 0o002;
  return group && others ? 'its group and others' : group ? 'its group' : 'others';
}

/**
 * Why `path` may not be trusted, or null: it must be this user's, writable by no one else, and no
 * symbolic link (except `link`: a venv's interpreter is a link to the Python it was made from).
 */
export function distrust(path, { directory = false, link = false } = {}) {
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
export function distrustCache(folder) {
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

export function makePrivateFolder(folder) {
  makeFolders(folder, 0o700);
  chmodSync(folder, 0o700); // whatever the umask
}

/**
 * `mkdir -p`, failing where a folder cannot be made: Node's recursive mkdirSync retries for ever,
 * the CPU busy and dsh's boot hung, where mkdir answers ENOENT under a folder that exists (an
 * XDG_CACHE_HOME under /proc).
 */
function makeFolders(folder, mode) {
  const missing = [];
  for (let current = folder; !existsSync(current) && dirname(current) !== current; current = dirname(current)) {
    missing.unshift(current);
  }
  for (const path of missing) {
    try {
      mkdirSync(path, { mode });
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
    }
  }
}

/** A JSON file of ours, or undefined when it is missing, unreadable or not to be trusted. */
export function readJson(file) {
  try {
    if (distrust(file)) return undefined;
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/** The names in a folder; none when it cannot be read. */
export function entries(folder) {
  try {
    return readdirSync(folder);
  } catch {
    return [];
  }
}
