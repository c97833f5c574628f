// @ts-check
// What waits for the event loop to be idle (worker/idle.js): sends pushed go at the next idle
// moment, sends deferred with the next that must go or DEFER_MS at most, all in the order made.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { DEFERRED_AT_MOST, DEFER_MS, IdleSends } from '../worker/idle.js';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A deferred send's longest wait in these tests, far beyond their idle moments. */
const LONG_MS = 60_000;

/** Sends that note their name in `sent` when they run, and the sends' `done` as `done`. */
function recorder(deferMs = LONG_MS) {
  const sent = [];
  const idle = new IdleSends((line) => assert.fail(line), () => sent.push('done'), deferMs);
  return { sent, idle, send: (name) => () => sent.push(name) };
}

test('a deferred send waits for the next pushed send and goes before it, at its idle moment', async () => {
  const { sent, idle, send } = recorder();
  idle.defer(send('deferred'));
  await sleep(10);
  assert.deepEqual(sent, [], 'an idle moment alone does not send it');
  idle.push(send('pushed'));
  assert.ok(idle.soon, 'a send waits that must go at the next idle moment');
  await sleep(10);
  assert.deepEqual(sent, ['deferred', 'pushed', 'done']);
  assert.equal(idle.size, 0);
});

test('a deferred send alone goes within its longest wait, and its timer does not keep the process up', async () => {
  const { sent, idle, send } = recorder(50);
  idle.defer(send('deferred'));
  assert.equal(idle.timer?.hasRef(), false, 'unreferenced: an idle dsh may exit (closing the bridge flushes)');
  assert.equal(idle.soon, false);
  await sleep(150);
  assert.deepEqual(sent, ['deferred', 'done']);
});

test('by default a deferred send waits DEFER_MS at most: longer than between the calls of a turn, far shorter than a model takes', () => {
  assert.equal(new IdleSends(() => {}).deferMs, DEFER_MS);
  assert.ok(DEFER_MS >= 1 && DEFER_MS <= 50, `${DEFER_MS} ms`);
});

test('a flush runs the deferred sends at once, and a later push arms its own idle moment', async () => {
  const { sent, idle, send } = recorder();
  idle.defer(send('a'));
  idle.defer(send('b'));
  idle.flush();
  assert.deepEqual(sent, ['a', 'b', 'done']);
  assert.equal(idle.timer, null, 'nothing left to wait for');
  idle.push(send('c'));
  await sleep(10);
  assert.deepEqual(sent, ['a', 'b', 'done', 'c', 'done']);
});

test(`past ${DEFERRED_AT_MOST} sends waiting, one more deferred goes at the next idle moment with them`, async () => {
  const { sent, idle, send } = recorder();
  for (let index = 0; index < DEFERRED_AT_MOST; index++) idle.defer(send(`d${index}`));
  assert.equal(idle.soon, false);
  idle.defer(send('over'));
  assert.ok(idle.soon, 'sent at the next idle moment');
  await sleep(10);
  assert.equal(sent.length, DEFERRED_AT_MOST + 2);
  assert.deepEqual(sent.slice(-2), ['over', 'done']);
});
