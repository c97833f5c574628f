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

const { stateBuffer, clockBase, pid, queued } = workerData;
const state = new Int32Array(stateBuffer);

const stdin = new Socket({ fd: queued, readable: false, writable: true });
stdin.on('error', () => {}); // a worker that died: its end is what the main thread reports

// At a passed deadline the worker is killed and the blocking read ended with a byte, through the
// nudge end if the main thread has not closed it (whoever takes it from the slot closes it).
watchDeadlines(state, clockBase, () => {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone already
  }
  const fd = Atomics.exchange(state, SLOT.NUDGE_FD, -2);
  if (fd >= 0) {
    nudge(fd);
    closeSync(fd);
  }
});

parentPort.on('message', (message) => {
  if (message === 'close') stdin.end(() => process.exit(0));
  else stdin.write(new Uint8Array(message), () => Atomics.sub(state, SLOT.QUEUED, 1));
});
