// @ts-check
// The replies awaited through the event loop (the worker's fd 3): a promise each, settled by its
// reply, or rejected at its deadline or when its worker is given up.
import { WorkerUnavailable, timeoutError } from './worker-errors.js';

export class Awaited {
  constructor() {
    this.pending = new Map(); // id → {resolve, reject, timer}
  }

  get size() {
    return this.pending.size;
  }

  /** Whether a promise awaits the reply to request `id`. */
  has(id) {
    return this.pending.has(id);
  }

  /**
   * A promise of the reply to request `id`, rejected after `delayMs` with the timeout error of
   * `timeoutMs`, which `onTimeout` is then given. The timer is referenced: the process stays up
   * for the reply, no longer.
   */
  wait(id, delayMs, timeoutMs, onTimeout) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        const error = timeoutError(timeoutMs);
        reject(error);
        onTimeout(error);
      }, Math.max(1, delayMs));
      this.pending.set(id, { resolve, reject, timer });
    });
  }

  /** Settle the promise awaiting `reply`; false when none does. */
  settle(reply) {
    const awaited = this.pending.get(reply.id);
    if (!awaited) return false;
    this.pending.delete(reply.id);
    clearTimeout(awaited.timer);
    awaited.resolve(reply);
    return true;
  }

  /** Reject every promise still pending (their worker is gone or being replaced). */
  abandon(reason) {
    const error = new WorkerUnavailable(reason, { code: 'EXITED' });
    for (const { reject, timer } of this.pending.values()) {
      clearTimeout(timer);
      reject(error);
    }
    this.pending.clear();
  }
}
