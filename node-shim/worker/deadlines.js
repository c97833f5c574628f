// @ts-check
// What a request to the worker is given before the worker counts as hung: the start deadline
// while a worker is fresh, else the guard deadline plus what restoring an agent's journal adds;
// plus the work queued at the worker ahead of it (`Backlog`), which is work, not a hang.
import { clock } from './clock.js';

/**
 * A restored agent's journal is waited for this much longer than a call: its requests, and its
 * bytes (the worker decides about 100 MB/s; five times slower is allowed for).
 */
const RESTORE_MS_PER_REQUEST = 1;
const RESTORE_BYTES_PER_MS = 20_000;
/** What a request queued ahead of a call may cost the worker (an event takes ~20 µs). */
const QUEUED_MS_PER_REQUEST = 0.1;
/** Frames from this size on are remembered until answered: their bytes add to the deadlines of
 * the requests behind them. */
const LARGE_FRAME_BYTES = 64 * 1024;

/**
 * When the reply to request `id` is due, for every request that waits for one (`call` and
 * `ask`): `timeoutMs` from `since` (when the caller started on it), and whatever the caller
 * spent, at least a quarter of the guard deadline from now; plus the work queued at the worker
 * up to and including this request (`backlog`), which is work, not a hang: 0.1 ms a request, and
 * the bytes of its large frames at the rate a restore is given. A healthy worker is never killed
 * for the shim's time, nor for the large calls it was sent.
 * @param {{guardTimeoutMs: number}} settings @param {Backlog} backlog
 */
export function replyDue(settings, backlog, id, since, timeoutMs) {
  return Math.max(since + timeoutMs, clock() + settings.guardTimeoutMs / 4) + backlog.queuedMs(id);
}

/** How much longer than a call restoring `requests` of `weight` bytes may take, in ms. */
export function restoreMs(requests, weight) {
  return requests * RESTORE_MS_PER_REQUEST + weight / RESTORE_BYTES_PER_MS;
}

/**
 * What a worker's first request after its configuration may take besides the call: the worker
 * imports its decision core then, unless it was idle long enough to have done so (breaker/worker.py,
 * CORE_AFTER_IDLE_S; ~35 ms on an idle machine), allowed for fifty times slower.
 */
export const CORE_IMPORT_MS = 2000;

/**
 * The time a request is given: the start deadline while its worker is `fresh`, else the guard
 * deadline and what restoring its agent's journal (`restoring` ms) adds, and CORE_IMPORT_MS for a
 * worker's first request (`first`), within the start one.
 */
export function timeoutFor({ guardTimeoutMs, startTimeoutMs }, fresh, restoring, first = false) {
  return fresh ? startTimeoutMs : Math.min(startTimeoutMs, guardTimeoutMs + restoring + (first ? CORE_IMPORT_MS : 0));
}

/** The requests sent to one worker and not yet known answered: what is queued ahead of a reply. */
export class Backlog {
  constructor(answeredId = 0) {
    this.answeredId = answeredId; // every request up to this one is answered
    this.configuring = answeredId + 1; // a new worker's first request: its configuration
    this.large = []; // {id, bytes} of the large frames sent and not known answered, oldest first
  }

  /** Whether the worker has answered a request after its configuration: the first such request
   * waits for the worker to import its decision core (`timeoutFor`'s `first`). */
  get primed() {
    return this.answeredId > this.configuring;
  }

  /** Request `id` went out, `bytes` long. */
  sent(id, bytes) {
    if (bytes >= LARGE_FRAME_BYTES) this.large.push({ id, bytes });
  }

  /** The reply to request `id` came (replies come in order: everything before it is answered). */
  answered(id) {
    if (Number.isInteger(id) && id > this.answeredId) this.answeredId = id;
  }

  /** What the requests queued at the worker up to and including `id` may cost it, in ms. */
  queuedMs(id) {
    while (this.large.length > 0 && this.large[0].id <= this.answeredId) this.large.shift();
    let bytes = 0;
    for (const frame of this.large) if (frame.id <= id) bytes += frame.bytes;
    return (id - 1 - this.answeredId) * QUEUED_MS_PER_REQUEST + bytes / RESTORE_BYTES_PER_MS;
  }
}
