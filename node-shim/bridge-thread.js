// The helper thread of the bridge: it owns one Python worker process and its stdio with ordinary
// asynchronous Node I/O, so the main thread can block in Atomics.wait while bytes still move.
//
// The worker's stdin is a FIFO where one can be made (mkfifo): the main thread then writes request
// frames to it itself, without waking this thread, through a non-blocking fd published in
// state[1]; only what does not fit in the FIFO comes here. Elsewhere stdin is an ordinary pipe
// that only this thread writes. Ownership of the published fd passes to the main thread, which
// closes it (state[1] = -2 once it has given up on this worker; a late fd is then closed here).
//
// From the main thread (parentPort): an ArrayBuffer holding request bytes, written to the
// worker's stdin in order, each followed by a decrement of state[2] once written; 'ready' once the worker has been configured (stderr is then passed
// through live instead of kept for the startup error); 'close' to end the worker's stdin.
// To the main thread (the `replies` port), each followed by a bump of state[0] and a notify:
//   {spawned: pid} | {frame: Uint8Array} (one reply body) | {failed: {code, message}} (could not
//   spawn) | {exited: {code, signal, stderr}}.
// The thread ends by itself once its worker has exited and been reaped.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';

const { command, args, cwd, env, stateBuffer, replies } = workerData;
const state = new Int32Array(stateBuffer); // [0] wake counter, [1] direct stdin fd, [2] frames queued here
const STDERR_KEPT_BYTES = 16 * 1024;

function deliver(message, transfer) {
  replies.postMessage(message, transfer);
  Atomics.add(state, 0, 1);
  Atomics.notify(state, 0);
}

// A FIFO for the worker's stdin: {child: its blocking read end, queued: a blocking write end for
// this thread, direct: a non-blocking write end for the main thread}; null where none can be made.
// The FIFO is created in a private folder and unlinked at once: no one else can open it.
function stdinFifo() {
  if (process.platform === 'win32') return null;
  const folder = mkdtempSync(join(tmpdir(), 'rtb-'));
  const opened = [];
  try {
    const path = join(folder, 'stdin');
    if (spawnSync('mkfifo', ['-m', '600', path], { stdio: 'ignore' }).status !== 0) return null;
    // Opening a FIFO blocks until the other side is open, except when it already is: a
    // non-blocking reader makes room for the writers, which then let the blocking reader open.
    for (const flags of [
      constants.O_RDONLY | constants.O_NONBLOCK,
      constants.O_WRONLY,
      constants.O_WRONLY | constants.O_NONBLOCK,
      constants.O_RDONLY,
    ]) opened.push(openSync(path, flags));
    const [probe, queued, direct, child] = opened;
    closeSync(probe);
    return { child, queued, direct };
  } catch {
    for (const fd of opened) closeSync(fd);
    return null;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

const fifo = stdinFifo();
const child = spawn(command, args, { cwd, env, stdio: [fifo ? fifo.child : 'pipe', 'pipe', 'pipe'] });
const stdin = fifo ? new Socket({ fd: fifo.queued, readable: false, writable: true }) : child.stdin;
if (fifo) {
  closeSync(fifo.child); // the worker has its own copy
  if (Atomics.compareExchange(state, 1, -1, fifo.direct) !== -1) closeSync(fifo.direct);
}
let stderrKept = '';
let passStderrThrough = false;

child.on('spawn', () => deliver({ spawned: child.pid }));
// Messages already posted stay queued for the main thread; only this thread ends.
function finish() {
  process.exit(0);
}

child.on('error', (error) => {
  deliver({ failed: { code: error.code ?? null, message: error.message } });
  if (child.pid === undefined) finish(); // never started: no 'close' will follow
});
// 'close' (not 'exit') comes after stdout has been drained, so the last replies are delivered first.
child.on('close', (code, signal) => {
  deliver({ exited: { code, signal, stderr: stderrKept } });
  finish();
});
// A write to a worker that just died fails with EPIPE; its exit is what gets reported.
stdin.on('error', () => {});

child.stderr.on('data', (chunk) => {
  if (passStderrThrough) {
    writeSync(2, chunk);
    return;
  }
  stderrKept = (stderrKept + chunk.toString('utf8')).slice(-STDERR_KEPT_BYTES);
});

let pending = Buffer.alloc(0);
child.stdout.on('data', (chunk) => {
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
    if (stderrKept) writeSync(2, stderrKept);
    stderrKept = '';
  } else {
    stdin.write(new Uint8Array(message), () => Atomics.sub(state, 2, 1));
  }
});
