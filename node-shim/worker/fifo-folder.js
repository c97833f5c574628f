// @ts-check
// Where the bridge makes its worker's FIFOs: this user's private folder (private-folder.js) in
// $XDG_RUNTIME_DIR or the temporary folder.
//
// Each start gets a fresh subfolder named after it (owners.js), where the worker makes its three
// FIFOs (breaker/streams.py); the helper thread unlinks them as soon as it has opened them, so a
// subfolder outlives its start only when a process was killed in between;
// the next start removes such leftovers. It looks only in this private folder: what other users
// put in the shared temporary folder (a million names, say) is never read, so it costs a start
// nothing and cannot make it miss its deadline. With no private folder usable the bridge uses pipes.
import { closeSync, constants, lstatSync, mkdtempSync, openSync, readdirSync, rmdirSync, unlinkSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';

import { mayBeAtWork, ownerTag } from '../shared/owners.js';
import { privateFolder, temporaryBase } from '../shared/private-folder.js';

/** What a start's folder ever holds: these three FIFOs, or the empty file PIPES_MARK. */
export const FIFO_NAMES = ['stdin', 'stdout', 'later'];
/** Left by a worker that could not make its FIFOs and keeps its pipes (breaker/streams.py). */
export const PIPES_MARK = 'pipes';
/** The worker's first byte on its stdout pipe once its FIFOs are made (breaker/streams.py). */
export const FIFOS_MADE = 0x46; // 'F'
/** Its first byte there when it was given a folder but keeps its pipes (breaker/streams.py). */
export const PIPES_KEPT = 0x50; // 'P'
/** A start's folder lives for milliseconds: one another PID namespace left idle this long is abandoned. */
const STALE_MS = 10 * 60_000;

/**
 * A new folder for one start's FIFOs, in this user's private folder, leftovers of killed starts
 * removed first; null where there is no safe place (then pipes).
 */
export function makeFifoFolder(env = process.env) {
  const bases = [env.XDG_RUNTIME_DIR, temporaryBase(env)].filter((base) => base && isAbsolute(base));
  for (const base of bases) {
    const root = privateFolder(base);
    if (!root) continue;
    removeAbandoned(root);
    return mkdtempSync(join(root, `${ownerTag()}-`));
  }
  return null;
}

// The subfolders of starts that were killed before they unlinked their FIFOs.
function removeAbandoned(root) {
  const now = Date.now();
  for (const name of readdirSync(root)) {
    const tag = /^(.+)-[^-]+$/.exec(name)?.[1];
    if (!tag) continue;
    const folder = join(root, name);
    let stats;
    try {
      stats = lstatSync(folder);
    } catch {
      continue;
    }
    if (!mayBeAtWork(tag, now - stats.mtimeMs, STALE_MS)) removeFifoFolder(folder);
  }
}

/**
 * Remove `folder` if it is ours and holds only our FIFOs; leave anything else as it is. Nothing
 * is removed recursively and no link is followed.
 */
export function removeFifoFolder(folder) {
  try {
    if (!ownedBy(folder, (stats) => stats.isDirectory())) return;
    for (const name of FIFO_NAMES) {
      const path = join(folder, name);
      if (ownedBy(path, (stats) => stats.isFIFO())) unlinkSync(path);
    }
    const mark = join(folder, PIPES_MARK);
    if (ownedBy(mark, (stats) => stats.isFile() && stats.size === 0)) unlinkSync(mark);
    rmdirSync(folder); // fails, and leaves it, when it holds anything else
  } catch {
    // gone already, not empty, or not ours to remove
  }
}

/** Whether `path` itself (not what a link points to) is this user's and of the `kind` wanted. */
function ownedBy(path, kind) {
  try {
    const stats = lstatSync(path);
    return kind(stats) && stats.uid === process.getuid?.();
  } catch {
    return false;
  }
}

/**
 * The bridge's ends of the worker's FIFOs in `folder`, none of them waiting: {keeper: a read end
 * of stdin held until the worker has opened its own, so that a request written before then waits
 * in the FIFO instead of failing; drainer: a non-blocking stdout read end; queued: a blocking stdin
 * write end (for what does not fit a direct write); direct: a non-blocking one; nudge: a
 * non-blocking stdout write end (it lets the blocking reader open at once, and the watchdog ends a
 * blocking read with a byte); reader: a blocking stdout read end; laterReader: a non-blocking read
 * end of the worker's second reply stream}. Throws (with every end opened closed) when one cannot
 * be opened.
 */
export function openFifoEnds(folder) {
  const opened = [];
  const open = (name, flags) => {
    opened.push(openSync(join(folder, name), flags));
    return opened.at(-1);
  };
  const [stdinName, stdoutName, laterName] = FIFO_NAMES;
  try {
    // Opening a FIFO blocks until the other side is open, except when it already is: a
    // non-blocking reader makes room for the writers, which then let the blocking reader open.
    const { O_RDONLY, O_WRONLY, O_NONBLOCK } = constants;
    const keeper = open(stdinName, O_RDONLY | O_NONBLOCK);
    const drainer = open(stdoutName, O_RDONLY | O_NONBLOCK);
    return {
      keeper,
      drainer,
      queued: open(stdinName, O_WRONLY),
      direct: open(stdinName, O_WRONLY | O_NONBLOCK),
      nudge: open(stdoutName, O_WRONLY | O_NONBLOCK),
      reader: open(stdoutName, O_RDONLY),
      laterReader: open(laterName, O_RDONLY | O_NONBLOCK),
    };
  } catch (error) {
    opened.forEach(closeSync);
    throw error;
  }
}
