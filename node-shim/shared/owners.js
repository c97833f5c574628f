// @ts-check
// Whether the process that named a work folder after itself may still be running.
//
// A folder made for a while (a preparation, a removal, the FIFOs of a start) carries its maker's
// tag, `<pid>@<namespace>`, so a process that finds it later can tell an abandoned one from a
// live one. A pid means something only in its own PID namespace: two dsh in two containers that
// share a cache (or a temporary folder) see different processes under the same numbers. So the
// namespace is part of the tag (the kernel's boot id and the PID namespace, or the host name where
// there is no /proc), and a folder tagged by another namespace, or by an earlier version that did
// not say which, counts as live until it has not changed for longer than any maker could need.
import { createHash } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

const TAG = /^(\d+)@([0-9a-f]{8})$/;
let namespace;

/** This process's PID namespace, as a short digest: the same for every process that sees our pids. */
export function pidNamespace() {
  if (namespace === undefined) {
    let identity;
    try {
      identity = `${readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()} ${readlinkSync('/proc/self/ns/pid')}`;
    } catch {
      identity = `host ${hostname()}`;
    }
    namespace = createHash('sha256').update(identity).digest('hex').slice(0, 8);
  }
  return namespace;
}

/** The tag a work folder of this process is named with: `<pid>@<namespace>`. */
export function ownerTag() {
  return `${process.pid}@${pidNamespace()}`;
}

/** Whether `pid`, of this namespace, is a running process (another user's counts as running). */
export function isRunning(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/**
 * Whether the maker of a work folder may still be at work: `tag` is what its name carries (as
 * `ownerTag` wrote it, or anything else), `idleMs` how long since the folder last changed,
 * `staleMs` how long a maker can possibly take. A maker of this namespace is asked directly; any
 * other counts as at work until the folder has been idle for `staleMs`.
 */
export function mayBeAtWork(tag, idleMs, staleMs) {
  const parts = TAG.exec(tag);
  if (parts && parts[2] === pidNamespace()) return Number(parts[1]) === process.pid || isRunning(Number(parts[1]));
  return idleMs < staleMs;
}
