// @ts-check
// The helper thread of a worker the main thread owns (owner.js), started only when first needed:
// the watchdog of the main thread's blocking reads (watchdog.js), and the writer of the request
// frames that do not fit a direct write, through the blocking stdin write end it is given, in
// order. The worker's process, its pipes and its exit stay the main thread's.
//
// From the main thread (parentPort): an ArrayBuffer holding request bytes, each followed by a
// decrement of SLOT.QUEUED once written; 'close' to end the worker's stdin (this thread then ends).
import { closeSync } from 'node:fs';
import { Socket } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';

import { SLOT } from './slots.js';
import { nudge, watchDeadlines } from './watchdog.js';
import { zombieStatus } from './zombie.js';

const { stateBuffer, clockBase, pid, queued } = workerData;
const state = new Int32Array(stateBuffer);

// The blocking stdin end, unless the worker was let go before this thread was first needed (its
// ends closed: owner.js release): then nothing more reaches it, and its end is what is reported.
const stdin = queued >= 0 ? new Socket({ fd: queued, readable: false, writable: true }) : null;
stdin?.on('error', () => {}); // a worker that died: its end is what the main thread reports

// The blocking read ended with a byte, through the nudge end if the main thread has not closed it
// (whoever takes it from the slot closes it): then the read sees the end of the FIFO.
function endRead() {
  const fd = Atomics.exchange(state, SLOT.NUDGE_FD, -2);
  if (fd >= 0) {
    nudge(fd);
    closeSync(fd);
  }
}

// Whether the worker has exited (Linux: its process a zombie, or reaped) while the nudge end is
// still open: one that dies before it opened its end of the stdout FIFO (at its imports, a
// package missing) would otherwise leave the read waiting for its deadline. Once the worker has
// been heard from, its end of the FIFO closing ends the read.
function lost() {
  return Atomics.load(state, SLOT.NUDGE_FD) >= 0 && zombieStatus(pid) !== undefined;
}

// At a passed deadline the worker is killed and the read ended; a worker found gone ends it too.
watchDeadlines(
  state,
  clockBase,
  () => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
    endRead();
  },
  { lost, ended: endRead },
);

parentPort.on('message', (message) => {
  if (message === 'close') {
    if (stdin) stdin.end(() => process.exit(0));
    else process.exit(0);
  } else if (stdin) stdin.write(new Uint8Array(message), () => Atomics.sub(state, SLOT.QUEUED, 1));
  else Atomics.sub(state, SLOT.QUEUED, 1);
});
