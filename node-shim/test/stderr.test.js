// The shim's own stderr: a pipe nobody reads must never hold up a guard call, and what is logged
// stays bounded.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { boundedWriter } from '../shared/stderr.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const PYTHON = process.env.RTB_PYTHON || 'python3';
const folder = mkdtempSync(join(tmpdir(), 'rtb-stderr-test-'));
after(() => rmSync(folder, { recursive: true, force: true }));

// A dsh-like process whose stderr is a pipe this test never reads; it prints how long one guard
// call to a warm worker took while that worker fills stderr and hangs.
function guardLatencyWithUnreadStderr() {
  const interpreter = join(folder, 'python');
  // Its arguments (`-m breaker.worker`) give way to the noisy worker's; its options are kept.
  writeFileSync(interpreter, `#!/bin/sh\nshift 2\nexec '${PYTHON}' '${join(HERE, 'noisy-hung-worker.py')}' "$@"\n`, { mode: 0o755 });
  const program = `
    import { apply } from ${JSON.stringify(join(dirname(HERE), 'index.js'))};
    const guards = [];
    await apply({ tools: { guard: (guard) => (guards.push(guard), () => {}) }, on: () => () => {} },
      { python: ${JSON.stringify(interpreter)}, guardTimeoutMs: 300 });
    // A warm worker: its first request after the configuration may also wait for its decision
    // core (deadlines.js CORE_IMPORT_MS); only the next one, which it answers with the flood, is timed.
    const agent = {};
    guards[0]({ name: 'bash', callId: 'c0', agent, arguments: { command: 'pwd' } });
    const started = performance.now();
    guards[0]({ name: 'bash', callId: 'c1', agent, arguments: { command: 'ls' } });
    process.stdout.write(JSON.stringify({ ms: performance.now() - started }) + '\\n');
    process.exit(0);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', program], { stdio: ['ignore', 'pipe', 'pipe'] });
  // stderr is left unread: once its pipe buffer is full, every blocking write to it waits.
  return new Promise((resolve) => {
    let output = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 8000);
    child.stdout.on('data', (chunk) => { output += chunk; });
    child.on('exit', () => {
      clearTimeout(timer);
      resolve(output ? JSON.parse(output).ms : Infinity);
    });
  });
}

test('a guard returns within its deadline while stderr is a pipe nobody reads and the worker floods it', async () => {
  const ms = await guardLatencyWithUnreadStderr();
  assert.ok(ms < 2000, `the guard took ${ms} ms (deadline 300 ms)`);
});

test('log text past the queue bound is dropped, counted, and the count reported once stderr moves', () => {
  const written = [];
  const stream = { writableLength: 0, write: (text) => written.push(String(text)) };
  const write = boundedWriter(stream, 100);
  write('first\n');
  stream.writableLength = 101; // nobody reads
  write('lost one\n');
  write('lost two\n');
  stream.writableLength = 0;
  write('after\n');
  assert.deepEqual(written, [
    'first\n',
    '[repeat-tool-breaker] 18 bytes of log were dropped: stderr was not being read\n',
    'after\n',
  ]);
});
