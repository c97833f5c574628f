// @ts-check
// The synchronous bridge to the Python worker, as seen from the main thread.
//
// dsh calls guards synchronously, so a verdict must come back without returning to the event
// loop. A helper thread (bridge-thread.js) owns the worker process. Where the worker's stdin and
// stdout are FIFOs, the main thread writes a request frame itself (a non-blocking write: it never
// waits; what does not fit is posted to the helper) and reads the reply itself with blocking
// reads, while the helper, as a watchdog, kills the worker if the deadline passes. Elsewhere the
// helper moves the bytes with normal async I/O and the main thread sleeps in Atomics.wait on a
// shared counter that the helper bumps for every message it forwards, taking the reply with
// receiveMessageOnPort. Every wait is bounded; the main thread never hangs.
//
// A request need not block at all: `ask` sends one whose reply the worker writes to a third FIFO
// (its fd 3) that the main thread's event loop reads, and returns a promise of that reply, so the
// thread serves other work while the worker thinks. Where there is no FIFO, `ask` is a blocking
// `call`.
//
// One ordered pipe carries every request, so an event sent with `notify` (no waiting) is applied
// by the worker before any later request: the main thread writes directly only while nothing it
// posted to the helper is still unwritten. Events are coalesced: they wait in an outbox until the
// next request (or EVENT_DELAY_MS, or OUTBOX_FRAMES of them) and go out in one write with it. The worker answers an
// event only when it fails (on fd 3, or stdout where there is none); other replies come in order
// on their stream and are matched by id.
import { accessSync, closeSync, constants, readSync, writevSync } from 'node:fs';
import { Socket } from 'node:net';
import { delimiter, join } from 'node:path';
import { MessageChannel, Worker, receiveMessageOnPort } from 'node:worker_threads';

import { decode, encodeFrame } from './msgpack.js';
import { SLOT, SLOTS_BYTES } from './slots.js';

const HELPER_URL = new URL('./bridge-thread.js', import.meta.url);
/** Larger writes would not fit a FIFO's buffer (the worker asks for 1 MB): they go whole to the
 * helper. What a direct write leaves over goes to the helper too. */
const DIRECT_LIMIT = 1024 * 1024;
const READ_SIZE = 64 * 1024;
/** How long an event may wait in the outbox for a request to ride with (one write for both), and
 * how many may wait: a flood of events goes out as it comes, so the worker keeps up with it. */
const EVENT_DELAY_MS = 2;
const OUTBOX_FRAMES = 64;

/**
 * A restored agent's journal is waited for this much longer than a call: its requests, and its
 * bytes (the worker decides about 100 MB/s; five times slower is allowed for).
 */
const RESTORE_MS_PER_REQUEST = 1;
/** What a request queued ahead of a call may cost the worker (an event takes ~20 µs). */
const QUEUED_MS_PER_REQUEST = 0.1;
/** Frames from this size on are remembered until answered: their bytes add to the deadlines of
 * the requests behind them. */
const LARGE_FRAME_BYTES = 64 * 1024;
/** Events between two looks for their replies: ~13 KB of replies, a fifth of a FIFO's buffer. */
const COLLECT_EVERY = 1024;
const RESTORE_BYTES_PER_MS = 20_000;

/** Milliseconds on a monotonic clock the helper thread shares (performance.now() is per thread). */
export function clock() {
  const [seconds, nanoseconds] = process.hrtime();
  return seconds * 1e3 + nanoseconds / 1e6;
}

/** The worker could not answer: it is not running, it exited, or it missed its deadline. */
export class WorkerUnavailable extends Error {
  constructor(message, details = {}) {
    super(message);
    this.name = 'WorkerUnavailable';
    Object.assign(this, details); // code, stderr, exit: what the startup error needs to explain itself
  }
}

/** How a crash loop is contained; tests shorten these. */
export const RESTART_POLICY = Object.freeze({
  crashLimit: 5, // at most this many lost workers within crashSpanMs, then give up for a while
  crashSpanMs: 60_000,
  backoffMs: 200, // no delay after the first loss, then 200 ms, 400 ms, 800 ms, ...
});

// Where mkfifo is, looked up once: PATH may change under a long-lived harness.
let mkfifoPath;
function mkfifo() {
  if (mkfifoPath !== undefined) return mkfifoPath;
  mkfifoPath = null;
  for (const folder of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    try {
      accessSync(join(folder, 'mkfifo'), constants.X_OK);
      mkfifoPath = join(folder, 'mkfifo');
      break;
    } catch {
      // not here
    }
  }
  return mkfifoPath;
}

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
   *   variables, or what gives them afresh for each worker started (see index.js workerOptions)
   * @param {(text: string) => void} options.log one line for the operator
   * @param {(agent: number) => {requests: object[], weight: number}} [options.replay] the requests
   *   that rebuild one agent's state in a new worker, and about how many bytes they encode to
   * @param {Partial<typeof RESTART_POLICY>} [options.restartPolicy]
   */
  constructor({ command, args, cwd, env, log, replay = () => ({ requests: [], weight: 0 }), restartPolicy = {} }) {
    this.spawnOptions = { command, args, cwd, env };
    this.log = log;
    this.replay = replay;
    this.restartPolicy = { ...RESTART_POLICY, ...restartPolicy };
    this.nextId = 1;
    this.helper = null;
    this.pid = null;
    this.exited = null; // set when the current worker is known to be gone
    this.configureMessage = null;
    this.startingId = null; // the configure request a fresh worker has not answered yet
    this.restored = new Set(); // the agents whose journal the current worker has been given
    this.uncollected = 0; // events sent since replies were last taken
    this.settings = null;
    this.losses = []; // when workers were lost since the last answered call, oldest first
    this.restartAt = 0; // no new worker before this time (performance.now()) while backing off
    this.gaveUp = false;
    this.closed = false;
    this.generation = 0; // which worker: a new one knows only what the journal restores
    this.later = null; // the event loop's reader of the worker's fd 3
    this.awaiting = new Map(); // id → {resolve, reject, timer} of replies awaited through fd 3
    this.outbox = []; // encoded events not written yet, oldest first
    this.large = []; // {id, bytes} of the large frames sent and not known answered, oldest first
    this.flushing = null; // the pending timer that writes the outbox
    this.flushOutbox = () => {
      this.flushing = null;
      if (this.outbox.length === 0 || this.closed) return;
      try {
        this.ensureRunning(); // a lost worker's replacement drops the outbox: the journal has it all
      } catch (error) {
        if (error instanceof WorkerUnavailable) this.outbox = [];
        else throw error;
      }
      if (this.outbox.length > 0) this.write(this.takeOutbox());
    };
  }

  /**
   * Start the first worker (unless `spawn` started it already) and configure it, waiting up to
   * `timeoutMs`. Returns the configure reply (which may be a rejection); throws WorkerUnavailable
   * when there was no reply at all.
   */
  boot(configureMessage, timeoutMs) {
    if (!this.helper) this.spawn();
    const reply = this.waitFor(this.send(configureMessage), clock() + timeoutMs, timeoutMs);
    this.drain(); // the helper's news (the worker's pid) when the reply came straight off the FIFO
    if (reply.ok) {
      this.configureMessage = configureMessage;
      this.settings = reply.settings;
      this.helper.postMessage('ready');
    }
    return reply;
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
    for (let attempt = 1; ; attempt++) {
      const fresh = this.ensureRunning();
      const timeoutMs = this.timeoutFor(fresh, this.restore(message.agent));
      try {
        const id = this.send(message);
        const reply = this.waitFor(id, this.deadline(id, since, timeoutMs), timeoutMs);
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
   * One request whose reply arrives through the event loop: a promise of the reply, rejected with
   * WorkerUnavailable when the worker is lost or misses the deadline counted from `since` (a
   * missed deadline also replaces it, as in `call`). Where the worker has no fd 3 (no FIFO, or
   * not known yet for a worker still starting) this is a blocking `call`, its result a promise.
   */
  ask(message, since = clock()) {
    let timeoutMs;
    try {
      const fresh = this.ensureRunning();
      if (!this.openLater()) return Promise.resolve(this.call(message, since));
      timeoutMs = this.timeoutFor(fresh, this.restore(message.agent));
    } catch (error) {
      return Promise.reject(error);
    }
    const id = this.send(message, 'later');
    const deadline = this.deadline(id, since, timeoutMs);
    const awaiting = this.awaiting;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        awaiting.delete(id);
        const error = this.timeoutError(timeoutMs);
        reject(error);
        if (awaiting === this.awaiting) this.lost(error, { op: message.op, callFails: true });
      }, Math.max(1, deadline - clock())); // referenced: the process stays up for the reply, no longer
      awaiting.set(id, { resolve, reject, timer });
    });
  }

  // The time a request is given: the start deadline while the worker is fresh, else the guard
  // deadline and what restoring its agent's journal (`restoring` ms) adds, within the start one.
  timeoutFor(fresh, restoring) {
    const { guardTimeoutMs, startTimeoutMs } = this.settings;
    return fresh ? startTimeoutMs : Math.min(startTimeoutMs, guardTimeoutMs + restoring);
  }

  /**
   * When the reply to request `id` is due, for every request that waits for one (`call` and
   * `ask`): `timeoutMs` from `since` (when the caller started on it), and whatever the caller
   * spent, at least a quarter of the guard deadline from now; plus the work queued at the worker
   * up to and including this request, which is work, not a hang: 0.1 ms a request, and the bytes
   * of its large frames at the rate a restore is given. A healthy worker is never killed for the
   * shim's time, nor for the large calls it was sent.
   */
  deadline(id, since, timeoutMs) {
    while (this.large.length > 0 && this.large[0].id <= this.answeredId) this.large.shift();
    let bytes = 0;
    for (const frame of this.large) if (frame.id <= id) bytes += frame.bytes;
    const queued = (id - 1 - this.answeredId) * QUEUED_MS_PER_REQUEST + bytes / RESTORE_BYTES_PER_MS;
    return Math.max(since + timeoutMs, clock() + this.settings.guardTimeoutMs / 4) + queued;
  }

  /**
   * An event: a request whose reply nobody waits for. It is applied before any later request; it
   * waits in the outbox to go out with the next one (see the top). A worker lost before then
   * never gets it: the journal carries what matters to its successor. With `generation`, the
   * event is for that worker only (a `commit` of a verdict it kept): dropped for any other.
   */
  notify(message, generation = undefined) {
    if (this.closed) return;
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
    return requests.length * RESTORE_MS_PER_REQUEST + weight / RESTORE_BYTES_PER_MS;
  }

  // Take every reply already there without waiting (the FIFO's non-blocking end, or the port).
  collect() {
    this.uncollected = 0;
    const drainer = this.state ? Atomics.load(this.state, SLOT.DRAIN_FD) : -1;
    if (drainer >= 0) {
      while (this.fill(drainer) > 0) this.takeFrames(undefined);
    }
    this.drain();
  }

  /** For good: stop the worker and never start another (late events are dropped). */
  close() {
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
    this.awaiting = new Map();
    const error = new WorkerUnavailable(reason, { code: 'EXITED' });
    for (const { reject, timer } of awaiting.values()) {
      clearTimeout(timer);
      reject(error);
    }
  }

  // Read fd 3 on the event loop once the helper has published it; false where there is none (yet).
  openLater() {
    if (this.later) return true;
    const fd = Atomics.load(this.state, SLOT.LATER_FD);
    if (fd < 0 || Atomics.compareExchange(this.state, SLOT.LATER_FD, fd, -4) !== fd) return false; // -4: taken
    // Read into one reused buffer (no stream machinery); only a frame cut between reads is copied.
    let partial = null;
    const later = new Socket({
      fd,
      readable: true,
      writable: false,
      // @ts-expect-error Node takes `onread` here too; @types/node lists it for net.connect only
      onread: {
        buffer: Buffer.allocUnsafe(READ_SIZE),
        callback: (count, buffer) => {
          let bytes = buffer.subarray(0, count);
          if (partial) {
            bytes = Buffer.concat([partial, bytes]);
            partial = null;
          }
          let start = 0;
          while (bytes.length - start >= 4) {
            const end = start + 4 + bytes.readUInt32BE(start);
            if (end > bytes.length) break;
            this.arrived(decode(bytes.subarray(start + 4, end)));
            start = end;
          }
          if (start < bytes.length) partial = Buffer.from(bytes.subarray(start));
        },
      },
    });
    later.on('error', () => {}); // its end is what matters
    later.on('close', () => {
      if (this.later === later) {
        this.later = null;
        this.abandon('the worker is not running');
      }
    });
    later.unref(); // an idle dsh must be able to exit; a pending reply's timer keeps it up
    this.later = later;
    return true;
  }

  // A reply from fd 3: an awaited one settles its promise; any other is an event's failure.
  arrived(reply) {
    const awaited = this.awaiting.get(reply.id);
    if (!awaited) {
      this.received(reply, undefined);
      return;
    }
    this.awaiting.delete(reply.id);
    clearTimeout(awaited.timer);
    if (reply.id > this.answeredId) this.answeredId = reply.id; // and everything sent before it
    this.answered();
    awaited.resolve(reply);
  }

  // Make sure a worker is running or starting; returns true when it is fresh (still starting).
  // Throws WorkerUnavailable while restarts are held back (backing off, or given up for a while).
  ensureRunning() {
    if (this.closed) throw new WorkerUnavailable('the plugin was disposed', { code: 'CLOSED' });
    this.drain();
    if (this.exited) this.lost(this.exitError());
    if (!this.helper) {
      const wait = this.restartAt - performance.now();
      if (wait > 0) {
        throw new WorkerUnavailable(
          this.gaveUp
            ? 'the worker keeps failing and restarts are paused'
            : `the worker is restarting in ${Math.ceil(wait)} ms`,
          { code: 'BACKOFF' },
        );
      }
      this.restart();
    }
    return this.startingId !== null;
  }

  // A call was answered: the worker is healthy, any crash loop is over.
  answered() {
    if (this.gaveUp) this.log('the worker answers again; the loop guard is back');
    this.gaveUp = false;
    this.losses = [];
  }

  // The current worker is gone or hung: kill it, say once what happened and what is done about
  // it, and start a successor now or after a backoff (or, in a crash loop, after a pause).
  /** @param {Error} error @param {{ op?: string, callFails?: boolean }} [how] */
  lost(error, { op, callFails = false } = {}) {
    this.drain(); // a reading main thread may not have taken the pid yet
    if (this.pid !== null && !this.exited) {
      try {
        process.kill(this.pid, 'SIGKILL');
      } catch {
        // it is already gone
      }
    }
    this.stop();
    this.exited = null;
    const now = performance.now();
    const { crashLimit, crashSpanMs, backoffMs } = this.restartPolicy;
    this.losses = [...this.losses.filter((time) => now - time < crashSpanMs), now];
    const verdict = this.settings.onWorkerFailure === 'deny' ? 'denied' : 'allowed';
    const during = op ? ` during a ${op} request` : '';
    if (this.losses.length >= crashLimit) {
      this.restartAt = this.losses[0] + crashSpanMs;
      if (!this.gaveUp) {
        this.gaveUp = true;
        this.log(
          `${error.message}${during}: ${this.losses.length} workers lost within ${crashSpanMs / 1000} s, ` +
            `so no new worker for ${Math.ceil((this.restartAt - now) / 1000)} s; until then every counted ` +
            `call is ${verdict} unchecked (onWorkerFailure: ${this.settings.onWorkerFailure})`,
        );
      }
      return;
    }
    const delay = this.losses.length === 1 ? 0 : backoffMs * 2 ** (this.losses.length - 2);
    this.restartAt = now + delay;
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
    this.outbox = [];
    this.startingId = this.send(this.configureMessage);
  }

  spawn() {
    this.stop();
    const stateBuffer = new SharedArrayBuffer(SLOTS_BYTES); // see slots.js
    const { port1, port2 } = new MessageChannel();
    this.state = new Int32Array(stateBuffer);
    for (const slot of [SLOT.STDIN_FD, SLOT.STDOUT_FD, SLOT.DRAIN_FD, SLOT.LATER_FD]) this.state[slot] = -1;
    this.restored = new Set();
    this.answeredId = this.nextId - 1; // nothing is queued at a new worker yet
    this.large = [];
    this.generation++;
    this.clockBase = clock() - 1; // deadlines in SLOT.DEADLINE are ms after it, never 0
    this.inbox = Buffer.allocUnsafe(READ_SIZE); // reply bytes read from the stdout FIFO
    this.inboxStart = 0;
    this.inboxEnd = 0;
    this.replies = port1;
    this.replies.unref();
    this.pid = null;
    this.exited = null;
    this.helper = new Worker(HELPER_URL, {
      workerData: { ...this.spawnOptions, env: workerEnvironment(this.spawnOptions.env), mkfifo: mkfifo(), stateBuffer, replies: port2, clockBase: this.clockBase },
      transferList: [port2],
      execArgv: [], // the host's flags (--input-type, --inspect, loaders) are not the helper's business
      trackUnmanagedFds: false, // the FIFO fds it opens for this thread must outlive it (see stop)
    });
    this.helper.on('error', (error) => this.log(`bridge thread failed: ${error.stack ?? error}`));
    this.helper.unref(); // an idle dsh must be able to exit; the worker then sees EOF and exits
  }

  // One request; `reply` says where the worker answers it (breaker/protocol.py). An event
  // (reply: 'errors') waits in the outbox; any other request is written at once, after the
  // events queued before it. Returns its id.
  send(message, reply = undefined) {
    const id = this.nextId++;
    const frame = encodeFrame(reply === undefined ? { id, ...message } : { id, ...message, reply });
    if (frame.length >= LARGE_FRAME_BYTES) this.large.push({ id, bytes: frame.length });
    this.outbox.push(frame);
    if (reply !== 'errors' || this.outbox.length >= OUTBOX_FRAMES) this.write(this.takeOutbox());
    else this.flushing ??= setTimeout(this.flushOutbox, EVENT_DELAY_MS);
    return id;
  }

  // The queued frames, oldest first; the outbox is left empty.
  takeOutbox() {
    const frames = this.outbox;
    this.outbox = [];
    return frames;
  }

  // Whole frames to the worker's stdin, in order: in one direct write where possible, else (and
  // what a direct write left over) through the helper, as one buffer it can take over.
  write(frames) {
    const total = frames.reduce((sum, frame) => sum + frame.length, 0);
    let written = 0;
    const direct = Atomics.load(this.state, SLOT.STDIN_FD);
    if (direct >= 0 && total <= DIRECT_LIMIT && Atomics.load(this.state, SLOT.QUEUED) === 0) {
      try {
        written = writevSync(direct, frames);
      } catch (error) {
        if (error.code === 'EPIPE') return; // the worker is gone; its exit is what gets reported
        // EAGAIN: the FIFO is full; the helper waits for room instead of this thread
      }
      if (written === total) return;
    }
    const rest = new Uint8Array(total - written);
    let offset = -written;
    for (const frame of frames) {
      if (offset + frame.length > 0) rest.set(offset >= 0 ? frame : frame.subarray(-offset), Math.max(0, offset));
      offset += frame.length;
    }
    Atomics.add(this.state, SLOT.QUEUED, 1);
    this.helper.postMessage(rest.buffer, [rest.buffer]);
  }

  // Block until the reply with `id` arrives (earlier replies are consumed on the way).
  waitFor(id, deadline, timeoutMs) {
    for (;;) {
      const seen = Atomics.load(this.state, SLOT.WAKE);
      const reader = Atomics.load(this.state, SLOT.STDOUT_FD);
      // Before any exit is believed: replies the worker wrote before exiting may still be unread.
      if (reader >= 0) return this.read(reader, id, deadline, timeoutMs);
      const reply = this.drain(id);
      if (reply) return reply;
      if (this.exited) throw this.exitError();
      const left = deadline - clock();
      if (left <= 0) throw this.timeoutError(timeoutMs);
      Atomics.wait(this.state, SLOT.WAKE, seen, left); // woken by a forwarded message or a published fd
    }
  }

  // Read replies from the stdout FIFO until the one with `id`, under the helper's watchdog.
  read(reader, id, deadline, timeoutMs) {
    const due = Math.ceil(deadline - this.clockBase);
    Atomics.store(this.state, SLOT.DEADLINE, due);
    const watched = Atomics.load(this.state, SLOT.WATCHED);
    if (watched === 0 || due < watched) Atomics.notify(this.state, SLOT.DEADLINE); // the watchdog would look too late
    try {
      for (;;) {
        const reply = this.takeFrames(id);
        if (reply) return reply;
        if (clock() >= deadline) throw this.timeoutError(timeoutMs);
        if (this.fill(reader) === 0) break; // the worker is gone
      }
    } finally {
      Atomics.store(this.state, SLOT.DEADLINE, 0);
    }
    // Its exit is reported by the helper once the process is reaped.
    for (;;) {
      const seen = Atomics.load(this.state, SLOT.WAKE);
      this.drain();
      if (this.exited) throw this.exitError();
      const left = deadline - clock();
      if (left <= 0) throw this.timeoutError(timeoutMs);
      Atomics.wait(this.state, SLOT.WAKE, seen, left);
    }
  }

  // One blocking read into the inbox, made room for first; 0 at the end of the stream.
  fill(reader) {
    const buffered = this.inboxEnd - this.inboxStart;
    const needed = buffered >= 4 ? 4 + this.inbox.readUInt32BE(this.inboxStart) : 4;
    if (this.inbox.length - this.inboxEnd < Math.min(needed - buffered, READ_SIZE)) {
      const room = this.inbox.length >= needed + READ_SIZE ? this.inbox : Buffer.allocUnsafe(needed + READ_SIZE);
      this.inbox.copy(room, 0, this.inboxStart, this.inboxEnd); // overlapping copies are fine
      this.inbox = room;
      this.inboxStart = 0;
      this.inboxEnd = buffered;
    }
    try {
      const count = readSync(reader, this.inbox, this.inboxEnd, this.inbox.length - this.inboxEnd, null);
      this.inboxEnd += count;
      return count;
    } catch {
      return 0; // the fd is unusable: treated as the worker's end
    }
  }

  // Decode the whole frames in the inbox up to the reply with `id`, which is returned.
  takeFrames(id) {
    while (this.inboxEnd - this.inboxStart >= 4) {
      const end = this.inboxStart + 4 + this.inbox.readUInt32BE(this.inboxStart);
      if (end > this.inboxEnd) break;
      const reply = this.received(decode(this.inbox.subarray(this.inboxStart + 4, end)), id);
      this.inboxStart = end;
      if (this.inboxStart === this.inboxEnd) this.inboxStart = this.inboxEnd = 0;
      if (reply) return reply;
    }
    return undefined;
  }

  // Take every message the helper has forwarded; return the reply with `id` if it is among them.
  drain(id) {
    if (!this.replies) return undefined;
    for (let entry = receiveMessageOnPort(this.replies); entry; entry = receiveMessageOnPort(this.replies)) {
      const message = entry.message;
      if (message.spawned) this.pid = message.spawned;
      else if (message.failed) this.exited = { failed: message.failed };
      else if (message.exited) this.exited = message.exited;
      else {
        const reply = this.received(decode(message.frame), id);
        if (reply) return reply;
      }
    }
    return undefined;
  }

  // A reply, in order: the one with `id` is returned; others are a start's or an event's.
  received(reply, id) {
    if (Number.isInteger(reply.id) && reply.id > this.answeredId) this.answeredId = reply.id;
    if (reply.id === this.startingId) this.started(reply);
    else if (!reply.ok && reply.id !== id) {
      this.log(`the worker refused request ${reply.id ?? '(unreadable)'}: ${reply.error}`);
    }
    return reply.id === id ? reply : undefined;
  }

  timeoutError(timeoutMs) {
    return new WorkerUnavailable(`the worker did not answer within ${timeoutMs} ms`, { code: 'TIMEOUT' });
  }

  started(reply) {
    this.startingId = null;
    if (reply.ok) this.helper?.postMessage('ready');
    else this.log(`the new worker refused the configuration it was started with: ${reply.error}`);
  }

  exitNote() {
    if (!this.exited) return '';
    const { failed, code, signal } = this.exited;
    if (failed) return ` (could not start ${this.spawnOptions.command}: ${failed.message})`;
    return signal ? ` (killed by ${signal})` : ` (exited with code ${code})`;
  }

  exitError() {
    const { failed, stderr } = this.exited;
    return new WorkerUnavailable(`the worker is not running${this.exitNote()}`, {
      code: failed ? failed.code : 'EXITED',
      stderr: stderr ?? '',
    });
  }
}
