// @ts-check
// The requests on their way to the worker's stdin (bridge.js): each encoded as it is sent, after
// those before it, into one buffer that is written whole and then reused. An event (a request
// whose reply nobody waits for) waits there for the next request, to go out in one write with it,
// or for EVENT_DELAY_MS (the timer), or until OUTBOX_FRAMES of them wait: a flood of events goes
// out as it comes, so the worker keeps up with it.
import { Frames } from './msgpack.js';

const EVENT_DELAY_MS = 2;
const OUTBOX_FRAMES = 64;

export class Outbox {
  /** @param {() => void} due what writes the events, once they waited EVENT_DELAY_MS */
  constructor(due) {
    this.frames = new Frames();
    this.count = 0; // frames waiting
    this.timer = null; // the pending timer that writes them
    this.due = () => {
      this.timer = null;
      due();
    };
  }

  /** How many frames wait. */
  get size() {
    return this.count;
  }

  /** Request `message` encoded as `{id, ...message, reply}` (no reply: none), after those
   * waiting; returns its frame's length in bytes. */
  add(message, id, reply = undefined) {
    const bytes = this.frames.addRequest(message, id, reply);
    this.count++;
    return bytes;
  }

  /** Whether as many events wait as may: they go out now. */
  get full() {
    return this.count >= OUTBOX_FRAMES;
  }

  /** The events waiting are written within EVENT_DELAY_MS (unless a timer already will). */
  wait() {
    this.timer ??= setTimeout(this.due, EVENT_DELAY_MS);
  }

  /** The frames waiting, oldest first, in one view valid until the next `add`; none wait after. */
  take() {
    this.count = 0;
    return this.frames.take();
  }
}
