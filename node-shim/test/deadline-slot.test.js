// The deadline the bridge's main thread shares with its watchdog (slots.js) in one Int32 slot:
// right at any age of the worker, past the 24.8 days (2^31 ms) an Int32 counts, without waiting
// for them (the clock is given).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { dueBefore, dueSlot, msUntil } from '../worker/slots.js';

const DAY = 86_400_000;
const AGES = [0, 1, 24 * DAY, 2 ** 31 - 100, 2 ** 31 + 100, 25 * DAY, 2 ** 32 - 300, 2 ** 32, 50 * DAY, 400 * DAY];

test('a deadline held in the slot is due when it is, whatever the age of the worker', () => {
  const base = 12_345.678; // the clock when the worker started
  for (const age of AGES) {
    for (const timeout of [1, 500, 10_000, DAY]) {
      const now = base + age + 0.25;
      const due = dueSlot(now + timeout, base);
      assert.equal(due, due | 0, 'an Int32');
      assert.notEqual(due, 0, '0 means not waiting');
      assert.equal(new Int32Array([due])[0], due, 'the slot holds it as it is');
      const left = msUntil(due, now, base);
      assert.ok(left >= timeout && left <= timeout + 2, `age ${age}, ${timeout} ms: ${left} left`);
      assert.ok(msUntil(due, now + timeout + 1, base) <= 0, `age ${age}, ${timeout} ms: passed`);
      assert.ok(msUntil(due, now + timeout - 1, base) > 0, `age ${age}, ${timeout} ms: not yet`);
    }
  }
});

test('a deadline that wraps to 0 is taken 1 ms later, not as no deadline', () => {
  const base = 0;
  const deadline = 2 ** 32; // ms after the start: 0 in 32 bits
  const due = dueSlot(deadline, base);
  assert.equal(due, 1);
  assert.equal(msUntil(due, deadline - 10, base), 11);
  assert.ok(msUntil(due, deadline + 1, base) <= 0);
});

test('the earlier of two deadlines is told apart across the wrap', () => {
  const base = 0;
  for (const age of AGES) {
    const sooner = dueSlot(age + 100, base);
    const later = dueSlot(age + 10_000, base);
    assert.ok(dueBefore(sooner, later), `age ${age}`);
    assert.ok(!dueBefore(later, sooner), `age ${age}`);
  }
});
