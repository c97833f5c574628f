// `rtb` from an npm or pnpm install (node-shim/rtb.js): what it says while it prepares the worker's
// environment (a first `npx --no rtb` before any boot) is its own, each line starting `rtb: `.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import test from 'node:test';

import { offline } from './environments.js';

test('rtb preparing the environment says each step as rtb, not as the boot does', () => {
  // No package index: the preparation goes as far as fetching the packages, then fails with its fix.
  const run = spawnSync(process.execPath, [new URL('../rtb.js', import.meta.url).pathname, 'help'], { env: offline(), encoding: 'utf8' });
  assert.equal(run.status, 2, run.stderr);
  const lines = run.stderr.split('\n').filter((line) => /^\S/.test(line));
  assert.ok(lines.some((line) => line.startsWith('rtb: step 1/3, creating a venv')), run.stderr);
  assert.deepEqual(lines.filter((line) => line.startsWith('[repeat-tool-breaker]')), [], 'the boot\'s prefix');
});
