// @ts-check
// The helper thread of the bridge: it owns one Python worker process and its stdio with ordinary
// asynchronous Node I/O, so the main thread can block while bytes still move.
//
// Where the worker can make FIFOs (breaker/streams.py; below), its stdin and stdout are two private
// FIFOs and the main thread talks to the worker itself: it writes request frames through a
// non-blocking fd published in SLOT.STDIN_FD (only what does not fit in the FIFO comes here) and
// reads replies with blocking reads from a fd published in SLOT.STDOUT_FD. A blocking read has no
// timeout, so this thread is its watchdog: the main thread puts the deadline of the reply it waits
// for in SLOT.DEADLINE (ms after `clockBase`, wrapped to 32 bits: slots.js; 0 when not waiting)
// and this thread kills the worker once it passes, which ends the read. A non-blocking stdout read end, published in SLOT.DRAIN_FD,
// lets the main thread take replies to events that are already there without waiting. Ownership
// of published fds passes to the main thread, which closes them (it sets them to -2 once it has
// given up on this worker; a late fd is then closed here). A third FIFO is where the worker writes
// the replies nobody blocks for (see breaker/protocol.py, `reply`): its non-blocking read end is
// published in SLOT.LATER_FD for the main thread's event loop. Until the worker has made them
// (after its interpreter's start and its imports) both slots are -1 and requests go through this
// thread to its stdin pipe. Elsewhere stdin and stdout stay ordinary pipes, SLOT.STDOUT_FD and
// SLOT.LATER_FD are -3, and this thread moves every byte: the main thread waits in Atomics.wait
// and takes replies from the `replies` port.
//
// From the main thread (parentPort): an ArrayBuffer holding request bytes, written to the
// worker's stdin in order, each followed by a decrement of SLOT.QUEUED once written; 'ready' once the
// worker has been configured (stderr is then passed through live instead of kept for the startup
// error); 'close' to end the worker's stdin.
// To the main thread (the `replies` port), each followed by a bump of SLOT.WAKE and a notify:
//   {spawned: pid} | {frame: Uint8Array} (one reply body, pipes only) | {failed: {code, message}}
//   (could not spawn) | {exited: {code, signal, stderr}}.
// The thread ends by itself once its worker has exited and been reaped.
import { spawn } from 'node:child_process';
import { closeSync } from 'node:fs';
import { Socket } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';

import { FIFOS_MADE, PIPES_KEPT, makeFifoFolder, openFifoEnds, removeFifoFolder } from './fifo-folder.js';
import { SLOT } from './slots.js';
import { nudge, watchDeadlines } from './watchdog.js';
import { boundedWriter, keptTail } from '../shared/stderr.js';

const { command, args, cwd, env, stateBuffer, replies, clockBase, pipes } = workerData;
// `stateBuffer`: the slots shared with the main thread, named in slots.js.
const state = new Int32Array(stateBuffer);

function deliver(message, transfer) {
  replies.postMessage(message, transfer);
  Atomics.add(state, SLOT.WAKE, 1);
  Atomics.notify(state, SLOT.WAKE);
}

// The worker is spawned at once with plain stdio pipes and, where a private folder can be had
// (fifo-folder.js), `--fifos <folder>`: it makes its three FIFOs there itself (no mkfifo process
// on the boot's path), says so with the byte FIFOS_MADE on its stdout pipe, and opens its ends,
// each open returning once this thread has opened the other (breaker/streams.py). Any other first
// byte: the worker kept its pipes (PIPES_KEPT where it was given a folder, else a frame's).
const folder = process.platform === 'win32' || pipes ? null : fifoFolder();
const child = spawn(command, folder ? [...args, '--fifos', folder] : args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
/** Where request frames from the main thread go: the stdin pipe, then the stdin FIFO once it takes over. */
let stdin = child.stdin;
/** @type {ReturnType<typeof openFifoEnds> | null} The FIFO ends this thread keeps, once the worker has made its FIFOs. */
let fifo = null;
/** Whether the worker's first stdout byte has said which way its replies come. */
let told = false;
if (!folder) usePipes();

function fifoFolder() {
  try {
    return makeFifoFolder();
  } catch {
    return null; // no safe place: pipes
  }
}

// The worker kept its pipes: this thread moves every byte.
function usePipes() {
  told = true;
  Atomics.store(state, SLOT.LATER_FD, -3);
  Atomics.store(state, SLOT.STDOUT_FD, -3);
  wake(); // the main thread may be waiting to learn which way replies come
}

function wake() {
  Atomics.add(state, SLOT.WAKE, 1);
  Atomics.notify(state, SLOT.WAKE);
}

// The worker made its FIFOs: open this side's ends, send what comes next through them (what was
// queued for the stdin pipe is written first, then the pipe ends), and hand the main thread its
// ends. Where they cannot be opened, the worker, waiting in its own opens, is killed.
function useFifos() {
  told = true;
  try {
    fifo = openFifoEnds(folder);
  } catch (error) {
    stderrKept += `the bridge could not open the worker's FIFOs: ${error.message}\n`;
    child.kill('SIGKILL');
    return;
  }
  stdin.end();
  stdin = new Socket({ fd: fifo.queued, readable: false, writable: true });
  stdin.on('error', () => {}); // as the pipe's: the worker's exit is what gets reported
  if (closing) stdin.end();
  publish(SLOT.STDIN_FD, fifo.direct);
  publish(SLOT.LATER_FD, fifo.laterReader); // before the stdout reader: whoever sees that one sees this one
  publish(SLOT.STDOUT_FD, fifo.reader);
  publish(SLOT.DRAIN_FD, fifo.drainer);
  wake();
  watch();
}

// Hand a fd to the main thread, unless it has given up on this worker already.
function publish(slot, fd) {
  if (Atomics.compareExchange(state, slot, -1, fd) !== -1) closeSync(fd);
}

let stderrKept = '';
let passStderrThrough = false;
// The worker's stderr is always read, so the worker never waits on it; it goes on through
// process.stderr (to the main thread), never by a synchronous write to a fd 2 that may be full.
const passOn = boundedWriter();

// At a passed deadline of the main thread's blocking read (watchdog.js) the worker is killed.
const watch = () =>
  watchDeadlines(state, clockBase, () => {
    child.kill('SIGKILL');
    nudge(fifo.nudge);
  });

child.on('spawn', () => deliver({ spawned: child.pid }));
// Messages already posted stay queued for the main thread; only this thread ends.
function finish() {
  if (fifo) closeSync(fifo.nudge);
  if (folder) removeFifoFolder(folder); // gone already, unless the worker died before it opened its FIFOs
  process.exit(0);
}

child.on('error', (/** @type {NodeJS.ErrnoException} */ error) => {
  deliver({ failed: { code: error.code ?? null, message: error.message } });
  if (child.pid === undefined) finish(); // never started: no 'close' will follow
});
// 'close' (not 'exit') comes after a stdout pipe has been drained, so the last replies are delivered first.
child.on('close', (code, signal) => {
  deliver({ exited: { code, signal, stderr: stderrKept } });
  finish();
});
// A write to a worker that just died fails with EPIPE; its exit is what gets reported.
stdin.on('error', () => {});

child.stderr.on('data', (chunk) => {
  if (passStderrThrough) {
    passOn(chunk);
    return;
  }
  stderrKept = keptTail(stderrKept, chunk);
});

let pending = Buffer.alloc(0);
child.stdout.on('data', (chunk) => {
  if (!told) {
    if (chunk[0] === FIFOS_MADE) {
      useFifos();
      return; // nothing else comes this way
    }
    usePipes();
    if (chunk[0] === PIPES_KEPT) chunk = chunk.subarray(1); // it was given a folder but keeps its pipes
  }
  pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
  let start = 0;
  while (pending.length - start >= 4) {
    const end = start + 4 + pending.readUInt32BE(start);
    if (end > pending.length) break;
    const body = new Uint8Array(pending.subarray(start + 4, end)); // a copy the port can take over
    deliver({ frame: body }, [body.buffer]);
    start = end;
  }
  pending = pending.subarray(start);
});

// The worker has opened its ends of the FIFOs (or is gone): its stdin FIFO needs no other reader,
// and no one needs their names.
child.stdout.on('end', () => {
  if (!fifo || fifo.keeper < 0) return;
  closeSync(fifo.keeper);
  fifo.keeper = -1;
  removeFifoFolder(folder);
});

let closing = false; // the main thread is done with this worker: its stdin ends, whichever it is
parentPort.on('message', (message) => {
  if (message === 'close') {
    closing = true;
    stdin.end();
  } else if (message === 'ready') {
    passStderrThrough = true;
    if (stderrKept) passOn(stderrKept);
    stderrKept = '';
  } else {
    stdin.write(new Uint8Array(message), () => Atomics.sub(state, SLOT.QUEUED, 1));
  }
});
