// @ts-check
// This user's private folder in a shared one (the temporary folder, $XDG_RUNTIME_DIR):
// `dsh-repeat-tool-breaker-<uid>`, mode 700, checked with lstat to be a real folder of this
// user's that no one else can open. Nothing another user puts beside it is ever read, and one
// that is not what it must be (a link, another user's, open to others) is not used. It holds the
// folders of starts making their FIFOs (fifo-folder.js) and, when no cache folder is safe, the
// worker environments (cache.js).
import { lstatSync, mkdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';

export const PRIVATE_PREFIX = 'dsh-repeat-tool-breaker-';

/** The temporary folder `env` names (TMPDIR), as `os.tmpdir()` reads it from this process's. */
export function temporaryBase(env = process.env) {
  return env === process.env || !env.TMPDIR || !isAbsolute(env.TMPDIR) ? tmpdir() : env.TMPDIR.replace(/(.)\/+$/, '$1');
}

/** This user's private folder under `base`, made if need be; null when there is none that is safe. */
export function privateFolder(base) {
  const uid = process.getuid?.();
  if (uid === undefined) return null;
  try {
    const above = statSync(base);
    if (!above.isDirectory() || (above.mode & 0o022 && !(above.mode & 0o1000))) return null; // others could swap it
    const folder = join(base, `${PRIVATE_PREFIX}${uid}`);
    try {
      mkdirSync(folder, { mode: 0o700 });
    } catch (error) {
      if (error.code !== 'EEXIST') return null;
    }
    const stats = lstatSync(folder);
    return stats.isDirectory() && stats.uid === uid && (stats.mode & 0o077) === 0 ? folder : null;
  } catch {
    return null;
  }
}
