// Fault injection through the real shim, bridge and worker: killed, hung and crash-looping
// workers, and a broken environment at boot. The journal must carry every agent's window over to
// the replacement worker, and every failure must be reported once, never once per call.
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { WorkerBridge, WorkerUnavailable } from '../worker/bridge.js';
import { apply } from '../index.js';
import { FakeDsh, makeAgent, userMessage } from './fake-dsh.js';
import { captureStderr, isAlive, waitUntil } from './processes.js';

const PACKAGE_ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const PYTHON = process.env.RTB_PYTHON || 'python3';
const disposers = [];
const folders = [];
after(async () => {
  for (const dispose of disposers) (await dispose)(); // apply gives a promise of its disposer
  folders.forEach((folder) => rmSync(folder, { recursive: true, force: true }));
});

function mount(config, options) {
  const dsh = new FakeDsh(options);
  disposers.push(apply(dsh.ctx, config));
  return dsh;
}

// The shim's and the bridge's stderr lines, captured while `run` runs.
async function stderrOf(run) {
  const written = await captureStderr(run);
  return written.filter((line) => line.startsWith('[repeat-tool-breaker]'));
}

// A stand-in interpreter whose behaviour the test switches: 'python' runs the real worker,
// 'crash' exits at once, 'hang' never answers. Every start is logged with its pid.
function switchableInterpreter() {
  const folder = mkdtempSync(join(tmpdir(), 'rtb-switch-'));
  folders.push(folder);
  const mode = join(folder, 'mode');
  const starts = join(folder, 'starts');
  const script = join(folder, 'python');
  writeFileSync(mode, 'python');
  writeFileSync(starts, '');
  writeFileSync(script, [
    '#!/bin/sh',
    `echo $$ >> '${starts}'`,
    `case "$(cat '${mode}')" in`,
    '  crash) echo "worker crashed on purpose" >&2; exit 3 ;;',
    '  hang) exec sleep 600 ;;',
    'esac',
    `exec '${PYTHON}' "$@"`,
    '',
  ].join('\n'), { mode: 0o755 });
  return {
    path: script,
    set: (behaviour) => writeFileSync(mode, behaviour),
    pids: () => readFileSync(starts, 'utf8').split('\n').filter(Boolean).map(Number),
  };
}

const bash = (command) => ({ command, description: 'a decoy' });

// The pid of the worker currently serving `dsh`, known from the interpreter's start log.
async function servingWorker(dsh, interpreter, agent) {
  await dsh.call(agent, 'bash', bash('true'));
  return interpreter.pids().at(-1);
}

test('a killed worker: a call it promised goes through, then its replacement decides and still sees the window', async () => {
  const interpreter = switchableInterpreter();
  const dsh = mount({ python: interpreter.path }, { body: (exec) => `notes, version ${exec.callId}` });
  const agent = makeAgent('killed');
  const other = makeAgent('bystander');
  const worker = await servingWorker(dsh, interpreter, other);
  for (let index = 0; index < 3; index++) {
    assert.equal((await dsh.call(agent, 'bash', bash('cat notes.txt'))).denied, undefined);
  }
  process.kill(worker, 'SIGKILL');
  assert.ok(await waitUntil(() => !isAlive(worker)));
  // The fourth goes through on a pass the lost worker gave; it reaches the replacement with the
  // journal, so the fifth, decided by the replacement, is denied. The loss is noticed as a dead
  // process (no deadline waited out) and the replacement starts at once, without a backoff.
  let fourth;
  let fifth;
  const lines = await stderrOf(async () => {
    fourth = await dsh.call(agent, 'bash', bash('cat notes.txt'));
    fifth = await dsh.call(agent, 'bash', bash('cat notes.txt'));
  });
  assert.equal(fourth.denied, undefined);
  assert.equal(lines.length, 1, lines.join('\n'));
  assert.match(lines[0], /not running \(killed by SIGKILL\).*a new one starts now/);
  assert.doesNotMatch(lines[0], /did not answer within/);
  assert.equal(interpreter.pids().length, 2, 'one replacement worker');
  assert.match(fifth.denied, /^REPEAT_TOOL_BLOCKED:/);
  assert.match(fifth.denied, /notes, version call-5/, 'the last result, recorded by the new worker, is quoted');
  // The bystander's window came over too: one call before the kill, four after.
  const calls = [];
  for (let index = 0; index < 4; index++) calls.push(await dsh.call(other, 'bash', bash('true')));
  assert.deepEqual(calls.map((call) => call.denied === undefined), [true, true, true, false]);
});

// Large identical calls: each frame is megabytes, three of them outweigh the journal's 32 MB.
const LARGE_WRITE = { path: 'big.txt', content: 'x'.repeat(12 * 1024 * 1024) };

test('a loop of large identical writes is denied at its cap, and no worker is killed for its size', async () => {
  const interpreter = switchableInterpreter();
  const dsh = mount({ python: interpreter.path, guardTimeoutMs: 100 });
  const agent = makeAgent('large-loop');
  const verdicts = [];
  const lines = await stderrOf(async () => {
    for (let index = 0; index < 6; index++) verdicts.push((await dsh.call(agent, 'write', LARGE_WRITE)).denied);
  });
  assert.deepEqual(verdicts.map((denied) => denied === undefined), [true, true, true, true, false, false]);
  assert.deepEqual(lines, [], 'no worker lost');
  assert.equal(interpreter.pids().length, 1);
});

test("a call whose pre-execute waits behind another agent's large call is given that call's time", async () => {
  const interpreter = switchableInterpreter();
  const dsh = mount({ python: interpreter.path, guardTimeoutMs: 100 });
  const lines = await stderrOf(async () => {
    for (let round = 0; round < 3; round++) {
      const both = [dsh.call(makeAgent('large'), 'write', LARGE_WRITE), dsh.call(makeAgent('small'), 'bash', bash(`ls ${round}`))];
      assert.deepEqual((await Promise.all(both)).map((outcome) => outcome.denied), [undefined, undefined]);
    }
  });
  assert.deepEqual(lines, [], 'no worker lost');
  assert.equal(interpreter.pids().length, 1);
});

test('a worker lost during a loop of large calls: its replacement counts them all from the journal', async () => {
  const interpreter = switchableInterpreter();
  const dsh = mount({ python: interpreter.path });
  const agent = makeAgent('large-kill');
  for (let index = 0; index < 4; index++) assert.equal((await dsh.call(agent, 'write', LARGE_WRITE)).denied, undefined);
  const worker = interpreter.pids().at(-1);
  process.kill(worker, 'SIGKILL');
  assert.ok(await waitUntil(() => !isAlive(worker)));
  const fifth = await dsh.call(agent, 'write', LARGE_WRITE);
  assert.equal(interpreter.pids().length, 2, 'one replacement worker');
  assert.match(fifth.denied ?? '', /^REPEAT_TOOL_BLOCKED:/, 'the four journaled calls count in the new worker');
});

test('after a worker loss the failure track still denies a failing command whose failures left the window', async () => {
  const interpreter = switchableInterpreter();
  const dsh = mount({ python: interpreter.path, identity: 'state-aware' }, { body: () => 'make: *** [all] Error 2' });
  // The build fails with exit code 2 (dsh's structured value for a shell result).
  const waterfall = dsh.waterfall.bind(dsh);
  dsh.waterfall = (event, args, inner) => {
    if (event === 'tools/post-execute' && args[0].name === 'bash' && !args[1].isError) args[1].value = { exitCode: 2 };
    return waterfall(event, args, inner);
  };
  const agent = makeAgent('failing');
  const verdicts = [];
  for (let attempt = 0; attempt < 7; attempt++) {
    if (attempt === 6) {
      const worker = interpreter.pids().at(-1);
      process.kill(worker, 'SIGKILL');
      assert.ok(await waitUntil(() => !isAlive(worker)));
    }
    verdicts.push((await dsh.call(agent, 'bash', bash('make all'))).denied === undefined ? 'run' : 'deny');
    // Reading between retries: the failures that built the streak leave the journal's last 16
    // guards, while each denied retry keeps the build's key in the window (and the streak alive).
    if (attempt >= 3) for (let read = 0; read < 5; read++) await dsh.call(agent, 'read', { path: `log-${attempt}-${read}` });
  }
  assert.deepEqual(verdicts, ['run', 'run', 'run', 'deny', 'deny', 'deny', 'deny']);
  assert.equal(interpreter.pids().length, 2, 'one replacement worker');
});

// Loops A, B and C interleaved with local calls, results and a user message: the session every
// replay test below runs, with and without killing the worker along the way.
const LOCAL = (n) => bash(`curl -s http://localhost:8080/health | head -n ${n}`);
const SESSION = [
  ...Array(3).fill(['bash', bash('cat notes.txt')]),
  ...[0, 1, 2, 3].map((n) => ['bash', LOCAL(n)]),
  ['bash', bash('curl --max-time 60 -o /tmp/od.html https://open-data.canada.ca/')],
  ['bash', bash('cat notes.txt')],
  ['bash', LOCAL(4)], // the local ask, approved
  ['bash', bash('curl --max-time 30 -o /tmp/od.html https://open.canada.ca/')],
  ...Array(3).fill(['bash', bash('cat notes.txt')]), // denied: each commits only what hit
  ['user'],
  ...Array(6).fill(['bash', bash('python train.py')]),
  ...[5, 6, 7].map((n) => ['bash', LOCAL(n)]),
  ['bash', bash('curl --max-time 60 -o /tmp/od.html https://open-data.canada.ca/')],
];

async function runSession(dsh, agent, killAt = new Set(), interpreter = undefined) {
  const outcomes = [];
  for (const [index, [tool, args]] of SESSION.entries()) {
    if (killAt.has(index)) {
      const worker = interpreter.pids().at(-1);
      process.kill(worker, 'SIGKILL');
      await waitUntil(() => !isAlive(worker));
    }
    if (tool === 'user') await dsh.step(agent, [userMessage('start over')]);
    else outcomes.push(await dsh.call(agent, tool, args, { callId: `call-${index}` }));
  }
  return outcomes.map(({ denied, asked, text }) => ({ denied, asked, text }));
}

test('replay rebuilds the exact state: verdicts, denial texts and asks match an unbroken session', async () => {
  const steady = mount({ preset: 'seed' }, { approval: 'allowed-once' }); // an ask happens under the caps
  const expected = await runSession(steady, makeAgent('steady'));
  assert.ok(expected.some((outcome) => outcome.denied), 'the session has denials');
  assert.equal(steady.asks.length, 1, 'and one approved ask');
  const interpreter = switchableInterpreter();
  const broken = mount({ preset: 'seed', python: interpreter.path }, { approval: 'allowed-once' });
  const killAt = new Set([2, 5, 10, 12, 15, 17, 21, 24]);
  const lines = await stderrOf(async () => {
    assert.deepEqual(await runSession(broken, makeAgent('steady'), killAt, interpreter), expected);
  });
  assert.equal(broken.asks.length, 1, 'a replayed ask is not put to the operator again');
  assert.equal(interpreter.pids().length, killAt.size + 1);
  assert.equal(lines.length, killAt.size, 'one line per lost worker');
});

test('under the defaults too, with model turns, replay rebuilds the verdicts and denial texts', async () => {
  const turns = async (dsh, agent, killAt, interpreter) => {
    const outcomes = [];
    for (const [index, [tool, args]] of SESSION.entries()) {
      if (killAt?.has(index)) {
        const worker = interpreter.pids().at(-1);
        process.kill(worker, 'SIGKILL');
        await waitUntil(() => !isAlive(worker));
      }
      if (tool === 'user') await dsh.step(agent, [userMessage('start over')]);
      else {
        if (index % 3 === 0) await dsh.step(agent, []); // a model turn of up to three calls
        outcomes.push(await dsh.call(agent, tool, args, { callId: `call-${index}` }));
      }
    }
    return outcomes.map(({ denied, asked, text }) => ({ denied, asked, text }));
  };
  const expected = await turns(mount({ localHosts: 'allow' }), makeAgent('steady'));
  assert.ok(expected.some((outcome) => outcome.denied), 'the session has denials');
  const interpreter = switchableInterpreter();
  const broken = mount({ localHosts: 'allow', python: interpreter.path });
  const killAt = new Set([2, 5, 10, 12, 15, 17, 21, 24]);
  await stderrOf(async () => {
    assert.deepEqual(await turns(broken, makeAgent('steady'), killAt, interpreter), expected);
  });
});

test('a hung worker: the call gets onWorkerFailure after guardTimeoutMs, once; the worker is replaced', async () => {
  const interpreter = switchableInterpreter();
  const dsh = mount({ python: interpreter.path, guardTimeoutMs: 150 });
  const agent = makeAgent('hung');
  const worker = await servingWorker(dsh, interpreter, agent);
  process.kill(worker, 'SIGSTOP');
  let verdicts;
  const lines = await stderrOf(async () => {
    // Bounded by the 150 ms deadline; the slack only keeps a loaded machine from failing it.
    const started = performance.now();
    const stalled = await dsh.call(agent, 'bash', bash('ls'));
    assert.ok(performance.now() - started < 5000, 'the deadline ended the wait');
    assert.equal(stalled.denied, undefined, "onWorkerFailure 'allow' (the default) runs the call");
    verdicts = [];
    for (let index = 0; index < 5; index++) verdicts.push((await dsh.call(agent, 'bash', bash('pwd'))).denied);
  });
  assert.ok(await waitUntil(() => !isAlive(worker)), 'the hung worker was killed');
  assert.equal(lines.length, 1);
  assert.match(lines[0], /did not answer within 150 ms during a preflight request; it was stopped and a new one starts now/);
  assert.match(lines[0], /that call is allowed \(onWorkerFailure: allow\)/);
  // The replacement decides: the journal had 'true' and nothing of the stalled call.
  assert.deepEqual(verdicts.map((denied) => denied === undefined), [true, true, true, true, false]);
});

test('a fresh worker that never answers gets startTimeoutMs, then the call fails per onWorkerFailure', async () => {
  const interpreter = switchableInterpreter();
  const dsh = mount({ python: interpreter.path, guardTimeoutMs: 100, startTimeoutMs: 1200, onWorkerFailure: 'deny' });
  const agent = makeAgent('slow-start');
  const worker = await servingWorker(dsh, interpreter, agent);
  interpreter.set('hang');
  process.kill(worker, 'SIGKILL');
  await waitUntil(() => !isAlive(worker));
  const [guard] = dsh.guards;
  const started = performance.now();
  const verdict = guard({ name: 'bash', callId: 'x', agent, arguments: bash('ls') });
  const elapsed = performance.now() - started;
  assert.ok(elapsed >= 1200 && elapsed < 6000, `waited the start deadline, not the guard one (${elapsed} ms)`);
  assert.match(verdict, /loop guard is unavailable .*onWorkerFailure setting is 'deny'/);
  const hung = interpreter.pids()[1];
  assert.ok(await waitUntil(() => !isAlive(hung)), 'the silent worker was killed');
});

test('a crash loop backs off, gives up restarting with one line, and recovers after its span', async () => {
  const interpreter = switchableInterpreter();
  const lines = [];
  const bridge = new WorkerBridge({
    command: interpreter.path,
    args: ['-m', 'breaker.worker'],
    cwd: PACKAGE_ROOT,
    env: { ...process.env, PYTHONPATH: PACKAGE_ROOT },
    log: (line) => lines.push(line),
    restartPolicy: { crashLimit: 4, crashSpanMs: 1500, backoffMs: 50 },
  });
  disposers.push(() => bridge.close());
  assert.equal(bridge.boot({ op: 'configure', config: { onWorkerFailure: 'deny' } }, 10_000).ok, true);
  interpreter.set('crash');
  process.kill(interpreter.pids()[0], 'SIGKILL');
  const failures = new Map();
  const deadline = performance.now() + 1000;
  let calls = 0;
  while (performance.now() < deadline) {
    try {
      bridge.call({ op: 'stats' });
    } catch (error) {
      assert.ok(error instanceof WorkerUnavailable);
      failures.set(error.code, (failures.get(error.code) ?? 0) + 1);
    }
    calls++;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  assert.equal(interpreter.pids().length, 4, 'the first worker and three restarts, then none');
  assert.ok(failures.get('BACKOFF') > calls / 2, 'most calls fail fast, without a worker');
  const givingUp = lines.filter((line) => /workers lost within 1.5 s/.test(line));
  assert.equal(givingUp.length, 1);
  assert.match(givingUp[0], /every counted call is denied unchecked \(onWorkerFailure: deny\)/);
  assert.ok(lines.length <= 5, `one line per lost worker at most: ${lines.join('\n')}`);
  interpreter.set('python');
  await new Promise((resolve) => setTimeout(resolve, 1600));
  assert.equal(bridge.call({ op: 'stats' }).ok, true);
  assert.match(lines.at(-1), /the worker answers again/);
});

test('a worker that dies at boot makes apply fail naming the interpreter, who chose it and the fix, with its stderr', async () => {
  const interpreter = switchableInterpreter();
  interpreter.set('crash');
  await assert.rejects(() => apply(new FakeDsh().ctx, { python: interpreter.path }), (error) => {
    const named = `the Python worker (${interpreter.path} from the \`python\` config key) did not start: the worker is not running (exited with code 3). ` +
      'Fix: point the `python` config key at a Python >= 3.10, or unset it to let the plugin prepare its own environment.\nWhat it wrote on stderr:\n';
    assert.ok(error.message.includes(named), error.message);
    assert.match(error.message, /worker crashed on purpose/);
    return true;
  });
});

test('after boot the bridge knows the pid of its worker', () => {
  const bridge = new WorkerBridge({
    command: PYTHON,
    args: ['-m', 'breaker.worker'],
    cwd: PACKAGE_ROOT,
    env: { ...process.env, PYTHONPATH: PACKAGE_ROOT },
    log: () => {},
  });
  try {
    assert.ok(bridge.boot({ op: 'configure', config: null }, 10_000).ok);
    assert.ok(Number.isInteger(bridge.pid) && isAlive(bridge.pid), `pid ${bridge.pid}`);
  } finally {
    bridge.close();
  }
});
