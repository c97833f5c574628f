// @ts-check
// The main thread's end of the worker's pipes: writing request frames (directly into the stdin
// FIFO, never waiting: what does not fit goes to the helper thread), and blocking for one reply,
// every wait bounded. Where the worker's stdout is a FIFO the thread reads it itself (blocking
// reads) while the helper thread, as a watchdog, kills the worker once the deadline in
// SLOT.DEADLINE passes (which ends the read); elsewhere it sleeps in Atomics.wait on the counter
// the helper bumps for each message it forwards, and takes the reply from the port.
import { writeSync } from 'node:fs';

import { clock } from './clock.js';
import { MainOwner } from './owner.js';
import { SLOT, dueBefore, dueSlot } from './slots.js';
import { exitError, timeoutError } from './worker-errors.js';

/** Larger writes would not fit a FIFO's buffer (the worker asks for 1 MB): they go whole to the
 * helper. What a direct write leaves over goes to the helper too. */
const DIRECT_LIMIT = 1024 * 1024;

/**
 * Whole frames (`frames`, one after another) to the stdin of the current worker of `bridge`: in
 * one direct write where possible, else (and what a direct write left over) through the helper,
 * as a copy it can take over. `frames` may be reused once this returns.
 * @param {import('./bridge.js').WorkerBridge} bridge @param {Uint8Array} frames
 */
export function writeFrames(bridge, frames) {
  let written = 0;
  const direct = Atomics.load(bridge.state, SLOT.STDIN_FD);
  if (direct >= 0 && frames.length <= DIRECT_LIMIT && Atomics.load(bridge.state, SLOT.QUEUED) === 0) {
    try {
      written = writeSync(direct, frames);
    } catch (error) {
      if (error.code === 'EPIPE') return; // the worker is gone; its exit is what gets reported
      // EAGAIN: the FIFO is full; the helper waits for room instead of this thread
    }
    if (written === frames.length) return;
  }
  const rest = frames.slice(written);
  Atomics.add(bridge.state, SLOT.QUEUED, 1);
  bridge.helper.postMessage(rest.buffer, [rest.buffer]);
}

/**
 * Block until the reply with `id` from the current worker of `bridge` arrives (earlier replies are
 * consumed on the way), or throw WorkerUnavailable: the worker exited, or `deadline` (clock ms)
 * passed (the error names `timeoutMs`).
 * @param {import('./bridge.js').WorkerBridge} bridge
 */
export function waitForReply(bridge, id, deadline, timeoutMs) {
  for (;;) {
    const seen = Atomics.load(bridge.state, SLOT.WAKE);
    const reader = Atomics.load(bridge.state, SLOT.STDOUT_FD);
    // Before any exit is believed: replies the worker wrote before exiting may still be unread.
    if (reader >= 0) return readReply(bridge, reader, id, deadline, timeoutMs);
    const owner = bridge.helper;
    if (owner instanceof MainOwner && !owner.replaced) {
      // No event loop turns while this thread waits: the FIFOs are looked for here (owner.js).
      const ended = owner.fifosNow(deadline);
      if (ended) throw exitError(ended, bridge.spawnOptions.command);
      if (Atomics.load(bridge.state, SLOT.STDOUT_FD) >= 0) continue;
    }
    const reply = bridge.drain(id);
    if (reply) return reply;
    if (bridge.exited) throw exitError(bridge.exited, bridge.spawnOptions.command);
    const left = deadline - clock();
    if (left <= 0) throw timeoutError(timeoutMs);
    Atomics.wait(bridge.state, SLOT.WAKE, seen, left); // woken by a forwarded message or a published fd
  }
}

/**
 * Read replies from the stdout FIFO until the one with `id`, under the helper's watchdog.
 * @param {import('./bridge.js').WorkerBridge} bridge
 */
function readReply(bridge, reader, id, deadline, timeoutMs) {
  const owner = bridge.helper instanceof MainOwner ? bridge.helper : null;
  owner?.watched();
  const due = dueSlot(deadline, bridge.clockBase);
  Atomics.store(bridge.state, SLOT.DEADLINE, due);
  const watched = Atomics.load(bridge.state, SLOT.WATCHED);
  if (watched === 0 || dueBefore(due, watched)) Atomics.notify(bridge.state, SLOT.DEADLINE); // the watchdog would look too late
  try {
    for (;;) {
      const reply = bridge.takeFrames(id);
      if (reply) return reply;
      if (clock() >= deadline) throw timeoutError(timeoutMs);
      if (bridge.inbox.fill(reader) === 0) break; // the worker is gone
      owner?.heardFrom();
    }
  } finally {
    Atomics.store(bridge.state, SLOT.DEADLINE, 0);
  }
  // A worker this thread owns: killed by the watchdog at the deadline, or how it ended is read
  // now, the event loop not turning meanwhile.
  if (owner && !owner.replaced) {
    if (clock() >= deadline) throw timeoutError(timeoutMs);
    throw exitError(bridge.exited ?? owner.gone(), bridge.spawnOptions.command);
  }
  // Its exit is reported by the helper once the process is reaped.
  for (;;) {
    const seen = Atomics.load(bridge.state, SLOT.WAKE);
    bridge.drain();
    if (bridge.exited) throw exitError(bridge.exited, bridge.spawnOptions.command);
    const left = deadline - clock();
    if (left <= 0) throw timeoutError(timeoutMs);
    Atomics.wait(bridge.state, SLOT.WAKE, seen, left);
  }
}
