// @ts-check
// The watchdog of the main thread's blocking reads, run by a helper thread (bridge-thread.js for
// a worker it owns, adopted-thread.js for one the main thread owns). A blocking read has no
// timeout: the main thread puts the deadline of the reply it waits for in SLOT.DEADLINE, and the
// watchdog sleeps until it and says so in SLOT.WATCHED; the main thread wakes it only for a
// deadline earlier than that, so calls in quick succession never wake it: a later deadline only
// moves its next look. At a passed deadline it calls `passed` (which kills the worker, ending the
// read) and ends.
import { writeSync } from 'node:fs';

import { SLOT, msUntil } from './slots.js';

/** How often, during a blocking read, a watchdog given `lost` looks whether the worker is gone. */
export const LOST_LOOK_MS = 20;

/**
 * Watch SLOT.DEADLINE of `state` (deadlines counted from `clockBase`, slots.js) until one passes
 * (`passed`), or until `lost()`, looked at every LOST_LOOK_MS while a read waits, says the worker
 * is gone while nothing else would end the read (`ended`).
 * @param {Int32Array} state @param {number} clockBase @param {() => void} passed
 * @param {{lost: () => boolean, ended: () => void}} [gone]
 */
export async function watchDeadlines(state, clockBase, passed, gone = undefined) {
  for (;;) {
    const deadline = Atomics.load(state, SLOT.DEADLINE);
    Atomics.store(state, SLOT.WATCHED, deadline);
    if (deadline === 0) {
      await Atomics.waitAsync(state, SLOT.DEADLINE, 0).value;
      continue;
    }
    const [seconds, nanoseconds] = process.hrtime();
    const left = msUntil(deadline, seconds * 1e3 + nanoseconds / 1e6, clockBase);
    if (left <= 0) {
      passed();
      return;
    }
    if (gone?.lost()) {
      gone.ended();
      return;
    }
    await Atomics.waitAsync(state, SLOT.DEADLINE, deadline, gone ? Math.min(left, LOST_LOOK_MS) : left).value;
  }
}

/** A byte into the stdout FIFO through its write end `fd`: a blocking read of it ends even if
 * something the worker started still holds the FIFO open. */
export function nudge(fd) {
  try {
    writeSync(fd, new Uint8Array(1));
  } catch {
    // the FIFO is full (the main thread is not blocked then) or it was closed
  }
}
