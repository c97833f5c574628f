// @ts-check
// The synchronous bridge to the Python worker, as seen from the main thread.
//
// dsh calls guards synchronously, so a verdict must come back without returning to the event loop. The main thread
// starts the worker (owner.js; a helper thread where there are no FIFOs), writes request frames and blocks for a reply
// itself (transport.js), every wait bounded by a deadline (deadlines.js) that a helper thread watches. A request need not block at all: `ask` sends
// one whose reply the worker writes to a third FIFO (its fd 3) that the event loop reads (replies.js), and returns
// a promise of it (awaited.js); where there is no FIFO, `ask` is a blocking `call`. A lost worker is replaced
// (crash-loop.js) and each agent's journal replayed into its successor before its next request.
//
// One ordered pipe carries every request, so an event sent with `notify` (no waiting) is applied by the worker
// before any later request. Events are coalesced: they wait in an outbox until the next request (or a short delay)
// and go out in one write with it (outbox.js). The worker answers an event only when it fails (on fd 3, or stdout
// where there is none); other replies come in order on their stream and are matched by id. What no call waits on
// can wait for the event loop to be idle (`idle`, idle.js): every request made after it goes after it.
import { closeSync } from 'node:fs';
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';

import { CrashLoop, RESTART_POLICY } from './crash-loop.js';
import { Awaited } from './awaited.js';
import { clock } from './clock.js';
import { Backlog, replyDue, restoreMs, timeoutFor } from './deadlines.js';
import { begin, booted } from './first-answer.js';
import { decode } from './msgpack.js';
import { IdleSends } from './idle.js';
import { Outbox } from './outbox.js';
import { Inbox, frameReader } from './replies.js';
import { waitForReply, writeFrames } from './transport.js';
import { SLOT, SLOTS_BYTES } from './slots.js';
import { MainOwner, startOwner } from './owner.js';
import { WorkerUnavailable, exitError } from './worker-errors.js';

export { clock } from './clock.js';
export { RESTART_POLICY } from './crash-loop.js';
export { WorkerUnavailable } from './worker-errors.js';

/** For a flush of the idle sends right before a request, which carries the events they left. */
const CARRIED = () => {};

/** Events between two looks for their replies: ~13 KB of replies, a fifth of a FIFO's buffer. */
const COLLECT_EVERY = 1024;

/** A worker's variables: `env` itself, or what it gives now. */
export function workerEnvironment(env) {
  return typeof env === 'function' ? env() : env;
}

export class WorkerBridge {
  /**
   * @param {object} options
   * @param {string} options.command the Python interpreter
   * @param {string[]} options.args
   * @param {string} options.cwd
   * @param {Record<string, string> | (() => Record<string, string>)} options.env the worker's
   *   variables, or what gives them afresh for each worker started (see start.js workerOptions)
   * @param {(text: string) => void} options.log one line for the operator
   * @param {(agent: number) => {requests: object[], weight: number}} [options.replay] the requests
   *   that rebuild one agent's state in a new worker, and about how many bytes they encode to
   * @param {Partial<typeof RESTART_POLICY>} [options.restartPolicy]
   */
  constructor({ command, args, cwd, env, log, replay = () => ({ requests: [], weight: 0 }), restartPolicy = {} }) {
    this.spawnOptions = { command, args, cwd, env };
    this.log = log;
    this.replay = replay;
    this.crashes = new CrashLoop(restartPolicy);
    this.nextId = 1;
    /** @type {import('node:worker_threads').Worker | MainOwner | null} who owns the current worker (owner.js) */
    this.helper = null;
    this.pid = null;
    this.exited = null; // set when the current worker is known to be gone
    this.configureMessage = null;
    /** @type {import('./first-answer.js').FirstAnswer | null} the first configuration and its answer */
    this.first = null;
    this.startingId = null; // the configure request a fresh worker has not answered yet
    this.restored = new Set(); // the agents whose journal the current worker has been given
    this.uncollected = 0; // events sent since replies were last taken
    this.settings = null;
    this.closed = false;
    this.generation = 0; // which worker: a new one knows only what the journal restores
    this.later = null; // the event loop's reader of the worker's fd 3
    this.awaiting = new Awaited(); // replies awaited through fd 3 from the current worker
    this.outbox = new Outbox(() => this.writeOutbox()); // encoded events not written yet
    this.backlog = new Backlog(); // the requests the current worker has not answered yet
    // What waits to be sent once the event loop is idle (idle.js); the events they make go out
    // once they are done, with the requests they made, in one write.
    this.idle = new IdleSends(log, () => this.writeOutbox());
  }

  /** When workers were lost since the last answered call, oldest first (crash-loop.js). */
  get losses() {
    return this.crashes.losses;
  }

  /**
   * Start the first worker (unless `spawn` started it already) and configure it, waiting up to
   * `timeoutMs`. Returns the configure reply (which may be a rejection); throws WorkerUnavailable
   * when there was no reply at all.
   */
  boot(configureMessage, timeoutMs) {
    begin(this, configureMessage, timeoutMs); // the same without blocking: first-answer.js
    return booted(this);
  }

  /**
   * One request and its reply, within the guard deadline counted from `since` (when the caller
   * started on the call: copying and encoding its arguments count), or the start deadline while a
   * fresh worker has not answered yet; a call that first restores its agent's journal gets more
   * in proportion to it. A worker found dead is replaced and the request is sent once more to its
   * successor; a worker that misses the deadline is killed and replaced, and WorkerUnavailable is
   * thrown (the caller applies onWorkerFailure). The deadline is `deadline`'s, as for `ask`.
   */
  call(message, since = clock()) {
    this.idle.flush(CARRIED); // what waits for an idle moment was asked first
    for (let attempt = 1; ; attempt++) {
      const fresh = this.ensureRunning();
      const timeoutMs = timeoutFor(this.settings, fresh, this.restore(message.agent), !this.backlog.primed);
      try {
        const id = this.send(message);
        const reply = this.waitFor(id, replyDue(this.settings, this.backlog, id, since, timeoutMs), timeoutMs);
        this.answered();
        return reply;
      } catch (error) {
        if (!(error instanceof WorkerUnavailable)) throw error;
        const giveUp = /** @type {{ code?: string }} */ (error).code === 'TIMEOUT' || attempt > 1;
        this.lost(error, { op: message.op, callFails: giveUp });
        if (giveUp) throw error;
      }
    }
  }

  /**
   * One request whose reply arrives through the event loop: a promise of the reply, rejected with WorkerUnavailable when
   * the worker is lost or misses the deadline counted from `since` (which also replaces it, as in `call`, unless the
   * request is `patient`: one no call depends on). No fd 3 (no FIFO, a worker starting): a blocking `call` (patient: an
   * event). `askThen` gives the reply to `resolve`, the failure to `reject`: no promise, no microtask on the reply's way.
   */
  ask(message, since = clock(), patient = false) {
    return new Promise((resolve, reject) => this.askThen(message, since, patient, resolve, reject));
  }

  askThen(message, since, patient, resolve, reject) {
    this.idle.flush(CARRIED); // what waits for an idle moment was asked first
    let timeoutMs;
    try {
      const fresh = this.ensureRunning();
      if (!this.openLater()) {
        const reply = patient ? (this.notify(message), { ok: false, error: 'sent as an event: no fd 3' }) : this.call(message, since);
        return void Promise.resolve(reply).then(resolve); // a microtask later, as a promise of it would be
      }
      timeoutMs = timeoutFor(this.settings, fresh, this.restore(message.agent), !this.backlog.primed);
    } catch (error) {
      return void queueMicrotask(() => reject(error));
    }
    const id = this.send(message, 'later');
    const awaiting = this.awaiting;
    const onTimeout = (error) => !patient && awaiting === this.awaiting && this.lost(error, { op: message.op, callFails: true });
    awaiting.expect(id, replyDue(this.settings, this.backlog, id, since, timeoutMs), timeoutMs, onTimeout, resolve, reject);
  }

  /**
   * An event: a request whose reply nobody waits for. It is applied before any later request; it
   * waits in the outbox to go out with the next one (see the top). A worker lost before then
   * never gets it: the journal carries what matters to its successor. With `generation`, the
   * event is for that worker only (a `commit` of a verdict it kept): dropped for any other.
   */
  notify(message, generation = undefined) {
    if (this.closed) return;
    this.idle.flush(); // what waits for an idle moment was asked first
    if (!this.helper) {
      try {
        this.ensureRunning();
      } catch (error) {
        if (error instanceof WorkerUnavailable) return; // the journal carries it to the next worker
        throw error;
      }
    }
    if (generation !== undefined && generation !== this.generation) return;
    // Replies to events (errors only) must not pile up until the next call (the worker would stall
    // writing them): every so many events, those already there are taken.
    if (!this.later && ++this.uncollected >= COLLECT_EVERY) this.collect();
    this.restore(message.agent);
    this.send(message, 'errors');
  }

  // Before a worker hears of an agent, it gets the agent's journal (replies dropped); returns how
  // much longer than a call that may take, in ms.
  restore(agent) {
    if (agent === undefined || this.restored.has(agent)) return 0;
    this.restored.add(agent);
    const { requests, weight } = this.replay(agent);
    for (const request of requests) this.send(request, 'errors');
    return restoreMs(requests.length, weight);
  }

  // Take every reply already there without waiting (the FIFO's non-blocking end, or the port).
  collect() {
    this.uncollected = 0;
    const drainer = this.state ? Atomics.load(this.state, SLOT.DRAIN_FD) : -1;
    if (drainer >= 0) {
      while (this.inbox.fill(drainer) > 0) this.takeFrames(undefined);
    }
    this.drain();
  }

  /** For good: stop the worker and never start another (late events are dropped). */
  close() {
    this.idle.flush(); // a result recorded before the end still reaches the worker
    this.closed = true;
    this.stop();
  }

  // Stop the current worker: its stdin closes, it exits, its thread ends after it.
  // Its channel is let go too: its late exit must not be taken for the loss of its successor.
  // Replies still awaited from it are given up (WorkerUnavailable).
  stop() {
    if (this.state) {
      for (const slot of [SLOT.STDIN_FD, SLOT.STDOUT_FD, SLOT.DRAIN_FD, SLOT.LATER_FD]) {
        const fd = Atomics.exchange(this.state, slot, -2); // a fd published later is closed by the helper
        if (fd >= 0) closeSync(fd);
      }
    }
    this.later?.destroy();
    this.later = null;
    this.abandon('the worker was stopped');
    this.helper?.postMessage('close');
    this.helper = null;
    this.replies?.close();
    this.replies = null;
  }

  // Reject every reply still awaited through fd 3 (their worker is gone or being replaced).
  abandon(reason) {
    const awaiting = this.awaiting;
    if (awaiting.size === 0) return;
    this.awaiting = new Awaited();
    awaiting.abandon(reason);
  }

  // Read fd 3 on the event loop once the helper has published it; false where there is none (yet).
  openLater() {
    if (this.later) return true;
    const fd = Atomics.load(this.state, SLOT.LATER_FD);
    if (fd < 0 || Atomics.compareExchange(this.state, SLOT.LATER_FD, fd, -4) !== fd) return false; // -4: taken
    const later = frameReader(fd, (reply) => this.arrived(reply));
    later.on('close', () => {
      if (this.later === later) {
        this.later = null;
        this.abandon('the worker is not running');
      }
    });
    this.later = later; // unreferenced: an idle dsh must be able to exit; a pending reply's timer keeps it up
    return true;
  }

  // A reply from fd 3: an awaited one settles its promise; any other is an event's failure.
  arrived(reply) {
    if (!this.awaiting.has(reply.id)) {
      this.received(reply, undefined);
      return;
    }
    this.backlog.answered(reply.id); // and everything sent before it
    this.answered();
    this.awaiting.settle(reply);
  }

  // Make sure a worker is running or starting; returns true when it is fresh (still starting).
  // Throws WorkerUnavailable while restarts are held back (backing off, or given up for a while).
  ensureRunning() {
    if (this.closed) throw new WorkerUnavailable('the plugin was disposed', { code: 'CLOSED' });
    this.drain();
    if (this.exited) this.lost(exitError(this.exited, this.spawnOptions.command));
    if (!this.helper) {
      const wait = this.crashes.wait();
      if (wait > 0) {
        throw new WorkerUnavailable(
          this.crashes.gaveUp
            ? 'the worker keeps failing and restarts are paused'
            : `the worker is restarting in ${Math.ceil(wait)} ms`,
          { code: 'BACKOFF' },
        );
      }
      this.restart();
    }
    return this.startingId !== null;
  }

  /** Kill the current worker, if it runs: one that hangs would never read the end of its input. */
  kill() {
    this.drain(); // a reading main thread may not have taken the pid yet
    if (this.pid === null || this.exited) return;
    try {
      process.kill(this.pid, 'SIGKILL');
    } catch {
      // it is already gone
    }
  }

  // A call was answered: the worker is healthy, any crash loop is over.
  answered() {
    if (this.crashes.answered()) this.log('the worker answers again; the loop guard is back');
  }

  // The current worker is gone or hung: kill it, say once what happened and what is done about
  // it, and start a successor now or after a backoff (or, in a crash loop, after a pause).
  /** @param {Error} error @param {{ op?: string, callFails?: boolean }} [how] */
  lost(error, { op, callFails = false } = {}) {
    this.kill();
    this.stop();
    this.exited = null;
    const { paused, newly, delay } = this.crashes.lost(performance.now());
    const verdict = this.settings.onWorkerFailure === 'deny' ? 'denied' : 'allowed';
    const during = op ? ` during a ${op} request` : '';
    if (paused) {
      if (newly) {
        this.log(
          `${error.message}${during}: ${this.losses.length} workers lost within ${this.crashes.policy.crashSpanMs / 1000} s, ` +
            `so no new worker for ${Math.ceil(delay / 1000)} s; until then every counted ` +
            `call is ${verdict} unchecked (onWorkerFailure: ${this.settings.onWorkerFailure})`,
        );
      }
      return;
    }
    const pending = callFails ? `; that call is ${verdict} (onWorkerFailure: ${this.settings.onWorkerFailure})` : '';
    this.log(
      `${error.message}${during}; it was stopped and a new one starts ` +
        `${delay ? `in ${delay} ms` : 'now'} with the agents' recent calls replayed${pending}`,
    );
    if (delay === 0) this.restart();
  }

  // A new worker: configure it first; each agent's journal follows before its first request.
  // Events queued for the lost worker are dropped: the journal holds every one that matters.
  restart() {
    this.spawn();
    this.outbox.take();
    this.startingId = this.send(this.configureMessage);
  }

  spawn() {
    this.stop();
    const stateBuffer = new SharedArrayBuffer(SLOTS_BYTES); // see slots.js
    const { port1, port2 } = new MessageChannel();
    this.state = new Int32Array(stateBuffer);
    this.drained = -1; // the SLOT.WAKE of the last look that took every message (drain)
    for (const slot of [SLOT.STDIN_FD, SLOT.STDOUT_FD, SLOT.DRAIN_FD, SLOT.LATER_FD, SLOT.NUDGE_FD]) this.state[slot] = -1;
    this.restored = new Set();
    this.backlog = new Backlog(this.nextId - 1); // nothing is queued at a new worker yet
    this.generation++;
    this.clockBase = this.startClock(); // deadlines in SLOT.DEADLINE count from it (slots.js)
    this.inbox = new Inbox(); // reply bytes read from the stdout FIFO
    this.replies = port1;
    this.replies.unref();
    this.pid = null;
    this.exited = null;
    const [spawn, state, clockBase, log] = [{ ...this.spawnOptions, env: workerEnvironment(this.spawnOptions.env) }, this.state, this.clockBase, this.log];
    const exited = (owner, how) => this.helper === owner && ((this.exited = how), Atomics.add(state, SLOT.WAKE, 1));
    this.helper = startOwner({ spawn, state, clockBase, replies: port2, exited, log });
    if (this.helper instanceof MainOwner) this.pid = this.helper.pid;
  }

  /** Where a new worker's clock starts: now (a test ages the worker by giving an earlier one). */
  startClock() {
    return clock();
  }

  // One request; `reply` says where the worker answers it (breaker/protocol.py). An event
  // (reply: 'errors') waits in the outbox; any other request is written at once, after the
  // events queued before it. Returns its id.
  send(message, reply = undefined) {
    const id = this.nextId++;
    this.backlog.sent(id, this.outbox.add(message, id, reply));
    if (reply !== 'errors' || this.outbox.full) this.write(this.outbox.take());
    else if (!this.idle.running) this.outbox.wait(); // else written once the idle sends are done
    return id;
  }

  // The events waiting in the outbox, now (unless the plugin was disposed).
  writeOutbox() {
    if (this.outbox.size === 0 || this.closed) return;
    try {
      this.ensureRunning(); // a lost worker's replacement drops the outbox: the journal has it all
    } catch (error) {
      if (error instanceof WorkerUnavailable) this.outbox.take();
      else throw error;
    }
    if (this.outbox.size > 0) this.write(this.outbox.take());
  }

  // Whole frames to the worker's stdin, in order (transport.js).
  write(frames) {
    writeFrames(this, frames);
  }

  // Block until the reply with `id` arrives (earlier replies are consumed on the way).
  waitFor(id, deadline, timeoutMs) {
    return waitForReply(this, id, deadline, timeoutMs);
  }

  // Decode the whole frames in the inbox up to the reply with `id`, which is returned.
  takeFrames(id) {
    for (let frame = this.inbox.next(); frame !== undefined; frame = this.inbox.next()) {
      const reply = this.received(frame, id);
      if (reply) return reply;
    }
    return undefined;
  }

  // Take every message the helper has forwarded; return the reply with `id` if it is among them.
  // The helper bumps SLOT.WAKE after each: while it has not moved since a look that took them all,
  // there is none to look for (a request costs no call into the port).
  drain(id) {
    if (!this.replies) return undefined;
    const wake = Atomics.load(this.state, SLOT.WAKE);
    if (wake === this.drained) return undefined;
    for (let entry = receiveMessageOnPort(this.replies); entry; entry = receiveMessageOnPort(this.replies)) {
      const message = entry.message;
      if (message.spawned) this.pid = message.spawned;
      else if (message.failed) this.exited = { failed: message.failed };
      else if (message.exited) this.exited = message.exited;
      else {
        const reply = this.received(decode(message.frame), id);
        if (reply) return reply; // others may be left: the next look takes them
      }
    }
    this.drained = wake;
    return undefined;
  }

  // A reply, in order: the one with `id` is returned; others are a start's or an event's.
  received(reply, id) {
    this.backlog.answered(reply.id);
    if (this.first?.take(reply, this)) return reply.id === id ? reply : undefined;
    if (reply.id === this.startingId) this.started(reply);
    else if (!reply.ok && reply.id !== id) {
      this.log(`the worker refused request ${reply.id ?? '(unreadable)'}: ${reply.error}`);
    }
    return reply.id === id ? reply : undefined;
  }

  started(reply) {
    this.startingId = null;
    if (reply.ok) this.helper?.postMessage('ready');
    else this.log(`the new worker refused the configuration it was started with: ${reply.error}`);
  }
}
