// @ts-check
// What waits for the event loop to be idle (worker/idle.js): sends pushed go at the next idle
// moment, sends deferred with the next that must go or DEFER_MS at most, all in the order made.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { DEFERRED_AT_MOST, DEFER_MS, IdleSends } from '../worker/idle.js';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sends that note their name in `sent` when they run, and the sends' `done` as `done`. */
function recorder() {
  const sent = [];
  const idle = new IdleSends((line) => assert.fail(line), () => sent.push('done'));
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

test('a deferred send alone goes within DEFER_MS, and its timer does not keep the process up', async () => {
  const { sent, idle, send } = recorder();
  idle.defer(send('deferred'));
  assert.equal(idle.timer?.hasRef(), false, 'unreferenced: an idle dsh may exit (closing the bridge flushes)');
  assert.equal(idle.soon, false);
  await sleep(DEFER_MS + 100);
  assert.deepEqual(sent, ['deferred', 'done']);
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
