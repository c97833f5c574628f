// Fault injection through the real shim, bridge and worker: killed, hung and crash-looping
// workers, and a broken environment at boot. The journal must carry every agent's window over to
// the replacement worker, and every failure must be reported once, never once per call.
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { WorkerBridge, WorkerUnavailable } from '../bridge.js';
import { apply } from '../index.js';
import { FakeDsh, makeAgent, userMessage } from './fake-dsh.js';

const PACKAGE_ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const PYTHON = process.env.RTB_PYTHON || 'python3';
const disposers = [];
after(() => disposers.forEach((dispose) => dispose()));

function mount(config, options) {
  const dsh = new FakeDsh(options);
  disposers.push(apply(dsh.ctx, config));
  return dsh;
}

// The shim's and the bridge's stderr lines, captured while `run` runs.
async function stderrOf(run) {
  const lines = [];
  const write = process.stderr.write;
  process.stderr.write = function capture(chunk, ...rest) {
    lines.push(String(chunk));
    return write.call(this, chunk, ...rest);
  };
  try {
    await run();
  } finally {
    process.stderr.write = write;
  }
  return lines.filter((line) => line.startsWith('[repeat-tool-breaker]'));
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitUntil(predicate, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

// A stand-in interpreter whose behaviour the test switches: 'python' runs the real worker,
// 'crash' exits at once, 'hang' never answers. Every start is logged with its pid.
function switchableInterpreter() {
  const folder = mkdtempSync(join(tmpdir(), 'rtb-switch-'));
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

test('a killed worker: the next call is decided by its replacement, which still sees the window', async () => {
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
  const started = performance.now();
  const fourth = await dsh.call(agent, 'bash', bash('cat notes.txt'));
  assert.ok(performance.now() - started < 1000, 'answered within about a second');
  assert.equal(fourth.denied, undefined);
  assert.equal(interpreter.pids().length, 2, 'one replacement worker');
  const fifth = await dsh.call(agent, 'bash', bash('cat notes.txt'));
  assert.match(fifth.denied, /^REPEAT_TOOL_BLOCKED:/);
  assert.match(fifth.denied, /notes, version call-5/, 'the last result, recorded by the new worker, is quoted');
  // The bystander's window came over too: one call before the kill, four after.
  const calls = [];
  for (let index = 0; index < 4; index++) calls.push(await dsh.call(other, 'bash', bash('true')));
  assert.deepEqual(calls.map((call) => call.denied === undefined), [true, true, true, false]);
});
