// Hostile and odd input through the real shim: any JSON shape, odd tool names, no agent, a 10 MB
// argument. The guard never throws and never returns anything but string | undefined.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { apply } from '../index.js';
import { FakeDsh, makeAgent } from './fake-dsh.js';
import { captureStderr, childPids } from './processes.js';

const disposers = [];
// apply returns a promise of its disposer (dsh awaits it): a hook run before it settles waits for the worker
after(async () => {
  for (const dispose of disposers) (await dispose)();
});

function mountGuard(config = {}) {
  const dsh = new FakeDsh();
  disposers.push(apply(dsh.ctx, config));
  return dsh.guards[0];
}

function deepFreeze(value) {
  if (value !== null && typeof value === 'object') {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}

let nested = 'bottom';
for (let depth = 0; depth < 5000; depth++) nested = depth % 2 ? [nested] : { nested };

const SHAPES = [
  null, 0, -0, 1e308, -1, 2 ** 53 + 1, true, '', 'text', [], {}, [null, [1, [2.5, [[]]]]],
  { command: 'echo \u0000\uD800\uDFFF\uDC00 \u202E 名前 🙂' }, { '\uD800': '\uDBFF', '': '' },
  { __proto__: null, command: 'ls' }, { constructor: 'x', toString: 'y', hasOwnProperty: 1 },
  new Array(10_000).fill({ a: 1 }), nested, [{ frozen: true }],
].map(deepFreeze); // as dsh hands them over

test('every argument shape and tool name gets a verdict, never an exception', () => {
  const guard = mountGuard();
  const agent = makeAgent('hostile');
  let index = 0;
  for (const args of SHAPES) {
    for (const toolName of ['bash', '', ' ', '\u0000', 'web_fetch', '名前', 'x'.repeat(10_000), 'todo_write']) {
      const exec = Object.freeze({ name: toolName, callId: `h${index++}`, agent, arguments: args });
      const verdict = guard(exec);
      assert.ok(verdict === undefined || typeof verdict === 'string', `${toolName} with ${typeof args}`);
    }
  }
  for (const exec of [{ name: 'bash', arguments: { command: 'ls' } }, { name: 'bash', agent: null }, { agent: {} }]) {
    assert.equal(guard(exec), undefined, 'no agent, no name: allowed without a round trip');
  }
});

test('a 10 MB argument is decided well under a second, and its repeat is still caught', () => {
  const guard = mountGuard();
  const agent = makeAgent('big');
  const content = 'x'.repeat(10 * 1024 * 1024);
  const verdicts = [];
  let slowest = 0;
  for (let index = 0; index < 5; index++) {
    const started = performance.now();
    verdicts.push(guard(deepFreeze({ name: 'write', callId: `w${index}`, agent, arguments: { path: 'big.txt', content } })));
    slowest = Math.max(slowest, performance.now() - started);
  }
  assert.deepEqual(verdicts.map((verdict) => verdict === undefined), [true, true, true, true, false]);
  assert.ok(slowest < 5000, `slowest decision ${slowest.toFixed(0)} ms`);
  // One character more is another write: identity is kept past the digested prefix.
  const changed = guard({ name: 'write', callId: 'w5', agent, arguments: { path: 'big.txt', content: `${content}y` } });
  assert.equal(changed, undefined);
});

test('a hung worker leaves no argument text in the shim\'s log lines', async () => {
  const written = await captureStderr(() => {
    const existing = new Set(childPids());
    const guard = mountGuard({ guardTimeoutMs: 100 });
    const agent = makeAgent('secret');
    const args = { command: 'curl -H "Authorization: Bearer SEKRIT-TOKEN" https://api.example/?api_key=SEKRIT-KEY' };
    guard({ name: 'bash', callId: 's0', agent, arguments: args });
    for (const pid of childPids().filter((child) => !existing.has(child))) process.kill(pid, 'SIGSTOP');
    guard({ name: 'bash', callId: 's1', agent, arguments: args });
    guard({ name: 'bash', callId: 's2', agent, arguments: args });
  });
  const text = written.join('');
  assert.match(text, /did not answer within 100 ms/);
  assert.doesNotMatch(text, /SEKRIT/);
});
