// A profile with no frontend (dsh waits without a word, issue 31): the plugin says what is missing.
// The real boot of such a profile is compat/run.py's `no-frontend` scenario.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FRONTEND_SERVICES, NO_FRONTEND, watchFrontend } from '../boot/frontend.js';

const settle = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A context whose services are `services` (cordis's ctx.get: undefined for one not provided). */
function contextWith(services) {
  return { get: (name) => (services.includes(name) ? {} : undefined) };
}

test('a tree with neither of dsh\'s frontends gets one line naming what is missing and the fix', async () => {
  const lines = [];
  watchFrontend(contextWith(['tools', 'cmdlineArgs']), (line) => lines.push(line), () => false, 10);
  await settle(50);
  assert.deepEqual(lines, [NO_FRONTEND]);
  assert.match(NO_FRONTEND, /@deepseek-ai\/dsh-headless.*Fix: add "@deepseek-ai\/dsh-headless" to dsh\.profile\.bundles/);
});

test('a headless or a web profile, a context without get, a plugin disposed before the look, or one that saw a step: nothing said', async () => {
  const lines = [];
  const log = (line) => lines.push(line);
  const never = () => false;
  for (const service of FRONTEND_SERVICES) watchFrontend(contextWith([service]), log, never, 10);
  watchFrontend({}, log, never, 10);
  const cancel = watchFrontend(contextWith([]), log, never, 10);
  cancel();
  watchFrontend({ get: () => { throw new Error('not registered'); } }, log, never, 10)(); // cancelled too
  // A task that ran and finished: its frontend may be gone while dsh exits; nothing to say.
  watchFrontend(contextWith([]), log, () => true, 10);
  await settle(50);
  assert.deepEqual(lines, []);
});
