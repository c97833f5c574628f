// @ts-check
// The slots of the Int32Array that the bridge's main thread (bridge.js) and its helper thread
// (bridge-thread.js) share, by name. A fd slot holds -1 until the helper publishes the fd, -2 once
// the main thread has given up on that worker (a fd published after is closed by the helper), -3
// where there is none (pipes, no FIFOs), and -4 once the main thread took the fd for its event loop.
export const SLOT = Object.freeze({
  /** Bumped, then notified, by the helper with every message it posts to the main thread. */
  WAKE: 0,
  /** The non-blocking write end of the worker's stdin, for the main thread's own writes. */
  STDIN_FD: 1,
  /** Request frames handed to the helper and not yet written by it. */
  QUEUED: 2,
  /** The blocking read end of the worker's stdout, for the main thread's own reads. */
  STDOUT_FD: 3,
  /** When the main thread's blocking read is due, as `dueSlot` puts it (0: not waiting). */
  DEADLINE: 4,
  /** The deadline the helper's watchdog sleeps until (0: it waits for the next one). */
  WATCHED: 5,
  /** A non-blocking read end of the worker's stdout: replies already there, taken without waiting. */
  DRAIN_FD: 6,
  /** The non-blocking read end of the worker's fd 3, where it writes replies nobody blocks for. */
  LATER_FD: 7,
  /** A write end of the worker's stdout FIFO that the watchdog of a worker the main thread owns
   * writes a byte into at a passed deadline (adopted-thread.js); whoever takes it closes it. */
  NUDGE_FD: 8,
});

/** The shared buffer's size: one 4-byte slot each. */
export const SLOTS_BYTES = 4 * Object.keys(SLOT).length;

/**
 * A deadline (ms on the clock) as SLOT.DEADLINE holds it: ms after the worker's `clockBase`,
 * wrapped to 32 bits, since a worker may live past the 24.8 days an Int32 counts; never 0, which
 * means not waiting (a deadline that wraps to 0 is taken 1 ms later).
 */
export function dueSlot(deadline, clockBase) {
  return Math.ceil(deadline - clockBase) | 0 || 1;
}

/**
 * The ms from `now` (on the clock) until `due` (a `dueSlot`), 0 or less once it has passed: never
 * before the deadline. Counted in 32-bit wrapped arithmetic, right whatever the worker's age, as a
 * deadline is never 2^31 ms (24.8 days) away (a request is given a day at most).
 */
export function msUntil(due, now, clockBase) {
  return (due - Math.floor(now - clockBase)) | 0;
}

/** Whether `due` comes before `other` (both `dueSlot`s, in wrapped arithmetic as `msUntil`). */
export function dueBefore(due, other) {
  return ((due - other) | 0) < 0;
}
