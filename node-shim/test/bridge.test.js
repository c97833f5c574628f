// The bridge under faults a hostile review found: the worker's losses, its temporary folder and
// PATH, event replies piling up, recovery with many live agents, and leftovers.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { WorkerBridge, WorkerUnavailable, clock } from '../worker/bridge.js';
import { CORE_IMPORT_MS } from '../worker/deadlines.js';
import { Journal } from '../call/journal.js';
import { decode } from '../worker/msgpack.js';
import { pidNamespace } from '../shared/owners.js';
import { SLOT } from '../worker/slots.js';
import { isAlive, testBridge, waitUntil, workerSettings } from './processes.js';

const { operations } = workerSettings();

const PACKAGE_ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const PYTHON = process.env.RTB_PYTHON || 'python3';
const folder = mkdtempSync(join(tmpdir(), 'rtb-bridge-test-'));
const closers = [];
after(() => {
  closers.forEach((close) => close());
  rmSync(folder, { recursive: true, force: true });
});

const bridgeWith = (options = {}) => testBridge(closers, options);

// Runs `body` with process.env changed, so a helper thread started meanwhile sees the change.
function withEnvironment(changes, body) {
  const saved = Object.fromEntries(Object.keys(changes).map((key) => [key, process.env[key]]));
  Object.assign(process.env, changes);
  try {
    return body();
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
}

const PIPES = -3; // state[3] when the worker's stdio are plain pipes (see bridge-thread.js)

test('an unusable temporary folder falls back to pipes at once instead of failing the start', () => {
  withEnvironment({ TMPDIR: join(folder, 'missing') }, () => {
    const { bridge } = bridgeWith();
    const started = performance.now();
    assert.equal(bridge.boot({ op: 'configure', config: null }, 3000).ok, true);
    assert.ok(performance.now() - started < 3000);
    assert.equal(bridge.state[SLOT.STDOUT_FD], PIPES);
  });
});

test('with no fd 3 a patient ask goes as an event, its promise settled unanswered; any other ask is a blocking call', async () => {
  await withEnvironment({ TMPDIR: join(folder, 'missing') }, async () => {
    const { bridge } = bridgeWith();
    assert.equal(bridge.boot({ op: 'configure', config: null }, 3000).ok, true);
    assert.equal(bridge.state[SLOT.STDOUT_FD], PIPES);
    const guard = { op: 'guard', agent: 1, call: 'c1', name: 'bash', args: { command: 'ls' } };
    const calls = [];
    const call = bridge.call;
    bridge.call = (...args) => (calls.push(args[0].op), call.apply(bridge, args));
    const sent = bridge.nextId;
    const patient = await bridge.ask({ op: 'result', agent: 1, call: 'c0', text: 'ok' }, undefined, true);
    assert.deepEqual([patient.ok, calls, bridge.nextId - sent], [false, [], 1], 'sent, and nothing waited for it');
    const answered = await bridge.ask(guard);
    assert.deepEqual([answered.ok, calls], [true, ['guard']]);
  });
});

test('the worker makes its own FIFOs: a restart with an empty PATH (no mkfifo) still gets them', () => {
  const { bridge } = bridgeWith();
  assert.equal(bridge.boot({ op: 'configure', config: null }, 10_000).ok, true);
  assert.ok(bridge.state[SLOT.STDOUT_FD] >= 0, 'FIFOs at boot');
  const first = bridge.pid;
  process.kill(first, 'SIGKILL');
  withEnvironment({ PATH: '' }, () => assert.equal(bridge.call({ op: 'stats' }).ok, true));
  assert.notEqual(bridge.pid, first);
  assert.ok(bridge.state[SLOT.STDOUT_FD] >= 0, 'FIFOs after the restart too');
});

// The private folder a start makes its FIFOs in, under the temporary folder `scratch`.
const privateFolder = (scratch) => join(scratch, `dsh-repeat-tool-breaker-${process.getuid()}`);
/** The tag owners.js gives this process's folders; `pid` stands for another process of this namespace. */
const tagOf = (pid) => `${pid}@${pidNamespace()}`;

test('a folder left by a process killed while making its FIFOs is removed by the next start', () => {
  const scratch = join(folder, 'tmp');
  const gone = spawnSync('true').pid; // a pid that no longer runs
  const abandoned = join(privateFolder(scratch), `${tagOf(gone)}-Ab12Cd`);
  mkdirSync(abandoned, { recursive: true, mode: 0o700 });
  chmodSync(privateFolder(scratch), 0o700);
  assert.equal(spawnSync('mkfifo', [join(abandoned, 'stdin'), join(abandoned, 'later')]).status, 0);
  // Another PID namespace's folder (a container sharing the folder) is not taken for abandoned
  // while it is fresh, whatever its pid means here; an idle one is.
  const foreign = join(privateFolder(scratch), `${gone}@0badf00d-Ef34Gh`);
  const idleForeign = join(privateFolder(scratch), `${gone}@0badf00d-Ij56Kl`);
  mkdirSync(foreign);
  mkdirSync(idleForeign);
  const hourAgo = new Date(Date.now() - 3_600_000);
  utimesSync(idleForeign, hourAgo, hourAgo);
  withEnvironment({ TMPDIR: scratch, XDG_RUNTIME_DIR: '' }, () => {
    const { bridge } = bridgeWith();
    assert.equal(bridge.boot({ op: 'configure', config: null }, 10_000).ok, true);
    assert.ok(bridge.state[SLOT.STDOUT_FD] >= 0, 'FIFOs made');
  });
  assert.deepEqual(readdirSync(privateFolder(scratch)), [`${gone}@0badf00d-Ef34Gh`]);
  assert.deepEqual(readdirSync(scratch), [`dsh-repeat-tool-breaker-${process.getuid()}`]);
  assert.equal(statSync(privateFolder(scratch)).mode & 0o777, 0o700);
});

test('a start reads nothing other users put in the shared temporary folder, however much (issue 32)', () => {
  // 200,000 names as a hostile user makes them (hard links: no inodes), each shaped like a folder
  // an earlier version scanned for and removed, among them real abandoned FIFO folders of ours:
  // the start never lists the shared folder, so they are all still there, and it did not wait for them.
  const scratch = join(folder, 'crowded-tmp');
  mkdirSync(scratch);
  const gone = spawnSync('true').pid;
  const seeds = join(folder, 'seeds'); // a file takes ~65,000 links at most: one per 50,000
  mkdirSync(seeds);
  for (let n = 0; n < 200_000; n++) {
    if (n % 50_000 === 0) writeFileSync(join(seeds, String(n)), '');
    linkSync(join(seeds, String(n - (n % 50_000))), join(scratch, `rtb-${gone}-${n}`));
  }
  for (const name of [`rtb-${gone}-old1`, `rtb-${gone}-old2`]) {
    mkdirSync(join(scratch, name));
    assert.equal(spawnSync('mkfifo', [join(scratch, name, 'stdin')]).status, 0);
  }
  withEnvironment({ TMPDIR: scratch, XDG_RUNTIME_DIR: '' }, () => {
    const { bridge } = bridgeWith();
    assert.equal(bridge.boot({ op: 'configure', config: null }, 10_000).ok, true);
    assert.ok(bridge.state[SLOT.STDOUT_FD] >= 0, 'FIFOs made, in the private folder');
  });
  const names = readdirSync(scratch);
  assert.equal(names.length, 200_000 + 2 + 1, 'the crowd, two old folders and our private folder');
  assert.ok(names.includes(`rtb-${gone}-old1`) && names.includes(`rtb-${gone}-old2`), 'the shared folder was not scanned');
  rmSync(scratch, { recursive: true, force: true });
  rmSync(seeds, { recursive: true, force: true });
});

test('a private folder another user made, or opened, or linked elsewhere, is never used: pipes instead', () => {
  const victim = join(folder, 'victim-fifos');
  mkdirSync(victim, { mode: 0o700 });
  const cases = {
    'a link': (path) => symlinkSync(victim, path),
    'open to others': (path) => mkdirSync(path, { mode: 0o777 }) ?? chmodSync(path, 0o777),
    ...(process.getuid() === 0 ? { "another user's": (path) => mkdirSync(path, { mode: 0o700 }) ?? chownSync(path, 12345, 12345) } : {}),
  };
  for (const [what, make] of Object.entries(cases)) {
    const scratch = mkdtempSync(join(folder, 'squatted-'));
    make(privateFolder(scratch));
    withEnvironment({ TMPDIR: scratch, XDG_RUNTIME_DIR: '' }, () => {
      const { bridge } = bridgeWith();
      assert.equal(bridge.boot({ op: 'configure', config: null }, 10_000).ok, true, what);
      assert.equal(bridge.state[SLOT.STDOUT_FD], PIPES, `${what}: pipes`);
      bridge.close();
    });
    assert.deepEqual(readdirSync(victim), [], `${what}: nothing made through it`);
  }
});

test('the cleanup of abandoned folders is never redirected: only our FIFOs in our own folders go', () => {
  const scratch = join(folder, 'shared-tmp');
  const victim = join(folder, 'victim');
  mkdirSync(join(victim, '.ssh'), { recursive: true, mode: 0o700 });
  writeFileSync(join(victim, '.ssh', 'id_ed25519'), 'secret');
  const mine = privateFolder(scratch);
  mkdirSync(mine, { recursive: true, mode: 0o700 });
  chmodSync(mine, 0o700);
  const gone = tagOf(spawnSync('true').pid);
  // A symlink named like a folder of ours, a folder holding a link (as if swapped mid-delete),
  // and a folder holding more than our FIFOs: none of their targets may be touched.
  symlinkSync(victim, join(mine, `${gone}-link`));
  mkdirSync(join(mine, `${gone}-swapped`));
  symlinkSync(victim, join(mine, `${gone}-swapped`, 'stdin'));
  symlinkSync(join(victim, '.ssh'), join(mine, `${gone}-swapped`, 'a'));
  mkdirSync(join(mine, `${gone}-more`));
  writeFileSync(join(mine, `${gone}-more`, 'notes'), 'kept');
  withEnvironment({ TMPDIR: scratch, XDG_RUNTIME_DIR: '' }, () => {
    const { bridge } = bridgeWith();
    assert.equal(bridge.boot({ op: 'configure', config: null }, 10_000).ok, true);
    assert.ok(bridge.state[SLOT.STDOUT_FD] >= 0, 'FIFOs made');
  });
  assert.equal(readFileSync(join(victim, '.ssh', 'id_ed25519'), 'utf8'), 'secret');
  assert.deepEqual(readdirSync(join(mine, `${gone}-swapped`)).sort(), ['a', 'stdin']);
  assert.ok(lstatSync(join(mine, `${gone}-link`)).isSymbolicLink(), 'a link is not ours to remove');
  assert.deepEqual(readdirSync(join(mine, `${gone}-more`)), ['notes']);
});

test('a worker killed for a missed deadline is counted once, not again when its exit arrives', async () => {
  const interpreter = join(folder, 'hang-after-boot');
  const booted = join(folder, 'booted');
  writeFileSync(interpreter, `#!/bin/sh\n[ -e '${booted}' ] && exec sleep 600\nexec '${PYTHON}' "$@"\n`, { mode: 0o755 });
  const { bridge } = bridgeWith({ command: interpreter, restartPolicy: { crashLimit: 10, crashSpanMs: 60_000, backoffMs: 50 } });
  assert.equal(bridge.boot({ op: 'configure', config: { startTimeoutMs: 200, guardTimeoutMs: 100 } }, 10_000).ok, true);
  writeFileSync(booted, '');
  process.kill(bridge.pid, 'SIGSTOP'); // hung: its successors hang too
  const lost = [];
  for (let call = 0; call < 6; call++) {
    try {
      bridge.call({ op: 'stats' });
    } catch (error) {
      assert.ok(error instanceof WorkerUnavailable);
      if (error.code === 'TIMEOUT') lost.push(bridge.losses.length);
    }
    await new Promise((resolve) => setTimeout(resolve, 150)); // late exits arrive meanwhile
  }
  assert.ok(lost.length >= 3, `${lost.length} timeouts`);
  assert.deepEqual(lost, lost.map((_, index) => index + 1), 'each lost worker counts one');
});

test('a worker that has lived past 2^31 ms (24.8 days) still answers, and is killed when it misses a deadline', async () => {
  const interpreter = join(folder, 'hang-when-told');
  const told = join(folder, 'hang-now');
  writeFileSync(interpreter, `#!/bin/sh\n[ -e '${told}' ] && exec sleep 600\nexec '${PYTHON}' "$@"\n`, { mode: 0o755 });
  const { bridge } = bridgeWith({ command: interpreter });
  const age = 25 * 86_400_000; // the clock injected: each worker started that long ago
  bridge.startClock = () => clock() - age;
  assert.equal(bridge.boot({ op: 'configure', config: { startTimeoutMs: 5000, guardTimeoutMs: 3000 } }, 10_000).ok, true);
  const first = bridge.pid;
  for (let call = 0; call < 3; call++) assert.equal(bridge.call({ op: 'stats' }).ok, true);
  assert.equal(bridge.pid, first, 'not killed for a deadline it did not miss');
  writeFileSync(told, '');
  process.kill(first, 'SIGSTOP'); // hung: its successor hangs too
  assert.throws(() => bridge.call({ op: 'stats' }), (error) => error instanceof WorkerUnavailable && error.code === 'TIMEOUT');
  assert.ok(await waitUntil(() => !isAlive(first), 10_000), 'the hung worker is killed at its deadline');
});

test("a worker's first request after its configuration is given the decision core's import too; later ones the guard deadline", () => {
  const { bridge } = bridgeWith();
  assert.equal(bridge.boot({ op: 'configure', config: { guardTimeoutMs: 100 } }, 10_000).ok, true);
  process.kill(bridge.pid, 'SIGSTOP'); // it answers nothing now: each call waits its whole deadline
  const waited = () => {
    const started = performance.now();
    assert.throws(() => bridge.call({ op: 'stats' }), (error) => error instanceof WorkerUnavailable && error.code === 'TIMEOUT');
    return performance.now() - started;
  };
  assert.ok(waited() >= CORE_IMPORT_MS, 'the first request waited for the import too');
  assert.equal(bridge.call({ op: 'stats' }).ok, true, 'its successor answers');
  process.kill(bridge.pid, 'SIGSTOP');
  assert.ok(waited() < CORE_IMPORT_MS, 'a later request of a worker that has answered one: the guard deadline');
});

// The frames of each write to the worker, by op.
function recordWrites(bridge) {
  const writes = [];
  const write = bridge.write;
  bridge.write = function recordWrite(frames) {
    const view = new DataView(frames.buffer, frames.byteOffset, frames.byteLength);
    const ops = [];
    for (let at = 0; at < frames.length; at += 4 + view.getUint32(at)) ops.push(decode(frames.subarray(at + 4, at + 4 + view.getUint32(at))).op);
    writes.push(ops);
    return write.call(this, frames);
  };
  return writes;
}

test('events wait for the next request, or 2 ms; those sent once the loop is idle go out with what else was sent then, in one write, no timer', async () => {
  const { bridge, lines } = bridgeWith();
  assert.equal(bridge.boot({ op: 'configure', config: null }, 10_000).ok, true);
  const writes = recordWrites(bridge);
  bridge.notify({ op: 'forget', agent: 1 });
  assert.deepEqual(writes, [], 'an event waits');
  assert.equal(bridge.call({ op: 'stats' }).ok, true);
  assert.deepEqual(writes, [['forget', 'stats']], 'and rides with the next request');
  bridge.notify({ op: 'forget', agent: 2 });
  assert.ok(bridge.outbox.timer !== null, 'alone, it has a timer');
  assert.ok(await waitUntil(() => writes.length === 2, 1000));
  assert.deepEqual(writes[1], ['forget']);
  bridge.idle.push(() => bridge.notify({ op: 'forget', agent: 3 }));
  bridge.idle.push(() => bridge.notify({ op: 'forget', agent: 4 }));
  assert.ok(await waitUntil(() => writes.length === 3, 1000));
  assert.deepEqual(writes[2], ['forget', 'forget'], 'the idle sends: one write when they are done');
  assert.equal(bridge.outbox.timer, null, 'and no timer of their own');
  bridge.idle.push(() => bridge.notify({ op: 'forget', agent: 5 }));
  assert.equal(bridge.call({ op: 'stats' }).ok, true, 'a request before the loop is idle');
  assert.deepEqual(writes[3], ['forget', 'stats'], 'carries what waited for it, in order');
  assert.equal(bridge.outbox.timer, null);
  assert.deepEqual(lines, []);
});

// The latency of the call after such a burst is a figure of bench/faults.mjs.
test('a burst of 100,000 events: a call after it waits for the work queued ahead, the worker is not killed', () => {
  const { bridge, lines } = bridgeWith();
  assert.equal(bridge.boot({ op: 'configure', config: { guardTimeoutMs: 250 } }, 10_000).ok, true);
  const worker = bridge.pid;
  for (let agent = 1; agent <= 100_000; agent++) bridge.notify({ op: 'forget', agent });
  assert.equal(bridge.call({ op: 'stats' }).ok, true);
  assert.equal(bridge.pid, worker, 'the worker was not replaced');
  assert.deepEqual(lines, []);
});

test('after a crash with many live agents, only the calling agent is restored before its call', () => {
  const journal = new Journal({ window: 12, maxAgents: 10_000, operations });
  const { bridge } = bridgeWith({ journal });
  assert.equal(bridge.boot({ op: 'configure', config: null }, 10_000).ok, true);
  const guardOf = (agent, call) => ({ op: 'guard', agent, call, name: 'bash', args: { command: `cat notes-${agent}.txt` } });
  for (let round = 0; round < 3; round++) {
    for (let agent = 1; agent <= 2000; agent++) {
      const message = guardOf(agent, `c${round}`);
      assert.equal(bridge.call(message).ok, true);
      journal.guard(message, 64);
    }
  }
  process.kill(bridge.pid, 'SIGKILL');
  const fourth = bridge.call(guardOf(7, 'c3'));
  assert.equal(fourth.deny, null);
  journal.guard(guardOf(7, 'c3'), 64);
  assert.equal(bridge.call({ op: 'stats' }).stats.agents, 1, 'one agent restored, not 2,000');
  assert.match(bridge.call(guardOf(7, 'c4')).deny, /^REPEAT_TOOL_BLOCKED:/, 'its window came over whole');
  assert.equal(bridge.call(guardOf(8, 'c3')).deny, null);
  assert.match(bridge.call(guardOf(8, 'c4')).deny, /^REPEAT_TOOL_BLOCKED:/, 'so does the next agent\'s');
});

test('a frame over the 64 MB limit is refused for its own call only: the worker lives, the stream stays in step', () => {
  const { bridge, lines } = bridgeWith();
  assert.equal(bridge.boot({ op: 'configure', config: null }, 10_000).ok, true);
  const worker = bridge.pid;
  const started = performance.now();
  const refused = bridge.call({ op: 'guard', agent: 1, call: 'big', name: 'write', args: 'x'.repeat(65 * 1024 * 1024) });
  assert.equal(refused.ok, false);
  assert.match(refused.error, /exceeds the limit/);
  assert.ok(performance.now() - started < 2000, `${(performance.now() - started).toFixed(0)} ms`);
  const verdicts = [];
  for (let index = 0; index < 5; index++) {
    verdicts.push(bridge.call({ op: 'guard', agent: 2, call: `c${index}`, name: 'bash', args: { command: 'ls' } }).deny);
  }
  assert.deepEqual(verdicts.map((deny) => deny === null), [true, true, true, true, false]);
  assert.equal(bridge.pid, worker);
  assert.deepEqual(lines, []);
});

test('a serving worker that is stopped when its Node process dies does not outlive it', async () => {
  const program = `
    import { WorkerBridge } from ${JSON.stringify(join(PACKAGE_ROOT, 'node-shim', 'worker', 'bridge.js'))};
    const bridge = new WorkerBridge({ command: ${JSON.stringify(PYTHON)}, args: ['-m', 'breaker.worker'],
      cwd: ${JSON.stringify(PACKAGE_ROOT)}, env: { ...process.env, PYTHONPATH: ${JSON.stringify(PACKAGE_ROOT)} }, log: () => {} });
    bridge.boot({ op: 'configure', config: null }, 10_000);
    // the worker asks for its parent-death signal once its answer is out (breaker/worker.py,
    // die_with_the_shim): the answer to a later request means it has
    bridge.call({ op: 'guard', agent: 1, call: 'c1', name: 'bash', args: { command: 'ls' } });
    console.log(bridge.pid);
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', program], { stdio: ['ignore', 'pipe', 'inherit'] });
  const worker = await new Promise((resolve) => child.stdout.once('data', (chunk) => resolve(Number(chunk))));
  process.kill(worker, 'SIGSTOP');
  child.kill('SIGKILL');
  const gone = await waitUntil(() => !isAlive(worker) || /^State:\s+Z/m.test(readFileSync(`/proc/${worker}/status`, 'utf8')), 3000);
  if (!gone) process.kill(worker, 'SIGKILL');
  assert.ok(gone, 'the stopped worker was killed with its shim');
});

test('idle sends that make more and flush them within the same idle moment still go out once, in order, in one write', async () => {
  const { bridge, lines } = bridgeWith();
  assert.equal(bridge.boot({ op: 'configure', config: null }, 10_000).ok, true);
  const writes = recordWrites(bridge);
  bridge.idle.push(() => {
    bridge.notify({ op: 'forget', agent: 1 });
    bridge.idle.push(() => bridge.notify({ op: 'human', agent: 2 }));
    bridge.idle.flush(); // a send that flushes what it made
    bridge.notify({ op: 'step', agent: 3 });
  });
  assert.ok(await waitUntil(() => writes.length === 1, 1000));
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(writes, [['forget', 'human', 'step']]);
  assert.equal(bridge.outbox.timer, null, 'no timer of their own');
  assert.deepEqual(lines, []);
});
