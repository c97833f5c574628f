// The helper thread of the bridge: it owns one Python worker process and its stdio with ordinary
// asynchronous Node I/O, so the main thread can block in Atomics.wait while bytes still move.
//
// From the main thread (parentPort): an ArrayBuffer holding whole request frames, written to the
// worker's stdin in order; 'ready' once the worker has been configured (stderr is then passed
// through live instead of kept for the startup error); 'close' to end the worker's stdin.
// To the main thread (the `replies` port), each followed by a bump of wake[0] and a notify:
//   {spawned: pid} | {frame: Uint8Array} (one reply body) | {failed: {code, message}} (could not
//   spawn) | {exited: {code, signal, stderr}}.
// The thread ends by itself once its worker has exited and been reaped.
import { spawn } from 'node:child_process';
import { writeSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';

const { command, args, cwd, env, wakeBuffer, replies } = workerData;
const wake = new Int32Array(wakeBuffer);
const STDERR_KEPT_BYTES = 16 * 1024;

function deliver(message, transfer) {
  replies.postMessage(message, transfer);
  Atomics.add(wake, 0, 1);
  Atomics.notify(wake, 0);
}

const child = spawn(command, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
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
child.stdin.on('error', () => {});

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
    child.stdin.end();
  } else if (message === 'ready') {
    passStderrThrough = true;
    if (stderrKept) writeSync(2, stderrKept);
    stderrKept = '';
  } else {
    child.stdin.write(new Uint8Array(message));
  }
});
