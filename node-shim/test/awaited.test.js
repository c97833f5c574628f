// The replies awaited on the event loop share one timer: each is still rejected at its own
// deadline, in time, and the timer keeps the process up only while a reply is awaited.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Awaited } from '../worker/awaited.js';
import { clock } from '../worker/clock.js';
import { WorkerUnavailable } from '../worker/worker-errors.js';

// When a promise settled (clock ms), and how.
function watch(promise) {
  return promise.then(
    (reply) => ({ at: clock(), reply }),
    (error) => ({ at: clock(), error }),
  );
}

test('each awaited reply is rejected at its own deadline, whatever order they were sent in; an answered one is not', { timeout: 10_000 }, async () => {
  const awaited = new Awaited();
  const start = clock();
  const timedOut = [];
  const onTimeout = (error) => timedOut.push(error);
  const late = watch(awaited.wait(1, start + 120, 120, onTimeout));
  const soon = watch(awaited.wait(2, start + 40, 40, onTimeout));
  const answered = watch(awaited.wait(3, start + 10, 10, onTimeout));
  const later = watch(awaited.wait(4, start + 200, 200, onTimeout));
  assert.equal(awaited.settle({ id: 3, ok: true }), true);
  assert.equal(awaited.settle({ id: 3, ok: true }), false, 'settled once');
  assert.deepEqual((await answered).reply, { id: 3, ok: true });
  const [first, second, third] = await Promise.all([soon, late, later]);
  for (const [outcome, deadline, timeoutMs] of [[first, 40, 40], [second, 120, 120], [third, 200, 200]]) {
    assert.ok(outcome.error instanceof WorkerUnavailable);
    assert.equal(outcome.error.code, 'TIMEOUT');
    assert.match(outcome.error.message, new RegExp(`within ${timeoutMs} ms`));
    assert.ok(outcome.at >= start + deadline - 1, `not before its deadline (${outcome.at - start} ms for ${deadline})`);
    // Only a gross overrun fails (a loaded machine delays timers): one timer per earliest
    // deadline, not per request, must still wake for each.
    assert.ok(outcome.at < start + deadline + 1000, `about at its deadline (${outcome.at - start} ms for ${deadline})`);
  }
  assert.ok(first.at <= second.at && second.at <= third.at);
  assert.deepEqual(timedOut, [first.error, second.error, third.error], 'each given to onTimeout');
  assert.equal(awaited.size, 0);
  assert.equal(awaited.timer, null, 'nothing left to time');
});

test('the timer keeps the process up only while a reply is awaited', { timeout: 10_000 }, async () => {
  const awaited = new Awaited();
  const pending = awaited.wait(1, clock() + 60_000, 60_000, () => {});
  assert.equal(awaited.timer?.hasRef(), true);
  awaited.settle({ id: 1, ok: true });
  await pending;
  assert.equal(awaited.timer?.hasRef(), false, 'answered: an idle process may exit');
  const next = awaited.wait(2, clock() + 90_000, 90_000, () => {});
  assert.equal(awaited.timer?.hasRef(), true, 'awaited again');
  awaited.abandon('the worker was stopped');
  await assert.rejects(next, (error) => error instanceof WorkerUnavailable && error.code === 'EXITED');
  assert.equal(awaited.timer, null);
});

test('a timeout that gives up the worker abandons the replies still awaited from it, once each', { timeout: 10_000 }, async () => {
  const awaited = new Awaited();
  const start = clock();
  const outcomes = [];
  const give = (id, deadline) => awaited.wait(id, start + deadline, deadline, () => awaited.abandon('replaced')).then(
    () => outcomes.push(`${id} answered`),
    (error) => outcomes.push(`${id} ${error.code}`),
  );
  await Promise.all([give(1, 20), give(2, 20), give(3, 5_000)]);
  assert.deepEqual(outcomes, ['1 TIMEOUT', '2 EXITED', '3 EXITED']);
  assert.equal(awaited.timer, null);
});
