// @ts-check
// The first worker's configuration and its answer, which dsh's boot need not block for.
//
// `begin` starts the worker (unless the bridge has one starting already) and sends it the
// configuration; whoever reads the worker's replies next takes the answer (`FirstAnswer.take`):
// `booted`, which blocks until it has come, a request's own wait, or `answered`, a promise that
// looks for it on the event loop, never waiting (a non-blocking read, every LOOK_EVERY_MS). dsh's
// main thread then goes on loading its other plugins while the worker starts, and the boot still
// fails, loud, when the worker cannot start or refuses the configuration.
import { clock } from './clock.js';

/** How often `answered` looks for the answer: a look that finds nothing costs a few µs. */
const LOOK_EVERY_MS = 2;

/** The configuration sent to the first worker and, once it has come, the worker's answer. */
export class FirstAnswer {
  constructor(message, id, timeoutMs) {
    this.message = message;
    this.id = id;
    this.timeoutMs = timeoutMs;
    this.deadline = clock() + timeoutMs;
    /** @type {{ ok: boolean, settings?: any, error?: string } | undefined} */
    this.reply = undefined;
  }

  /**
   * Whether `reply` is the answer (not taken yet); then it is kept, and an accepted
   * configuration's settings become `bridge`'s, as for every worker it starts later.
   * @param {any} reply @param {import('./bridge.js').WorkerBridge} bridge
   */
  take(reply, bridge) {
    if (reply.id !== this.id || this.reply !== undefined) return false;
    this.reply = reply;
    if (reply.ok) {
      bridge.configureMessage = this.message;
      bridge.settings = reply.settings;
      bridge.helper?.postMessage('ready'); // the worker's stderr now goes on to dsh's
    }
    return true;
  }
}

/**
 * Send `message` (the configure request) to the first worker of `bridge`, started now unless
 * `spawn` started it already; its answer is due within `timeoutMs`.
 * @param {import('./bridge.js').WorkerBridge} bridge
 */
export function begin(bridge, message, timeoutMs) {
  if (!bridge.helper) bridge.spawn();
  bridge.first = new FirstAnswer(message, bridge.send(message), timeoutMs);
}

/**
 * The answer to `begin`'s configuration (which may be a rejection), waited for (blocking) when it
 * has not come yet; throws WorkerUnavailable when there was none in time.
 * @param {import('./bridge.js').WorkerBridge} bridge
 */
export function booted(bridge) {
  const { id, deadline, timeoutMs } = bridge.first;
  if (bridge.first.reply === undefined) bridge.waitFor(id, deadline, timeoutMs);
  bridge.drain(); // the helper's news (the worker's pid) when the reply came straight off the FIFO
  return bridge.first.reply;
}

/**
 * A promise that settles once `booted` would not wait: the answer has come, the worker has gone,
 * the deadline has passed or the bridge was closed. Its timer keeps dsh up until then (dsh awaits
 * the plugin's start).
 * @param {import('./bridge.js').WorkerBridge} bridge
 * @returns {Promise<void>}
 */
export function answered(bridge) {
  const first = bridge.first;
  return new Promise((resolve) => {
    const look = () => {
      if (!bridge.closed && first.reply === undefined) bridge.collect();
      if (bridge.closed || first.reply !== undefined || bridge.exited || clock() >= first.deadline) resolve();
      else setTimeout(look, LOOK_EVERY_MS);
    };
    look();
  });
}
