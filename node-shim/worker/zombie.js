// @ts-check
// How a child process ended, read without reaping it: by its owner on dsh's main thread
// (owner.js), whose event loop does not turn while a thread waits, and by the watchdog of the
// blocking reads (adopted-thread.js), which runs in a thread of its own.
import { readFileSync } from 'node:fs';

/**
 * The wait status of an exited, unreaped process (Linux's /proc: the 52nd field of a zombie's
 * stat), null when it has gone already, undefined while it runs or where there is no /proc.
 * @param {number} pid
 */
export function zombieStatus(pid) {
  let stat;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch (error) {
    return error.code === 'ENOENT' && process.platform === 'linux' ? null : undefined;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[0] === 'Z' ? Number(fields[49]) : undefined;
}
