// @ts-check
// What waits for the event loop to be idle: sends no call waits on (the event of a call let
// through on a pass, a result whose reply brings the next passes: index.js), run in the order
// they were made, once this turn of the event loop is over, or sooner, when another request is
// about to go out (it must not overtake them: bridge.js runs them first).
//
// A send may also wait longer (`defer`): one no call waits on (a call on a pass, a result whose
// reply is not wanted yet) waits for the next send that must go, or DEFER_MS at most, rather than
// cost a write, and a worker asleep a wake-up, for it alone.

/** The longest a deferred send waits when nothing else goes out, in ms: longer than dsh takes
 * between the calls of one model turn, far shorter than a model takes between turns (so a
 * deferred send goes with the next call's of the turn, or on its own while the model thinks). */
export const DEFER_MS = 2;

/** Sends waiting beyond which one more is not deferred: it goes at the next idle moment. */
export const DEFERRED_AT_MOST = 16;

export class IdleSends {
  /**
   * @param {(text: string) => void} log one line for the operator
   * @param {() => void} [done] what `flush` runs after the sends by default: while they run
   *   (`running`), the events they make wait for them rather than for a timer of their own, and
   *   bridge.js then writes whatever they left, in one write
   * @param {number} [deferMs] the longest a deferred send waits (DEFER_MS)
   */
  constructor(log, done = () => {}, deferMs = DEFER_MS) {
    this.log = log;
    this.done = done;
    this.deferMs = deferMs;
    this.waiting = []; // sends, oldest first
    this.timer = null; // the pending turn of the event loop that runs them, or a deferred send's
    this.soon = false; // the timer is the next idle moment's: a send waits that must go then
    this.running = false; // the sends of a flush are running
    this.fire = () => {
      this.timer = null; // it fired: nothing to clear
      this.flush();
    };
  }

  /** Run the waiting sends now, then `done` (a caller whose own request follows at once, and
   * carries what they left, gives nothing to do instead). */
  flush(done = this.done) {
    if (this.waiting.length === 0) return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.soon = false;
    const waiting = this.waiting;
    this.waiting = [];
    const outer = this.running; // a send that made more and flushed them: the outer flush ends it
    this.running = true;
    for (const send of waiting) this.attempt(send);
    this.running = outer;
    if (!outer) this.attempt(done);
  }

  attempt(send) {
    try {
      send();
    } catch (error) {
      this.log(`could not send what waited for an idle moment: ${error.message}`);
    }
  }

  /** How many sends wait. */
  get size() {
    return this.waiting.length;
  }

  /** Run `send` once the event loop is idle, or at the next `flush`, after those before it. */
  push(send) {
    this.waiting.push(send);
    if (this.soon) return;
    if (this.timer !== null) clearTimeout(this.timer); // a deferred send's: they go now, in order
    this.timer = setTimeout(this.fire, 0);
    this.soon = true;
  }

  /** Run `send` with the next send that must go (`push`) or at the next `flush`, after those
   * before it; at the latest `deferMs` from now, whatever keeps the process up (the timer does
   * not: a dsh that exits first closes the bridge, which flushes). */
  defer(send) {
    if (this.waiting.length >= DEFERRED_AT_MOST) return this.push(send);
    this.waiting.push(send);
    if (this.timer === null) this.timer = setTimeout(this.fire, this.deferMs).unref();
  }

  /** A place among the sends, kept by `send`: it runs when the sends after it or a request go
   * out (never for an idle moment alone: it sets no timer). */
  hold(send) {
    this.waiting.push(send);
  }

  /** Whether `send` waits last: nothing was pushed after it. */
  isLast(send) {
    return this.waiting.at(-1) === send;
  }
}

/**
 * `bridge.askThen` once the event loop is idle (see IdleSends): `settle` gets the reply, or the
 * error when there is none (never before this returns); `sent` runs once the request went out
 * (or failed to).
 * @param {import('./bridge.js').WorkerBridge} bridge
 * @param {(reply: any) => void} settle
 */
export function askWhenIdle(bridge, message, since, patient, sent, settle) {
  bridge.idle.push(() => askNow(bridge, message, since, patient, sent, settle));
}

/** `askWhenIdle`'s send, run now (by a send that waited and decides as it goes out to ask). */
export function askNow(bridge, message, since, patient, sent, settle) {
  try {
    bridge.askThen(message, since, patient, settle, settle);
  } catch (error) {
    queueMicrotask(() => settle(error));
  }
  sent();
}
