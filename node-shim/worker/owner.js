// @ts-check
// A worker the main thread owns: where a private folder can hold its FIFOs, dsh's main thread
// starts the Python worker itself, so no helper thread's isolate (~30 ms of CPU, and as long
// again before a thread can spawn anything) precedes the worker's start on dsh's boot.
//
// The worker is spawned with `--fifos <folder>` and makes its three FIFOs there
// (breaker/streams.py). The main thread opens its ends once they are all made: on the event loop
// when the worker says so (the byte FIFOS_MADE on its stdout pipe), or at once, looking for them
// every millisecond, when a request must be waited for before then (`fifosNow`; a worker that
// keeps its pipes says so there with an empty file, PIPES_MARK). Nothing is
// written to the worker's stdin pipe: requests sent before the FIFOs are open wait here, in order,
// and go through the FIFO once it is (the pipe is closed then, which the worker reads to its end).
// Its ends are published in the bridge's slots as a helper thread would (slots.js); its exit is
// seen on the event loop, or, by a main thread blocked on a stream that ended, at once (`gone`).
//
// A helper thread (adopted-thread.js) is started only when first needed: as the watchdog of a
// blocking read (`watched`), or to write a request that does not fit the stdin FIFO at once. A
// worker that cannot make its FIFOs (it keeps its pipes) is replaced by one a helper thread owns
// (bridge-thread.js), which gets the requests sent so far: that thread then does it all.
import { spawn } from 'node:child_process';
import { closeSync, lstatSync, readSync, writeSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

import { clock } from './clock.js';
import { FIFOS_MADE, FIFO_NAMES, PIPES_MARK, makeFifoFolder, openFifoEnds, removeFifoFolder } from './fifo-folder.js';
import { SLOT } from './slots.js';
import { zombieStatus } from './zombie.js';
import { boundedWriter, keptTail } from '../shared/stderr.js';

const ADOPTED_URL = new URL('./adopted-thread.js', import.meta.url);
const HELPER_URL = new URL('./bridge-thread.js', import.meta.url);
/** The last FIFO the worker makes: once it is there, all are. */
const LAST_FIFO = FIFO_NAMES[FIFO_NAMES.length - 1];
/** How long a main thread that saw the worker's stream end looks for its exit status. */
const REAP_LOOK_MS = 50;

/**
 * What a worker wrote on stderr that the event loop has not read yet (a main thread blocked on
 * the worker cannot wait for the stream's 'data'): read at once from the pipe, whose end is
 * non-blocking, until it is empty; what this takes the stream never sees. Its UTF-8 as text.
 */
function unreadStderr(stream) {
  const fd = /** @type {any} */ (stream)?._handle?.fd;
  if (!Number.isInteger(fd) || fd < 0) return '';
  const chunks = [];
  const buffer = Buffer.alloc(16384);
  for (let read = 0; read < 64; read++) {
    let count = 0;
    try {
      count = readSync(fd, buffer, 0, buffer.length, null);
    } catch {
      break; // EAGAIN: nothing more for now
    }
    if (count <= 0) break;
    chunks.push(Buffer.from(buffer.subarray(0, count)));
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A new worker and who owns it: the main thread where a private folder can hold its FIFOs, else a
 * helper thread that moves every byte (bridge-thread.js), which then replies on `replies`.
 * `exited(owner, how)` is told how a worker the main thread owns ended.
 * @param {{spawn: {command: string, args: string[], cwd: string, env: Record<string, string>}, state: Int32Array,
 *   clockBase: number, replies: import('node:worker_threads').MessagePort, exited: (owner: MainOwner, how: object) => void,
 *   log: (text: string) => void}} options
 */
export function startOwner({ spawn: how, state, clockBase, replies, exited, log }) {
  const threadOwned = (options = {}) => {
    const helper = new Worker(HELPER_URL, {
      workerData: { ...how, ...options, stateBuffer: state.buffer, replies, clockBase },
      transferList: [replies],
      execArgv: [], // the host's flags (--input-type, --inspect, loaders) are not the helper's business
      trackUnmanagedFds: false, // the FIFO fds it opens for the main thread must outlive it
    });
    helper.on('error', (error) => log(`bridge thread failed: ${error.stack ?? error}`));
    helper.unref(); // an idle dsh must be able to exit; the worker then sees EOF and exits
    return helper;
  };
  const folder = process.platform === 'win32' ? null : fifoFolder();
  if (folder === null) return threadOwned();
  const owner = new MainOwner({
    spawn: how,
    folder,
    state,
    clockBase,
    exited: (ended) => exited(owner, ended),
    pipesHelper: () => threadOwned({ pipes: true }),
    log,
  });
  return owner;
}

/** A fresh private folder for a worker's FIFOs, or null where there is no safe place (pipes). */
function fifoFolder() {
  try {
    return makeFifoFolder();
  } catch {
    return null;
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
function sleep(ms) {
  Atomics.wait(sleeper, 0, 0, ms);
}

export class MainOwner {
  /**
   * @param {object} options
   * @param {{command: string, args: string[], cwd: string, env: Record<string, string>}} options.spawn
   * @param {string} options.folder a fresh private folder for the worker's FIFOs (fifo-folder.js)
   * @param {Int32Array} options.state the bridge's slots; @param {number} options.clockBase
   * @param {(exited: object) => void} options.exited how the worker ended, seen on the event loop
   * @param {() => Worker} options.pipesHelper a helper thread that owns a worker on pipes (the fallback)
   * @param {(text: string) => void} options.log
   */
  constructor({ spawn: how, folder, state, clockBase, exited, pipesHelper, log }) {
    this.folder = folder;
    this.state = state;
    this.clockBase = clockBase;
    this.log = log;
    this.pipesHelper = pipesHelper;
    /** @type {Worker | null} the adopted helper once needed, or the pipes helper that replaced this */
    this.thread = null;
    this.replaced = false; // the worker kept its pipes: a helper thread owns its successor
    this.ends = null; // this side's FIFO ends once open
    this.waiting = []; // request bytes sent before the FIFOs were open, in order
    this.stderrKept = '';
    this.passOn = null; // set once the worker is configured: its stderr goes on to dsh's
    this.closed = false;
    this.heard = false; // a reply was read from the stdout FIFO: the worker's write end is open
    this.how = null; // how the worker ended, once the event loop has seen it
    this.unopened = false; // its FIFOs could not be opened: it was killed, its end is awaited
    this.errorListener = (/** @type {Error} */ error) => log(`bridge thread failed: ${error.stack ?? error}`);
    const child = spawn(how.command, [...how.args, '--fifos', folder], { cwd: how.cwd, env: how.env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child = child;
    this.pid = child.pid ?? null;
    child.on('error', (/** @type {NodeJS.ErrnoException} */ error) => {
      if (child.pid === undefined) this.ended(exited, { failed: { code: error.code ?? null, message: error.message } });
    });
    child.on('close', (code, signal) => {
      if (child.pid !== undefined) this.ended(exited, { code, signal, stderr: this.stderrKept }); // else 'error' said it
    });
    child.stdin.on('error', () => {});
    child.stdout.on('data', (chunk) => this.spoke(chunk));
    child.stdout.on('end', () => this.settled());
    child.stderr.on('data', (chunk) => {
      if (this.passOn) this.passOn(chunk);
      else this.stderrKept = keptTail(this.stderrKept, chunk);
    });
    child.unref(); // an idle dsh must be able to exit; the worker then sees its input end and exits
    for (const stream of [child.stdin, child.stdout, child.stderr]) /** @type {any} */ (stream).unref?.();
  }

  // The worker's first stdout byte: FIFOS_MADE, or another (it keeps its pipes).
  spoke(chunk) {
    if (this.ends || this.replaced || this.closed || this.unopened) return;
    if (chunk[0] === FIFOS_MADE) this.openEnds();
    else this.replace();
  }

  /** Open the FIFOs now if the worker has made them, waiting for that until `deadline` (clock ms)
   * at most. Returns how the worker ended when it did first (else undefined: the FIFOs are open,
   * the deadline passed, or this owner no longer owns it). */
  fifosNow(deadline) {
    while (!this.ends && !this.replaced && !this.closed) {
      if (this.how) return this.how;
      if (this.madeYet()) return undefined;
      if (this.pid === null) return { failed: { code: null, message: 'it could not be started' } };
      if (zombieStatus(this.pid) !== undefined) return this.gone();
      if (clock() >= deadline) return undefined;
      sleep(1);
    }
    return undefined;
  }

  // Whether the worker has said which way it talks, read in its folder (its FIFOs made: opened
  // now; its pipes kept: handed over), without waiting for the event loop to see its first byte.
  madeYet() {
    if (this.unopened) return false;
    if (lstatSync(join(this.folder, LAST_FIFO), { throwIfNoEntry: false })) this.openEnds();
    else if (lstatSync(join(this.folder, PIPES_MARK), { throwIfNoEntry: false })) this.replace();
    return this.ends !== null || this.replaced;
  }

  // This side's ends, published; what waited goes out, and the stdin pipe is closed.
  openEnds() {
    try {
      this.ends = openFifoEnds(this.folder);
    } catch (error) {
      this.stderrKept += `the bridge could not open the worker's FIFOs: ${error.message}\n`;
      this.unopened = true;
      this.kill();
      return;
    }
    this.child.stdin.destroy(); // closed at once: the worker reads its pipe to the end
    const { state, ends } = this;
    Atomics.store(state, SLOT.STDIN_FD, ends.direct);
    Atomics.store(state, SLOT.NUDGE_FD, ends.nudge);
    Atomics.store(state, SLOT.LATER_FD, ends.laterReader);
    Atomics.store(state, SLOT.STDOUT_FD, ends.reader);
    Atomics.store(state, SLOT.DRAIN_FD, ends.drainer);
    const waiting = this.waiting;
    this.waiting = [];
    for (const bytes of waiting) this.write(bytes);
  }

  // The worker has opened its ends (its stdout pipe ended).
  settled() {
    this.heardFrom();
  }

  // Request bytes the bridge could not write at once (SLOT.QUEUED counts them): through the FIFO
  // directly while nothing waits before them, else through the adopted helper.
  write(bytes) {
    let written = 0;
    if (!this.thread) {
      try {
        written = writeSync(this.ends.direct, new Uint8Array(bytes));
      } catch (error) {
        if (error.code === 'EPIPE') return void Atomics.sub(this.state, SLOT.QUEUED, 1);
      }
      if (written === bytes.byteLength) return void Atomics.sub(this.state, SLOT.QUEUED, 1);
    }
    const rest = bytes.slice(written);
    this.adopted().postMessage(rest, [rest]);
  }

  /** The main thread is about to block on the stdout FIFO: a watchdog must be there. */
  watched() {
    if (!this.replaced) this.adopted();
  }

  // The adopted helper, started now if it is not there; it takes over the blocking stdin end.
  adopted() {
    if (this.thread) return this.thread;
    const queued = this.ends.queued;
    this.ends.queued = -1;
    this.thread = new Worker(ADOPTED_URL, {
      workerData: { stateBuffer: this.state.buffer, clockBase: this.clockBase, pid: this.pid, queued },
      execArgv: [],
      trackUnmanagedFds: false, // the stdin end it takes must not be closed behind the bridge's back
    });
    this.thread.on('error', this.errorListener);
    this.thread.unref();
    return this.thread;
  }

  /** The worker has opened its ends of the FIFOs (a reply was read from one, or its stdout pipe
   * ended): the nudge end that let the blocking reader open is no longer needed (a blocking read
   * sees the worker's end without it), nor the keeper, nor the FIFOs' names. */
  heardFrom() {
    if (this.heard || !this.ends) return;
    this.heard = true;
    const fd = Atomics.exchange(this.state, SLOT.NUDGE_FD, -2);
    if (fd >= 0) closeSync(fd);
    if (this.ends.keeper >= 0) closeSync(this.ends.keeper); // else closed by release() already
    this.ends.keeper = -1;
    removeFifoFolder(this.folder);
  }

  /** How the worker ended, for a main thread that read the end of its stream and cannot wait for
   * the event loop: its status where the system shows it (Linux), else that its output ended. */
  gone() {
    if (this.how) return this.how;
    if (!this.passOn) this.stderrKept = keptTail(this.stderrKept, unreadStderr(this.child.stderr));
    const until = clock() + REAP_LOOK_MS;
    for (;;) {
      const status = zombieStatus(this.pid);
      if (status !== undefined || clock() >= until) {
        if (typeof status !== 'number') return { code: null, signal: null, stderr: this.stderrKept, ended: true };
        const signal = status & 0x7f;
        return signal ? { code: null, signal: signalName(signal), stderr: this.stderrKept } : { code: (status >> 8) & 0xff, signal: null, stderr: this.stderrKept };
      }
      sleep(1);
    }
  }

  // The worker ended (seen on the event loop): said once, unless this owner was let go.
  ended(exited, how) {
    if (this.closed || this.replaced || this.how) return;
    this.how = how;
    this.release();
    exited(how);
  }

  // The worker kept its pipes: it is stopped, and a helper thread owns its successor, which gets
  // what was sent so far.
  replace() {
    this.replaced = true;
    this.kill();
    this.release();
    this.thread = this.pipesHelper();
    for (const bytes of this.waiting) this.thread.postMessage(bytes, [bytes]);
    this.waiting = [];
    if (this.passOn) this.thread.postMessage('ready');
  }

  // What a thread would take in: the messages of bridge-thread.js's protocol.
  postMessage(message, transfer = undefined) {
    if (this.replaced) return void this.thread?.postMessage(message, transfer);
    if (message === 'ready') {
      this.passOn = boundedWriter();
      if (this.stderrKept) this.passOn(this.stderrKept);
      this.stderrKept = '';
    } else if (message === 'close') {
      this.closed = true;
      this.release();
    } else if (this.ends) this.write(message);
    else {
      this.waiting.push(message);
      // The worker makes its FIFOs first thing: they are there as a rule by the time dsh applies the
      // plugin, whose main thread may not see the worker's first byte for a while (it loads its
      // other plugins meanwhile). Opened now, the configuration goes out now.
      if (!this.closed) this.madeYet();
    }
  }

  // This side's ends closed (but those the bridge took from its slots), the folder removed and the
  // stdin pipe closed: the worker sees its input end and exits.
  release() {
    if (!this.child.stdin.destroyed) this.child.stdin.destroy();
    if (this.thread && !this.replaced) this.thread.postMessage('close'); // it ends the stdin end it took
    if (this.ends) {
      for (const key of ['keeper', 'queued']) if (this.ends[key] >= 0) closeSync(this.ends[key]);
      this.ends.keeper = this.ends.queued = -1;
      const fd = Atomics.exchange(this.state, SLOT.NUDGE_FD, -2);
      if (fd >= 0) closeSync(fd);
    }
    removeFifoFolder(this.folder);
  }

  kill() {
    try {
      this.child.kill('SIGKILL');
    } catch {
      // gone already
    }
  }

  on(event, listener) {
    if (event === 'error') this.errorListener = listener;
    return this;
  }

  unref() {}
}

// A signal's name from its number, as Node names a child's signal.
function signalName(number) {
  const signals = /** @type {Record<string, number>} */ (constants.signals);
  return Object.keys(signals).find((name) => signals[name] === number) ?? `signal ${number}`;
}
