// The plugin end to end: a fake dsh pipeline (fake-dsh.js) driving the real shim, which drives
// the real Python worker and the real breaker core.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { WorkerBridge } from '../worker/bridge.js';
import plugin, { apply, inject, name } from '../index.js';
import { FakeDsh, makeAgent, pluginNotice, userMessage } from './fake-dsh.js';
import { childPids, isAlive, waitUntil } from './processes.js';

const SHIM = new URL('../index.js', import.meta.url).href;
const disposers = [];
// apply returns a promise of its disposer (dsh awaits it): a hook run before it settles waits for the worker
after(async () => {
  for (const dispose of disposers) (await dispose)();
});

function mount(config, options) {
  const dsh = new FakeDsh(options);
  const dispose = apply(dsh.ctx, config);
  disposers.push(dispose);
  return { dsh, dispose: async () => (await dispose)() };
}

// Every request to the worker goes through WorkerBridge.send.
let framesPosted = 0;
const send = WorkerBridge.prototype.send;
WorkerBridge.prototype.send = function countFrames(...args) {
  framesPosted++;
  return send.apply(this, args);
};

const bash = (command, extra = {}) => ({ command, ...extra });
const LOCAL = 'http://localhost:8080/health';
const PIPES = ['head -c 200', 'jq .status', 'grep ok', 'wc -c', 'tail -n 1', 'cat', 'jq .', 'head -n 3'];
const localCall = (n) => bash(`curl -s ${LOCAL} | ${PIPES[n]}`);
// What a local call prints: the same for the same pipe each time, another for another pipe.
const localAnswer = (exec) => `{"status": "ok"} through ${exec.arguments.command.split(' | ')[1] ?? 'no pipe'}`;

async function verdicts(dsh, agent, calls) {
  const outcomes = [];
  for (const [tool, args] of calls) outcomes.push(await dsh.call(agent, tool, args));
  return outcomes;
}
const allowed = (outcomes) => outcomes.map((outcome) => outcome.denied === undefined);

test('the module shape dsh loads', () => {
  assert.equal(name, 'repeat-tool-breaker');
  assert.deepEqual(inject, ['tools']);
  assert.deepEqual(plugin, { name, inject, apply });
});

// A body that answers the same each call but for its clock (a time is volatile, not news).
const stamped = (text) => (exec) => `${text}, read at 2026-12-06T03:00:${exec.callId.slice(5).padStart(2, '0')}Z`;

test('loop A: the fifth identical call is denied before its body runs, quoting the previous result', async () => {
  const { dsh } = mount(undefined, { body: stamped('notes') });
  const agent = makeAgent('a');
  const outcomes = await verdicts(dsh, agent, Array(5).fill(['bash', bash('cat notes.txt')]));
  assert.deepEqual(allowed(outcomes), [true, true, true, true, false]);
  assert.equal(dsh.bodyRuns, 4);
  const denial = outcomes[4].text;
  assert.match(denial, /^Error: REPEAT_TOOL_BLOCKED:/);
  assert.match(denial, /notes, read at 2026-12-06T03:00:04Z/, 'the 4th result, not the 1st');
});

test('a poll whose answer moves runs on past the caps; once it comes back the same, sameResultLimit stops it', async () => {
  let polls = 0;
  const { dsh } = mount(undefined, { body: () => `build ${Math.min(10 * ++polls, 100)}% done` });
  const outcomes = await verdicts(dsh, makeAgent('poll'), Array(16).fill(['bash', bash('cat build/status.txt')]));
  // 10%, 20%, ... 100% (10 calls, each news), then 100% three times more: the same answer 4 times.
  assert.deepEqual(allowed(outcomes), [...Array(13).fill(true), false, false, false]);
  assert.match(outcomes[13].text, /^Error: REPEAT_TOOL_BLOCKED:/);
  assert.match(outcomes[13].text, /build 100% done/);
});

/** Run `body(lines)` while the stderr writes that hold `marker` are collected into `lines`. */
async function withStderr(marker, body) {
  const lines = [];
  const write = process.stderr.write;
  process.stderr.write = function capture(text, ...rest) {
    if (String(text).includes(marker)) lines.push(String(text));
    return write.call(this, text, ...rest);
  };
  try {
    await body(lines);
  } finally {
    process.stderr.write = write;
  }
}

test('logDenials: one stderr line per denial, naming the tool, the kinds (caps reached, failures in a row) and the agent, never the arguments', async () => {
  await withStderr('denied a ', async (lines) => {
    await verdicts(mount(undefined, { body: () => 'notes' }).dsh, makeAgent('q'), Array(5).fill(['bash', bash('cat secret-arg.txt')]));
    assert.deepEqual(lines, [], 'off by default');
    const { dsh } = mount({ logDenials: true }, { body: (exec) => (exec.arguments.command === 'ls /missing' ? 'ls: no such\n[exit code: 2]' : 'notes') });
    assert.deepEqual(allowed(await verdicts(dsh, makeAgent('l'), Array(6).fill(['bash', bash('cat secret-arg.txt')]))), [true, true, true, true, false, false]);
    assert.match(lines[0], /^\[repeat-tool-breaker\] denied a bash call of agent \d+ \(reached exact 5\/5, cmd 5\/5\); the session log/);
    assert.ok(!lines.some((line) => line.includes('secret-arg')));
    assert.deepEqual(allowed(await verdicts(dsh, makeAgent('f'), Array(5).fill(['bash', bash('ls /missing')]))), [true, true, true, false, false]);
    const why = lines.slice(2).map((line) => /\((.*)\); the session log/.exec(line)?.[1]); // failLimit's counts named as such
    assert.deepEqual(why, ['failed in a row exact 3/3, cmd 3/3', 'reached exact 5/5, cmd 5/5; failed in a row exact 3/3, cmd 3/3']);
  });
});

test('a row meant for the plugin under another id is named at boot in one line, with the fix, and the boot goes on', async () => {
  await withStderr('[repeat-tool-breaker] the row ', async (lines) => {
    const dsh = new FakeDsh({ body: () => 'the same answer' });
    // what cordis-plugin-include holds: every patch row, the bundles' inserted ones too
    const patches = [
      { insert: [{ id: 'repeat-tool-breaker', name: 'dsh-repeat-tool-breaker' }] },
      { id: 'hmr', disabled: false, config: { root: [] } },
      { id: 'repeat-tool-braker', config: { limits: { exact: 3 } } },
    ];
    dsh.ctx.fiber = { entry: { parent: { tree: { config: { patches } } } } };
    disposers.push(await apply(dsh.ctx, undefined));
    assert.equal(lines.length, 1);
    assert.match(lines[0], /^\[repeat-tool-breaker\] the row 'repeat-tool-braker' is not this plugin's row 'repeat-tool-breaker'.*\. Fix: write its id as repeat-tool-breaker\n$/);
    const outcomes = await verdicts(dsh, makeAgent('s'), Array(5).fill(['bash', bash('cat notes.txt')]));
    assert.deepEqual(allowed(outcomes), [true, true, true, true, false], 'the defaults apply, not exact: 3');
  });
});

test('a config key beside the row\'s config: instead of under it is named at boot in one line, with the fix', async () => {
  await withStderr('[repeat-tool-breaker] the row ', async (lines) => {
    const dsh = new FakeDsh({ body: () => 'the same answer' });
    const patches = [
      { insert: [{ id: 'repeat-tool-breaker', name: 'dsh-repeat-tool-breaker' }] },
      { id: 'repeat-tool-breaker', disabled: false, window: 8, limits: { exact: 3 } },
    ];
    Object.assign(patches[0].insert[0], patches[1]); // as cordis leaves the row it applied the patch to
    dsh.ctx.fiber = { entry: { parent: { tree: { config: { patches } } } } };
    disposers.push(await apply(dsh.ctx, undefined));
    assert.deepEqual(lines, [
      "[repeat-tool-breaker] the row 'repeat-tool-breaker' holds window, limits beside its config:, where dsh passes them to no one, so the defaults apply. Fix: indent them under config: in that row\n",
    ]);
  });
});

test('a second row inserting the plugin beside the bundle\'s is named at boot: dsh runs it twice', async () => {
  await withStderr('[repeat-tool-breaker] 2 rows insert', async (lines) => {
    const dsh = new FakeDsh({ body: () => 'the same answer' });
    const row = (name) => ({ insert: [{ id: 'repeat-tool-breaker', name }] });
    dsh.ctx.fiber = { entry: { parent: { tree: { config: { patches: [row('dsh-repeat-tool-breaker'), row('/abs/node-shim/index.js')] } } } } };
    disposers.push(await apply(dsh.ctx, undefined));
    assert.match(lines.join(''), /^\[repeat-tool-breaker\] 2 rows insert this plugin \('repeat-tool-breaker' \(dsh-repeat-tool-breaker\), .*\. Fix: keep one: [^\n]*\n$/);
  });
});

test('.inf and .nan in the config are refused as written, not taken for null (no cap)', async () => {
  await assert.rejects(() => apply(new FakeDsh().ctx, { limits: { exact: Infinity } }), /limits\.exact must be null or a finite number >= 2, got \.inf\. Fix:/);
  await assert.rejects(() => apply(new FakeDsh().ctx, { failLimit: NaN }), /failLimit must be null or a finite number >= 2, got \.nan\. Fix:/);
  await assert.rejects(() => apply(new FakeDsh().ctx, { window: -Infinity }), /window must be a whole number >= 4, got -\.inf\. Fix:/);
});

test('a suggestion ending in a question mark takes no stray period before the fix', async () => {
  await assert.rejects(() => apply(new FakeDsh().ctx, { identity: 'exactt' }), /did you mean 'exact'\? Fix: correct it/);
});

test("loop B: description '1st'/'2nd'/... decoys do not make a new call", async () => {
  const { dsh } = mount(null, { body: () => 'epoch 1/10 loss 0.42' });
  const calls = ['1st', '2nd', '3rd', '4th', '5th'].map((description) => ['bash', bash('python train.py', { description })]);
  assert.deepEqual(allowed(await verdicts(dsh, makeAgent('b'), calls)), [true, true, true, true, false]);
});

test('loop C: --max-time churn with open-data.canada.ca ↔ open.canada.ca ping-pong', async () => {
  const { dsh } = mount({}, { body: () => '' }); // -s -o: curl prints nothing
  const spellings = [['https://open-data.canada.ca/', 60], ['https://open.canada.ca/', 30]];
  const calls = Array.from({ length: 6 }, (_, index) => {
    const [url, seconds] = spellings[index % 2];
    return ['bash', bash(`curl --max-time ${seconds} -s -o /tmp/od.html ${url}`, { description: `attempt ${index}` })];
  });
  const outcomes = await verdicts(dsh, makeAgent('c'), calls);
  assert.deepEqual(allowed(outcomes), [true, true, true, true, false, false]);
  assert.match(outcomes[4].text, /net:open\.canada\.ca\//);
});

test('a resource respelled each time (./src/app.py, ././src/app.py, src//app.py; /v1/./jobs, /v1/%6Aobs) is one resource', async () => {
  const missing = (exec) => exec.arguments.file_path?.includes('lib') && 'Error: File not found';
  const answer = (exec) => missing(exec) || (exec.arguments.file_path ? '1: def main():' : '{"state": "queued"}');
  const { dsh } = mount({}, { body: answer });
  const paths = ['./src/app.py', '././src/app.py', 'src//app.py', './././src/app.py', 'src///app.py', 'src/app.py'];
  const reads = await verdicts(dsh, makeAgent('paths'), paths.map((file_path) => ['read', { file_path }]));
  // A read of the agent's own file that answered the same 3 times in a row is not asked a 4th;
  // the 5th reaches exact's cap, which names the call as it resolves.
  assert.deepEqual(allowed(reads), [true, true, true, false, false, false]);
  assert.match(reads[3].text, /the same result 3 times/);
  assert.match(reads[4].text, /exact:read:\{"file_path":"src\/app\.py"\} 5\/5/);
  const gone = paths.map((path) => path.replace('src', 'lib'));
  const failing = await verdicts(dsh, makeAgent('missing'), gone.map((file_path) => ['read', { file_path }]));
  assert.deepEqual(allowed(failing), [true, true, false, false, false, false]); // the same error twice
  const urls = ['/v1/./jobs/42', '/v1/x1/../jobs/42', '/v1/%6Aobs/42', '/./v1/jobs/42', '/v1/jobs/./42', '/v1/jobs/42'];
  const curls = await verdicts(dsh, makeAgent('urls'), urls.map((path) => ['bash', bash(`curl -s https://api.example.com${path}`)]));
  assert.deepEqual(allowed(curls), [true, true, true, true, false, false]);
  assert.match(curls[4].text, /net:api\.example\.com\/v1\/jobs\/42/);
});

test('agents are isolated; a user message resets one, a plugin notice does not', async () => {
  const { dsh } = mount({}, { body: (exec) => `12 passing (${exec.callId.slice(5)}ms)` }); // a duration is volatile
  const [first, second] = [makeAgent('one'), makeAgent('two')];
  const same = Array(4).fill(['bash', bash('npm test')]);
  await verdicts(dsh, first, same);
  assert.deepEqual(allowed(await verdicts(dsh, second, same)), [true, true, true, true]);
  await dsh.step(first, [pluginNotice('you repeated npm test 4 times')]);
  assert.equal((await dsh.call(first, 'bash', bash('npm test'))).denied?.startsWith('REPEAT_TOOL_BLOCKED:'), true);
  await dsh.step(first, [pluginNotice('runtime context'), userMessage('try again please')]);
  assert.deepEqual(allowed(await verdicts(dsh, first, same)), [true, true, true, true]);
  assert.equal(allowed(await verdicts(dsh, second, [['bash', bash('npm test')]]))[0], false);
});

test('localHosts ask, approved: the fifth local call asks once, then local targets are free this turn', async () => {
  const { dsh } = mount({}, { approval: 'allowed-once', body: localAnswer });
  const agent = makeAgent('ask-yes');
  await verdicts(dsh, agent, [0, 1, 2, 3].map((n) => ['bash', localCall(n)]));
  const fifth = await dsh.call(agent, 'bash', localCall(4));
  assert.equal(fifth.denied, undefined);
  assert.match(fifth.asked, /net:localhost:8080\/health/);
  assert.deepEqual(allowed(await verdicts(dsh, agent, [5, 6, 7].map((n) => ['bash', localCall(n)]))), [true, true, true]);
  // exact: still counts after an approval.
  const same = await verdicts(dsh, agent, Array(5).fill(['bash', bash(`curl -s ${LOCAL}`)]));
  assert.deepEqual(allowed(same), [true, true, true, true, false]);
  assert.equal(dsh.asks.length, 1);
});

for (const approval of ['rejected', 'unavailable']) {
  test(`localHosts ask, ${approval}: a notice says why, and the breaker denies local repeats until the next human turn`, async () => {
    const { dsh } = mount({ localHosts: 'ask' }, { approval, body: localAnswer });
    const agent = makeAgent(`ask-${approval}`);
    await verdicts(dsh, agent, [0, 1, 2, 3].map((n) => ['bash', localCall(n)]));
    const declined = await dsh.call(agent, 'bash', localCall(4));
    assert.ok(declined.asked);
    assert.match(declined.text, approval === 'rejected' ? /the user rejected tool "bash"/ : /no approval channel/);
    // dsh words that result, not why it asked: a notice with it says so (notices are off).
    const [told] = declined.post.additionalContexts;
    assert.match(told.content[0].text, /^REPEAT_TOOL_NOTICE: the call above was not run: it repeated a local target, which localHosts: 'ask'/);
    assert.equal(told.source.kind, 'plugin');
    const next = await dsh.call(agent, 'bash', localCall(5));
    assert.equal(next.asked, undefined);
    assert.match(next.denied, /^REPEAT_TOOL_BLOCKED:/);
    assert.match(next.denied, /localHosts/);
    await dsh.step(agent, [userMessage('go on')]);
    await verdicts(dsh, agent, [0, 1, 2, 3].map((n) => ['bash', localCall(n)]));
    assert.ok((await dsh.call(agent, 'bash', localCall(4))).asked);
    assert.equal(dsh.asks.length, 2);
  });
}

test('localHosts deny: no ask, the denial names the knob', async () => {
  const { dsh } = mount({ localHosts: 'deny' }, { approval: 'allowed-once', body: localAnswer });
  const outcomes = await verdicts(dsh, makeAgent('deny'), [0, 1, 2, 3, 4].map((n) => ['bash', localCall(n)]));
  assert.deepEqual(allowed(outcomes), [true, true, true, true, false]);
  assert.match(outcomes[4].denied, /localHosts/);
  assert.equal(dsh.asks.length, 0);
});

test('localHosts allow: local targets are never counted', async () => {
  const { dsh } = mount({ localHosts: 'allow' }, { body: localAnswer });
  const outcomes = await verdicts(dsh, makeAgent('allow'), PIPES.map((_, n) => ['bash', localCall(n)]));
  assert.deepEqual(allowed(outcomes), PIPES.map(() => true));
  assert.equal(dsh.asks.length, 0);
});

test('a decision downstream of pre-execute is kept, and post-execute passes the decision through', async () => {
  const { dsh } = mount({});
  dsh.ctx.on('tools/pre-execute', async () => ({ kind: 'deny', reason: 'policy says no' }));
  const accepted = { kind: 'accept', additionalContexts: [] };
  dsh.ctx.on('tools/post-execute', async () => accepted);
  const before = framesPosted;
  const outcome = await dsh.call(makeAgent('downstream'), 'bash', bash('ls'));
  assert.equal(outcome.denied, 'policy says no');
  assert.equal(outcome.post, accepted);
  assert.equal(framesPosted, before, 'no preflight or guard for a call already denied; no result for an unknown agent');
});

test('excluded tools and calls without an agent cost no round trip', async () => {
  const { dsh } = mount({ exclude: ['todo_*'] });
  const agent = makeAgent('excluded');
  const before = framesPosted;
  await verdicts(dsh, agent, Array(6).fill(['todo_write', { todos: [] }]));
  assert.deepEqual(allowed(await verdicts(dsh, undefined, Array(6).fill(['bash', bash('ls')]))), Array(6).fill(true));
  await dsh.step(agent, [userMessage('hello')]);
  assert.equal(framesPosted, before);
});

test('a collected agent is forgotten by the worker', async () => {
  setFlagsFromString('--expose-gc');
  const collectGarbage = runInNewContext('gc');
  const { dsh } = mount({});
  await (async () => {
    await dsh.call(makeAgent('short-lived'), 'bash', bash('ls'));
  })();
  const before = framesPosted;
  const forgotten = await waitUntil(() => {
    collectGarbage();
    return framesPosted > before;
  });
  assert.ok(forgotten, 'a forget request was sent after the agent was collected');
});

test('odd arguments never make the guard throw or return anything but string | undefined', async () => {
  const { dsh } = mount({});
  const agent = makeAgent('odd');
  const cyclic = { name: 'loop' };
  cyclic.self = cyclic;
  let deep = {};
  for (let depth = 0; depth < 5000; depth++) deep = { deep };
  const oddArguments = [
    cyclic, deep, { big: 2n ** 70n, fn: () => 1, nothing: undefined, nan: NaN, when: new Date(0) },
    { text: 'lone \uD800 surrogate and NUL \u0000' }, [1, [2, [3]]], null, 'just a string', { huge: 'x'.repeat(4 * 1024 * 1024) },
  ];
  const [guard] = dsh.guards;
  for (const [index, args] of oddArguments.entries()) {
    const verdict = guard(Object.freeze({ name: 'bash', callId: `odd-${index}`, agent, arguments: args }));
    assert.ok(verdict === undefined || typeof verdict === 'string', `case ${index}`);
  }
  for (const exec of [undefined, null, {}, { name: 42, agent: 7 }, { name: 'bash', agent }]) {
    assert.equal(guard(exec), undefined);
  }
});

test('config errors fail apply, naming the key', async () => {
  const dsh = new FakeDsh();
  await assert.rejects(() => apply(dsh.ctx, { windw: 12 }), /^Error: repeat-tool-breaker: unknown config key 'windw'; did you mean 'window'\?/);
  await assert.rejects(() => apply(dsh.ctx, { limits: { exact: 1 } }), /repeat-tool-breaker: limits\.exact must be null or a finite number >= 2/);
  await assert.rejects(() => apply(dsh.ctx, { denyAfter: 3 }), /denyAfter is a key of the unrelated npm plugin of the same name: use limits/);
  assert.equal(dsh.listenerCount, 0, 'nothing stays registered when apply fails');
});

test('a config error is written to stderr first, once and alone, as `rtb check` prints it, then thrown', () => {
  const boot = spawnSync(process.execPath, ['--input-type=module', '-e', `
    import { apply } from ${JSON.stringify(SHIM)};
    import { FakeDsh } from ${JSON.stringify(new URL('./fake-dsh.js', import.meta.url).href)};
    try { await apply(new FakeDsh().ctx, { window: -3 }); } catch (error) { process.stderr.write('thrown: ' + error.message + '\\n'); }`], { encoding: 'utf8' });
  const lines = boot.stderr.split('\n');
  assert.match(lines[0], /^repeat-tool-breaker: window must be a whole number >= 4, got -3\. Fix: correct it in the config: of the repeat-tool-breaker row /);
  assert.equal(lines[1], '', 'alone: a blank line after it');
  assert.equal(lines.filter((line) => line === lines[0]).length, 1, 'written once');
  assert.equal(lines[2], `thrown: ${lines[0]}`, 'then thrown, the same text');
});

test('a config error is one message with the fix and no frame of the plugin\'s code (dsh prints its stack)', async () => {
  const dsh = new FakeDsh();
  await assert.rejects(() => apply(dsh.ctx, { window: 2 }), (error) => {
    assert.equal(error.stack, error.message);
    assert.match(error.message, /^repeat-tool-breaker: window must be a whole number >= 4, got 2\. Fix: correct it in the config: of the repeat-tool-breaker row .*cordis\.patch\.yml.*`npx --no rtb check` in the profile folder/);
    assert.doesNotMatch(error.stack, /\n\s+at /);
    return true;
  });
});

test('a timeout the shim cannot hold, or not a whole number, fails the boot naming its key, not as a timeout', async () => {
  const refused = [
    [{ startTimeoutMs: 0.5 }, 'startTimeoutMs', '0.5'],
    [{ startTimeoutMs: 3_000_000_000 }, 'startTimeoutMs', '3000000000'],
    [{ guardTimeoutMs: 10_000_000_000 }, 'guardTimeoutMs', '10000000000'],
  ];
  for (const [config, key, shown] of refused) {
    await assert.rejects(() => apply(new FakeDsh().ctx, config), (error) => {
      assert.match(error.message, new RegExp(`^repeat-tool-breaker: ${key} must be a whole number .*, got ${shown}\\. Fix: `));
      return true;
    }, key);
  }
});

test('a missing interpreter or missing Python packages fail the boot with the command that fixes it', async () => {
  const dsh = new FakeDsh();
  await assert.rejects(() => apply(dsh.ctx, { python: '/nonexistent/python3' }), (error) => {
    assert.match(error.message, /cannot run the Python interpreter "\/nonexistent\/python3" \(ENOENT\) from the `python` config key/);
    assert.match(error.message, /point the `python` config key at a Python >= 3\.10, or unset it/);
    return true;
  });
  // An interpreter without its site-packages: msgpack and pydantic are missing.
  const folder = mkdtempSync(join(tmpdir(), 'rtb-bare-python-'));
  disposers.push(() => rmSync(folder, { recursive: true, force: true }));
  const bare = join(folder, 'python');
  writeFileSync(bare, `#!/bin/sh\nexec ${process.env.RTB_PYTHON || 'python3'} -S "$@"\n`, { mode: 0o755 });
  await assert.rejects(() => apply(dsh.ctx, { python: bare }), (error) => {
    assert.match(error.message, /the Python worker cannot import \w+ \(interpreter .* from the `python` config key\)/);
    assert.ok(error.message.includes(`${bare} -m pip install "msgpack>=1.0" "pydantic>=2.5"`), error.message);
    return true;
  });
});

test('an interpreter older than 3.10 is named as such, not as the traceback it gives', async (t) => {
  const old = ['python3.9', ...['3.9.18', '3.9'].map((v) => join(process.env.PYENV_ROOT || '/root/.pyenv', 'versions', v, 'bin', 'python3'))]
    .find((command) => spawnSync(command, ['-c', 'import sys; assert sys.version_info[:2] == (3, 9)']).status === 0);
  if (!old) return t.skip('no Python 3.9 on this machine');
  await assert.rejects(() => apply(new FakeDsh().ctx, { python: old }), (error) => {
    assert.match(error.message, /^repeat-tool-breaker: the worker needs Python >= 3\.10, but .* \(from the `python` config key\) is Python 3\.9: /);
    return true;
  });
});

test('a worker that stops answering is replaced; the guard answers within its deadline meanwhile', async () => {
  const existing = new Set(childPids());
  const { dsh } = mount({ guardTimeoutMs: 200, onWorkerFailure: 'deny' });
  const agent = makeAgent('hang');
  await dsh.call(agent, 'bash', bash('ls'));
  const [worker] = childPids().filter((pid) => !existing.has(pid));
  process.kill(worker, 'SIGSTOP');
  const started = performance.now();
  const [guard] = dsh.guards;
  const stalled = guard({ name: 'bash', callId: 'stalled', agent, arguments: bash('ls -la') });
  assert.ok(performance.now() - started < 5000, 'the 200 ms deadline ended the wait');
  assert.match(stalled, /loop guard is unavailable .*onWorkerFailure setting is 'deny'/);
  assert.ok(await waitUntil(() => !isAlive(worker)), 'the stalled worker was killed');
  assert.equal((await dsh.call(agent, 'bash', bash('pwd'))).denied, undefined);
});
test('teardown disposes every registration and leaves no process behind', async () => {
  const existing = new Set(childPids());
  const { dsh, dispose } = mount({});
  await dsh.call(makeAgent('teardown'), 'bash', bash('ls'));
  const workers = childPids().filter((pid) => !existing.has(pid));
  assert.equal(workers.length, 1);
  await dispose();
  assert.equal(dsh.listenerCount, 0);
  assert.ok(await waitUntil(() => !isAlive(workers[0])), 'the worker exited');
});

test('a process that loads the shim, works and does nothing else exits by itself promptly', async () => {
  const script = `
    import { apply } from ${JSON.stringify(SHIM)};
    import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
    const guards = [];
    apply({ tools: { guard: (g) => (guards.push(g), () => {}) }, on: () => () => {} }, {});
    const agent = {};
    for (let i = 0; i < 5; i++) guards[0]({ name: 'bash', callId: 'c' + i, agent, arguments: { command: 'ls' } });
    const kids = readdirSync('/proc/self/task').flatMap((t) => readFileSync('/proc/self/task/' + t + '/children', 'utf8').split(' ').filter(Boolean));
    console.log(JSON.stringify({ workers: kids.map(Number), denied: guards[0]({ name: 'bash', callId: 'c5', agent, arguments: { command: 'ls' } }) }));
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk) => { output += chunk; });
  const started = Date.now();
  const code = await new Promise((resolve) => child.on('exit', resolve));
  assert.equal(code, 0);
  assert.ok(Date.now() - started < 5000, 'it exited on its own');
  const { workers, denied } = JSON.parse(output);
  assert.match(denied, /^REPEAT_TOOL_BLOCKED:/);
  assert.equal(workers.length, 1);
  assert.ok(await waitUntil(() => !isAlive(workers[0])), 'its worker exited after it');
});
