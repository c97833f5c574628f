// @ts-check
// The helper thread of the bridge: it owns one Python worker process and its stdio with ordinary
// asynchronous Node I/O, so the main thread can block while bytes still move.
//
// Where FIFOs can be made (mkfifo), the worker's stdin and stdout are two private FIFOs and the
// main thread talks to the worker itself: it writes request frames through a non-blocking fd
// published in SLOT.STDIN_FD (only what does not fit in the FIFO comes here) and reads replies with
// blocking reads from a fd published in SLOT.STDOUT_FD. A blocking read has no timeout, so this thread
// is its watchdog: the main thread puts the deadline of the reply it waits for in SLOT.DEADLINE (ms
// after `clockBase`, wrapped to 32 bits: slots.js; 0 when not waiting) and this thread kills the worker once it passes, which
// ends the read. A non-blocking stdout read end, published in SLOT.DRAIN_FD, lets the main thread take
// replies to events that are already there without waiting. Ownership of published fds passes to
// the main thread, which
// closes them (it sets them to -2 once it has given up on this worker; a late fd is then closed
// here). A third FIFO is the worker's fd 3, where it writes the replies nobody blocks for (see
// breaker/protocol.py, `reply`): its non-blocking read end is published in SLOT.LATER_FD for the main
// thread's event loop. Elsewhere stdin and stdout are ordinary pipes, SLOT.STDOUT_FD and SLOT.LATER_FD are
// -3, and this thread moves every byte: the main thread waits in Atomics.wait and takes replies
// from the `replies` port.
//
// From the main thread (parentPort): an ArrayBuffer holding request bytes, written to the
// worker's stdin in order, each followed by a decrement of SLOT.QUEUED once written; 'ready' once the
// worker has been configured (stderr is then passed through live instead of kept for the startup
// error); 'close' to end the worker's stdin.
// To the main thread (the `replies` port), each followed by a bump of SLOT.WAKE and a notify:
//   {spawned: pid} | {frame: Uint8Array} (one reply body, pipes only) | {failed: {code, message}}
//   (could not spawn) | {exited: {code, signal, stderr}}.
// The thread ends by itself once its worker has exited and been reaped.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';

import { FIFO_NAMES, makeFifoFolder, removeFifoFolder } from './fifo-folder.js';
import { SLOT, msUntil } from './slots.js';
import { boundedWriter } from '../shared/stderr.js';

const { command, args, cwd, env, mkfifo, stateBuffer, replies, clockBase } = workerData;
// `stateBuffer`: the slots shared with the main thread, named in slots.js.
const state = new Int32Array(stateBuffer);
const STDERR_KEPT_BYTES = 16 * 1024;

function deliver(message, transfer) {
  replies.postMessage(message, transfer);
  Atomics.add(state, SLOT.WAKE, 1);
  Atomics.notify(state, SLOT.WAKE);
}

// Three FIFOs, made in a private folder and unlinked at once (no one else can open them):
// {childIn, childOut, childLater: the worker's blocking ends, queued: a blocking stdin write end
// for this thread, direct: a non-blocking one for the main thread, reader: a blocking stdout read
// end for the main thread, drainer: a non-blocking one, nudge: a non-blocking stdout write end for
// the watchdog, laterReader: a non-blocking read end of fd 3 for the main thread's event loop};
// null where none can be made (no mkfifo, no private folder for them, fifo-folder.js): then pipes.
function fifos() {
  if (process.platform === 'win32' || !mkfifo) return null;
  let folder;
  const opened = [];
  const open = (path, flags) => {
    opened.push(openSync(path, flags));
    return opened.at(-1);
  };
  try {
    folder = makeFifoFolder();
    if (!folder) return null;
    const [stdinPath, stdoutPath, laterPath] = FIFO_NAMES.map((name) => join(folder, name));
    if (spawnSync(mkfifo, ['-m', '600', stdinPath, stdoutPath, laterPath], { stdio: 'ignore' }).status !== 0) return null;
    // Opening a FIFO blocks until the other side is open, except when it already is: a
    // non-blocking reader makes room for the writers, which then let the blocking reader open.
    const { O_RDONLY, O_WRONLY, O_NONBLOCK } = constants;
    const probes = [open(stdinPath, O_RDONLY | O_NONBLOCK), open(stdoutPath, O_RDONLY | O_NONBLOCK)];
    const ends = {
      queued: open(stdinPath, O_WRONLY),
      direct: open(stdinPath, O_WRONLY | O_NONBLOCK),
      childIn: open(stdinPath, O_RDONLY),
      childOut: open(stdoutPath, O_WRONLY),
      nudge: open(stdoutPath, O_WRONLY | O_NONBLOCK),
      reader: open(stdoutPath, O_RDONLY),
      drainer: probes[1],
      laterReader: open(laterPath, O_RDONLY | O_NONBLOCK),
    };
    ends.childLater = open(laterPath, O_WRONLY); // its reader is open: this does not block
    closeSync(probes[0]);
    return ends;
  } catch {
    opened.forEach(closeSync);
    return null;
  } finally {
    if (folder) removeFifoFolder(folder);
  }
}

// Hand a fd to the main thread, unless it has given up on this worker already.
function publish(slot, fd) {
  if (Atomics.compareExchange(state, slot, -1, fd) !== -1) closeSync(fd);
}

const fifo = fifos();
const child = spawn(command, fifo ? [...args, '--later-replies', '3'] : args, {
  cwd,
  env,
  stdio: fifo ? [fifo.childIn, fifo.childOut, 'pipe', fifo.childLater] : ['pipe', 'pipe', 'pipe'],
});
const stdin = fifo ? new Socket({ fd: fifo.queued, readable: false, writable: true }) : child.stdin;
if (fifo) {
  closeSync(fifo.childIn); // the worker has its own copies
  closeSync(fifo.childOut);
  closeSync(fifo.childLater);
  publish(SLOT.STDIN_FD, fifo.direct);
  publish(SLOT.LATER_FD, fifo.laterReader); // before the stdout reader: whoever sees that one sees this one
  publish(SLOT.STDOUT_FD, fifo.reader);
  publish(SLOT.DRAIN_FD, fifo.drainer);
  watch();
} else {
  Atomics.store(state, SLOT.LATER_FD, -3);
  Atomics.store(state, SLOT.STDOUT_FD, -3);
}
Atomics.add(state, SLOT.WAKE, 1); // the main thread may be waiting to learn which way replies come
Atomics.notify(state, SLOT.WAKE);
let stderrKept = '';
let passStderrThrough = false;
// The worker's stderr is always read, so the worker never waits on it; it goes on through
// process.stderr (to the main thread), never by a synchronous write to a fd 2 that may be full.
const passOn = boundedWriter();

// The watchdog of the main thread's blocking reads. It sleeps until the deadline in SLOT.DEADLINE and
// says so in SLOT.WATCHED; the main thread wakes it only for a deadline earlier than that, so calls
// in quick succession never wake it: a later deadline only moves its next look. At a passed
// deadline it kills the worker, and a byte in the stdout FIFO ends the read even if something the
// worker started still holds the FIFO open.
async function watch() {
  for (;;) {
    const deadline = Atomics.load(state, SLOT.DEADLINE);
    Atomics.store(state, SLOT.WATCHED, deadline);
    if (deadline === 0) {
      await Atomics.waitAsync(state, SLOT.DEADLINE, 0).value;
      continue;
    }
    const [seconds, nanoseconds] = process.hrtime();
    const left = msUntil(deadline, seconds * 1e3 + nanoseconds / 1e6, clockBase);
    if (left <= 0) {
      child.kill('SIGKILL');
      try {
        writeSync(fifo.nudge, new Uint8Array(1));
      } catch {
        // the FIFO is full (the main thread is not blocked then) or the main thread closed it
      }
      return;
    }
    await Atomics.waitAsync(state, SLOT.DEADLINE, deadline, left).value;
  }
}

child.on('spawn', () => deliver({ spawned: child.pid }));
// Messages already posted stay queued for the main thread; only this thread ends.
function finish() {
  if (fifo) closeSync(fifo.nudge);
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
  stderrKept = (stderrKept + chunk.toString('utf8')).slice(-STDERR_KEPT_BYTES);
});

let pending = Buffer.alloc(0);
child.stdout?.on('data', (chunk) => {
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

parentPort.on('message', (message) => {
  if (message === 'close') {
    stdin.end();
  } else if (message === 'ready') {
    passStderrThrough = true;
    if (stderrKept) passOn(stderrKept);
    stderrKept = '';
  } else {
    stdin.write(new Uint8Array(message), () => Atomics.sub(state, SLOT.QUEUED, 1));
  }
});
