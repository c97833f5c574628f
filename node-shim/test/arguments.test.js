// The bounded copy of a call's arguments: what JSON keeps, at a bounded cost, so that copying,
// encoding and deciding any argument fits the guard deadline without killing a healthy worker.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { COPY_LIMITS, TOO_COSTLY, boundedCopy } from '../call/arguments.js';
import { apply } from '../index.js';
import { FakeDsh, makeAgent } from './fake-dsh.js';
import { captureStderr, childPids } from './processes.js';

const disposers = [];
// apply returns a promise of its disposer (dsh awaits it): a hook run before it settles waits for the worker
after(async () => {
  for (const dispose of disposers) (await dispose)();
});

test('an own "__proto__" key (what JSON.parse makes) is kept as a key', () => {
  const { value } = boundedCopy(JSON.parse('{"__proto__": {"path": "a.txt"}, "command": "ls"}'));
  assert.deepEqual(Object.keys(value), ['__proto__', 'command']);
  assert.deepEqual({ ...value.__proto__ }, { path: 'a.txt' });
});

test('a getter or toJSON that throws costs its value only, and its message is not kept', () => {
  const args = { command: 'ls', get secret() { throw new Error('password=hunter2'); } };
  const { value } = boundedCopy(args);
  assert.equal(value.secret, '[unreadable]');
  assert.equal(boundedCopy({ toJSON() { throw new Error('password=hunter2'); } }).value, '[unreadable]');
});

test('past its budget a container or string is cut with a marker saying how much, the same way every time', () => {
  const limits = { ...COPY_LIMITS, values: 5, textUnits: 10, depth: 3 };
  const sparse = [];
  sparse.length = 1e7;
  assert.deepEqual(boundedCopy(sparse, limits).value, [null, null, null, null, null, '[cut: 9999995 more items]']);
  assert.deepEqual(boundedCopy(new Uint8Array(8), limits).value, [0, 0, 0, 0, 0, '[cut: 3 more items]']);
  assert.equal(boundedCopy('x'.repeat(12), limits).value, 'xxxxxxxxxx[cut: 2 more characters]');
  assert.deepEqual({ ...boundedCopy({ a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7 }, limits).value },
    { a: 1, b: 2, c: 3, d: 4, e: 5, '[cut]': '2 more keys' });
  assert.deepEqual(boundedCopy([[[['deep']]]], limits).value, [[['[nested too deeply]']]]);
});

test('arguments with more keys to list than the budget are one fixed marker, never a partial copy', () => {
  const limits = { ...COPY_LIMITS, listedKeys: 10 };
  const wide = Object.fromEntries(Array.from({ length: 6 }, (_, index) => [`k${index}`, index]));
  assert.equal(boundedCopy({ once: wide }, limits).value.once.k5, 5);
  assert.deepEqual(boundedCopy([wide, wide], limits), { value: TOO_COSTLY, weight: TOO_COSTLY.length, textUnits: TOO_COSTLY.length });
});

// Arguments a confused model or harness produced, each slow to copy, encode or decide unbounded.
const COSTLY_ARGUMENTS = {
  '300,000 empty objects': () => ({ items: Array.from({ length: 300_000 }, () => ({})) }),
  '200,000 small edit objects': () => ({
    path: 'a.txt',
    edits: Array.from({ length: 200_000 }, (_, index) => ({ oldText: `line ${index}`, newText: `row ${index}` })),
  }),
  'a 1 MB typed array': () => ({ bytes: new Uint8Array(1024 * 1024).fill(7) }),
  'a sparse array of length 1e7': () => {
    const sparse = [];
    sparse.length = 1e7;
    sparse[5] = 'x';
    return { sparse };
  },
  '200,000 keys': () => Object.fromEntries(Array.from({ length: 200_000 }, (_, index) => [`k${index}`, index])),
};

// The deadline itself (the default 500 ms) is held to in bench/faults.mjs; here, on a shared
// machine, the bound only separates "decided" from the multi-second stalls and killed workers
// these caused: the guard's deadline is 3 s, as a call of 200,000 keys took 90-280 ms at load 6
// and a scheduling pause past 500 ms then killed a healthy worker about one run in ten.
const SEPARATING_TIMEOUT_MS = 3000;
for (const [label, make] of Object.entries(COSTLY_ARGUMENTS)) {
  test(`${label}: every call is decided by the same worker without a stall, and the loop is caught`, async () => {
    const dsh = new FakeDsh();
    const existing = new Set(childPids());
    disposers.push(await apply(dsh.ctx, { guardTimeoutMs: SEPARATING_TIMEOUT_MS }));
    const workers = () => childPids().filter((pid) => !existing.has(pid));
    const [worker] = workers();
    const [guard] = dsh.guards;
    const agent = makeAgent(label);
    const args = make();
    const verdicts = [];
    let slowest = 0;
    for (let index = 0; index < 5; index++) {
      const started = performance.now();
      verdicts.push(guard({ name: 'edit', callId: `c${index}`, agent, arguments: args }));
      slowest = Math.max(slowest, performance.now() - started);
    }
    assert.ok(slowest < SEPARATING_TIMEOUT_MS, `slowest call ${slowest.toFixed(0)} ms`);
    assert.deepEqual(workers(), [worker], 'no worker was killed or replaced');
    assert.deepEqual(verdicts.map((verdict) => verdict === undefined), [true, true, true, true, false]);
    assert.match(verdicts[4], /^REPEAT_TOOL_BLOCKED:/);
  });
}

test('the copy limits keep a frame well under the 64 MB frame limit', () => {
  assert.ok(COPY_LIMITS.textUnits * 3 + COPY_LIMITS.values * 16 < 64 * 1024 * 1024);
});

test('calls that differ only under an own "__proto__" key are different calls', () => {
  const dsh = new FakeDsh();
  disposers.push(apply(dsh.ctx, {}));
  const [guard] = dsh.guards;
  const agent = makeAgent('proto');
  const verdicts = [];
  for (let index = 0; index < 6; index++) {
    const args = JSON.parse(`{"__proto__": {"ticket": "T-${index}"}, "action": "close"}`);
    verdicts.push(guard({ name: 'tracker', callId: `p${index}`, agent, arguments: args }));
  }
  assert.deepEqual(verdicts, Array(6).fill(undefined));
});

test('2,000 arguments whose getters throw secrets are decided, and nothing of them reaches the log', async () => {
  const dsh = new FakeDsh();
  disposers.push(apply(dsh.ctx, {}));
  const [guard] = dsh.guards;
  const agent = makeAgent('getters');
  const written = await captureStderr(() => {
    for (let index = 0; index < 2000; index++) {
      const args = { command: `ls ${index}`, get token() { throw new Error(`password=hunter2-${index}`); } };
      assert.equal(guard({ name: 'bash', callId: `g${index}`, agent, arguments: args }), undefined);
    }
  });
  assert.doesNotMatch(written.join(''), /hunter2/);
  assert.ok(written.length < 10, `${written.length} lines logged`);
});
