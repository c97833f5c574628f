// @ts-check
// A worker the main thread owns (worker/owner.js): started without a helper thread, which comes
// only when a blocking read needs its watchdog; its FIFOs opened on the event loop or, by a thread
// that waits, at once; a worker that keeps its pipes handed to a helper thread that owns its
// successor; its end seen by a thread that waits without the event loop.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { WorkerUnavailable, clock } from '../worker/bridge.js';
import { answered, begin, booted } from '../worker/first-answer.js';
import { MainOwner } from '../worker/owner.js';
import { SLOT } from '../worker/slots.js';
import { testBridge, waitUntil } from './processes.js';

const PYTHON = process.env.RTB_PYTHON || 'python3';
const folder = mkdtempSync(join(tmpdir(), 'rtb-owner-test-'));
// The FIFO folders of this file's workers go in its own temporary folder: a worker that keeps its
// pipes (below) leaves the file in its way there, which no cleanup removes (it is not ours).
mkdirSync(join(folder, 'tmp'));
Object.assign(process.env, { TMPDIR: join(folder, 'tmp'), XDG_RUNTIME_DIR: '' });
const closers = [];
after(() => {
  closers.forEach((close) => close());
  rmSync(folder, { recursive: true, force: true });
});

const bridgeWith = (command = PYTHON) => testBridge(closers, { command });

const CONFIGURE = { op: 'configure', config: null };

test('the main thread starts the worker itself: no helper thread until a blocking read needs its watchdog', async () => {
  const { bridge } = bridgeWith();
  begin(bridge, CONFIGURE, 10_000);
  await answered(bridge);
  assert.equal(booted(bridge).ok, true);
  const owner = bridge.helper;
  assert.ok(owner instanceof MainOwner, 'owned by the main thread');
  assert.equal(owner.thread, null, 'configured on the event loop, no thread started');
  assert.ok(bridge.state[SLOT.STDOUT_FD] >= 0, 'its FIFOs open');
  assert.equal(bridge.pid, owner.pid);
  assert.equal((await bridge.ask({ op: 'stats' })).ok, true, 'a reply on the event loop needs no thread');
  assert.equal(owner.thread, null);
  assert.equal(bridge.call({ op: 'stats' }).ok, true, 'a blocking call');
  assert.notEqual(owner.thread, null, 'its watchdog started for the blocking read');
});

test("a worker let go before its stdout pipe ended: the pipe's late end closes nothing twice and throws nothing", () => {
  const { bridge } = bridgeWith();
  bridge.spawn();
  const owner = bridge.helper;
  assert.ok(owner instanceof MainOwner);
  assert.equal(owner.fifosNow(clock() + 10_000), undefined);
  assert.ok(owner.ends && !owner.heard, 'its FIFOs open, nothing read from them yet');
  bridge.close(); // a refused configuration: the boot lets the worker go
  assert.doesNotThrow(() => owner.settled(), 'as when dsh sees the end of the stdout pipe after the close');
  assert.equal(owner.ends.keeper, -1);
});

test('a thread that waits before the FIFOs are made opens them itself and gets its answer', () => {
  const { bridge } = bridgeWith();
  const reply = bridge.boot(CONFIGURE, 10_000); // no event loop turn between the spawn and the wait
  assert.equal(reply.ok, true);
  assert.ok(bridge.helper instanceof MainOwner && !bridge.helper.replaced);
  assert.ok(bridge.state[SLOT.STDOUT_FD] >= 0);
  for (let call = 0; call < 3; call++) assert.equal(bridge.call({ op: 'stats' }).ok, true);
});

// A worker whose folder cannot take FIFOs: a regular file where its stdin FIFO goes.
function keepsPipes() {
  const interpreter = join(folder, 'keeps-pipes');
  writeFileSync(interpreter, `#!/bin/sh\nfor a; do [ "$p" = --fifos ] && : > "$a/stdin"; p=$a; done\nexec '${PYTHON}' "$@"\n`, { mode: 0o755 });
  return interpreter;
}

test('a worker that keeps its pipes is replaced by one a helper thread owns, which gets what was sent (a thread waiting)', () => {
  const { bridge } = bridgeWith(keepsPipes());
  assert.equal(bridge.boot(CONFIGURE, 10_000).ok, true);
  assert.ok(bridge.helper instanceof MainOwner && bridge.helper.replaced, 'handed over');
  assert.equal(bridge.state[SLOT.STDOUT_FD], -3, 'pipes');
  assert.equal(bridge.call({ op: 'stats' }).ok, true);
});

test('a worker that keeps its pipes is replaced by one a helper thread owns (the event loop turning)', async () => {
  const { bridge } = bridgeWith(keepsPipes());
  begin(bridge, CONFIGURE, 10_000);
  await answered(bridge);
  assert.equal(booted(bridge).ok, true);
  assert.ok(bridge.helper instanceof MainOwner && bridge.helper.replaced);
  assert.equal((await bridge.ask({ op: 'stats' })).ok, true);
});

test('a worker that dies while the main thread waits on it is found gone at once, how it ended logged, the call sent to its successor', () => {
  const { bridge, lines } = bridgeWith();
  assert.equal(bridge.boot(CONFIGURE, 10_000).ok, true);
  const first = bridge.pid;
  process.kill(first, 'SIGSTOP'); // it answers nothing; killed 0.3 s into the wait below
  spawn('sh', ['-c', `sleep 0.3; kill -9 ${first}`], { stdio: 'ignore' }).unref();
  const started = performance.now();
  assert.equal(bridge.call({ op: 'stats' }).ok, true, 'answered by its successor');
  assert.ok(performance.now() - started < 2000, 'not at its deadline (2.5 s)');
  assert.notEqual(bridge.pid, first);
  assert.match(lines.join('\n'), /the worker is not running \(killed by SIGKILL\) during a stats request/);
});

test('a worker that could not be started fails the start with the reason, the event loop turning', async () => {
  const { bridge } = bridgeWith(join(folder, 'no-such-python'));
  begin(bridge, CONFIGURE, 10_000);
  await answered(bridge);
  assert.throws(() => booted(bridge), (error) => error instanceof WorkerUnavailable && /could not start/.test(error.message));
  assert.ok(await waitUntil(() => bridge.exited !== null || bridge.closed, 1000));
});

/** A Python that makes the worker's FIFOs and dies at its imports, as one without msgpack does. */
function pythonWithoutMsgpack() {
  const lacking = join(folder, 'lacking');
  mkdirSync(lacking, { recursive: true });
  writeFileSync(join(lacking, 'msgpack.py'), 'raise ImportError("No module named \'msgpack\'")\n');
  const python = join(folder, 'python-without-msgpack');
  writeFileSync(python, `#!/bin/sh\nPYTHONPATH="${lacking}:$PYTHONPATH" exec ${PYTHON} "$@"\n`, { mode: 0o755 });
  return python;
}

test('a worker that makes its FIFOs and dies at its imports fails the boot with how it ended, and nothing else (the event loop turning)', async () => {
  const { bridge, lines } = bridgeWith(pythonWithoutMsgpack());
  begin(bridge, CONFIGURE, 10_000);
  await answered(bridge);
  assert.throws(() => booted(bridge), (error) => error instanceof WorkerUnavailable && /exited with code 1/.test(error.message));
  bridge.close();
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.doesNotMatch(lines.join('\n'), /thread failed|RangeError|ERR_/);
});

test('a worker that makes its FIFOs and dies at its imports fails a thread that waits on it at once, with how it ended and what it said', () => {
  const { bridge, lines } = bridgeWith(pythonWithoutMsgpack());
  const started = performance.now();
  assert.throws(
    () => bridge.boot(CONFIGURE, 10_000),
    (error) =>
      error instanceof WorkerUnavailable && /exited with code 1/.test(error.message) && /No module named 'msgpack'/.test(/** @type {any} */ (error).stderr),
  );
  assert.ok(performance.now() - started < 5000, 'found gone, not at its deadline (10 s)');
  assert.doesNotMatch(lines.join('\n'), /thread failed|RangeError|ERR_/);
});
