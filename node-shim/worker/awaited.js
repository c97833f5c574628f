// @ts-check
// The replies awaited through the event loop (the worker's fd 3): a promise each, settled by its
// reply, or rejected at its deadline or when its worker is given up.
//
// One timer serves every deadline: it is due at the earliest deadline it was armed for, and when
// it fires it rejects what is overdue and is armed again for the earliest deadline left. A reply
// that comes in time costs no timer of its own (a timer a request costs ~4 µs of the event loop
// to set and clear, and each distinct delay a timer list of Node's own).
import { clock } from './clock.js';
import { WorkerUnavailable, timeoutError } from './worker-errors.js';

export class Awaited {
  constructor() {
    this.pending = new Map(); // id → {resolve, reject, deadline, timeoutMs, onTimeout}
    this.timer = null; // the one timer, due at `this.due` (clock ms)
    this.due = Infinity;
    this.expire = () => this.expireOverdue();
  }

  get size() {
    return this.pending.size;
  }

  /** Whether a promise awaits the reply to request `id`. */
  has(id) {
    return this.pending.has(id);
  }

  /**
   * A promise of the reply to request `id`, rejected once `deadline` (clock ms) has passed with
   * the timeout error of `timeoutMs`, which `onTimeout` is then given. The timer is referenced
   * while a reply is awaited: the process stays up for the replies, no longer.
   */
  wait(id, deadline, timeoutMs, onTimeout) {
    return new Promise((resolve, reject) => this.expect(id, deadline, timeoutMs, onTimeout, resolve, reject));
  }

  /** As `wait`, the reply given to `resolve` and the error to `reject` (no promise made). */
  expect(id, deadline, timeoutMs, onTimeout, resolve, reject) {
    this.pending.set(id, { resolve, reject, deadline, timeoutMs, onTimeout });
    this.arm(deadline);
  }

  /** Settle the promise awaiting `reply`; false when none does. */
  settle(reply) {
    const awaited = this.pending.get(reply.id);
    if (!awaited) return false;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.timer?.unref(); // due for nothing now: an idle process may exit
    awaited.resolve(reply);
    return true;
  }

  /** Reject every promise still pending (their worker is gone or being replaced). */
  abandon(reason) {
    const error = new WorkerUnavailable(reason, { code: 'EXITED' });
    this.disarm();
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const { reject } of pending) reject(error);
  }

  // The timer is due at `deadline` or before it (a later one keeps the timer it has).
  arm(deadline) {
    if (this.timer !== null && this.due <= deadline) {
      this.timer.ref();
      return;
    }
    this.disarm();
    this.due = deadline;
    this.timer = setTimeout(this.expire, Math.max(1, deadline - clock()));
  }

  disarm() {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.due = Infinity;
  }

  // The timer fired: what is overdue is rejected (in the order sent), the timer armed for the rest.
  expireOverdue() {
    this.timer = null;
    this.due = Infinity;
    const now = clock();
    for (const [id, awaited] of this.pending) {
      if (awaited.deadline > now) continue;
      this.pending.delete(id);
      const error = timeoutError(awaited.timeoutMs);
      awaited.reject(error);
      awaited.onTimeout(error); // may abandon the rest (their worker is replaced)
    }
    let earliest = Infinity;
    for (const { deadline } of this.pending.values()) earliest = Math.min(earliest, deadline);
    if (earliest < Infinity) this.arm(earliest);
  }
}
