// What is kept per content of the package: compiled modules and the configurations it accepted,
// and a worker's variables.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import test from 'node:test';

import {
  PACKAGE_ROOT,
  acceptedSettings,
  environmentName,
  packageIdentity,
  bytecodeFolder,
  decidingDigest,
  keptDigest,
  pythonEnvironment,
  rememberAccepted,
} from '../boot/environment.js';
import { PYTHON, ENVIRONMENT_MODULE, scratch, fakePackage, offline, interpreter, folderOf } from './environments.js';

test("Python runs this package's own breaker/ first, and pydantic looks for no plugins", () => {
  assert.equal(pythonEnvironment({ PYTHONPATH: '/elsewhere' }, '/pkg').PYTHONPATH, '/pkg:/elsewhere');
  assert.equal(pythonEnvironment({ HOME: '/h' }, '/pkg').PYTHONPATH, '/pkg');
  assert.equal(pythonEnvironment({}, '/pkg').PYDANTIC_DISABLE_PLUGINS, '__all__');
  assert.equal(pythonEnvironment({ PYDANTIC_DISABLE_PLUGINS: 'x' }, '/pkg').PYDANTIC_DISABLE_PLUGINS, 'x');
});

test('bytecode is kept per content of the package: an upgrade in place never runs the old one', () => {
  const root = fakePackage();
  mkdirSync(join(root, 'breaker'), { recursive: true });
  writeFileSync(join(root, 'breaker', 'urls.py'), 'FOLD = 1\n');
  const before = bytecodeFolder('/c/py', root);
  // The same size and, as npm writes them, the same time: only the content differs.
  writeFileSync(join(root, 'breaker', 'urls.py'), 'FOLD = 2\n');
  const later = spawnSync(process.execPath, ['--input-type=module', '-e', `
    import { bytecodeFolder } from ${JSON.stringify(ENVIRONMENT_MODULE)};
    console.log(bytecodeFolder('/c/py', ${JSON.stringify(root)}));`], { encoding: 'utf8' });
  assert.equal(later.status, 0, later.stderr);
  assert.notEqual(later.stdout.trim(), before);
  assert.equal(dirname(later.stdout.trim()), dirname(before));
});

test("the package's digest is kept by its files' stat signature: the contents' digest, and a rewrite in place that keeps a file's size and times is seen", async () => {
  const root = fakePackage();
  mkdirSync(join(root, 'breaker'), { recursive: true });
  const module = join(root, 'breaker', 'urls.py');
  const npmTime = new Date('1985-10-26T08:15:00Z'); // the time npm gives every file it unpacks
  writeFileSync(module, 'FOLD = 1\n');
  utimesSync(module, npmTime, npmTime);
  const dir = scratch('kept-digest');
  const settled = Date.now() + 60_000; // as if the files had been written long before
  assert.equal(keptDigest(dir, root, settled), decidingDigest(root));
  assert.equal(readdirSync(join(dir, 'digests')).length, 1, 'kept');
  assert.equal(keptDigest(dir, root, settled), decidingDigest(root), 'read back');
  await new Promise((resolve) => setTimeout(resolve, 50)); // past the file clock's tick
  writeFileSync(module, 'FOLD = 2\n'); // the same size, and the same times, as npm leaves them
  utimesSync(module, npmTime, npmTime);
  const upgraded = decidingDigest(root);
  assert.equal(keptDigest(dir, root, settled), upgraded, 'the rewrite changed the signature');
});

test('the digest of files changed just before a boot is worked out from their contents, not kept by their times', () => {
  const root = fakePackage();
  mkdirSync(join(root, 'breaker'), { recursive: true });
  writeFileSync(join(root, 'breaker', 'urls.py'), 'FOLD = 1\n');
  const dir = scratch('fresh-digest');
  assert.equal(keptDigest(dir, root), decidingDigest(root));
  assert.deepEqual(readdirSync(dir), [], 'a rewrite within the same tick of the file clock would keep their times');
});

test("the plugin's own environment keeps the bytecode of what it runs; another Python is left as it is", () => {
  const env = { PYTHONDONTWRITEBYTECODE: '1', HOME: '/h' };
  const root = fakePackage();
  mkdirSync(join(root, 'breaker'), { recursive: true });
  const own = pythonEnvironment(env, root, { command: '/c/py/bin/python', chosenBy: 'environment', dir: '/c/py' });
  assert.equal(own.PYTHONPYCACHEPREFIX, bytecodeFolder('/c/py', root));
  assert.ok(bytecodeFolder('/c/py').startsWith('/c/py/'), 'inside the environment, which only this user can write');
  assert.equal('PYTHONDONTWRITEBYTECODE' in own, false);
  const chosen = pythonEnvironment(env, '/pkg', { command: '/usr/bin/python3', chosenBy: 'RTB_PYTHON' });
  assert.equal(chosen.PYTHONDONTWRITEBYTECODE, '1');
  assert.equal('PYTHONPYCACHEPREFIX' in chosen, false);
});

test('a configuration accepted before is sent known, and still waited for: a worker that cannot start fails the boot (issue 32)', { skip: !process.env.RTB_PYTHON && 'needs RTB_PYTHON: a Python with the worker\'s packages' }, () => {
  // No private folder for FIFOs (a temporary folder that is not there): the worker keeps its stdio
  // pipes, so every request it is sent goes through its stdin, which the script below copies.
  const env = offline({ TMPDIR: join(scratch('tmp'), 'missing'), XDG_RUNTIME_DIR: '' });
  // A ready environment of the plugin's own whose interpreter is the given script.
  const folder = folderOf(env);
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const dir = join(folder, environmentName([3, 11], packageIdentity().dependencies));
  mkdirSync(join(dir, 'bin'), { recursive: true, mode: 0o700 });
  const sent = join(scratch('sent'), 'frames');
  const interpreterScript = (body) => writeFileSync(join(dir, 'bin', 'python'), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  writeFileSync(join(dir, 'rtb-environment.json'), '{}\n');
  const boot = (config) => spawnSync(process.execPath, ['--input-type=module', '-e', `
    import { apply } from ${JSON.stringify(new URL('../index.js', import.meta.url).href)};
    import { FakeDsh, makeAgent } from ${JSON.stringify(new URL('./fake-dsh.js', import.meta.url).href)};
    const dsh = new FakeDsh();
    const dispose = await apply(dsh.ctx, ${JSON.stringify(config)});
    console.log('applied');
    const agent = makeAgent('a');
    const verdicts = [1, 2, 3].map((n) => dsh.guardReason({ callId: 'c' + n, name: 'bash', agent, arguments: { command: 'ls', description: 'd' } }) ?? 'allowed');
    console.log(verdicts.join(' | '));
    dispose();`], { env, encoding: 'utf8', timeout: 60_000 });
  const config = { limits: { exact: 2 }, startTimeoutMs: 20_000 };
  // The worker's stdin copied aside, so the test sees the configure request it was sent.
  interpreterScript(`tee -a ${sent} | ${process.env.RTB_PYTHON} "$@"`);
  const first = boot(config);
  assert.equal(first.status, 0, first.stderr);
  assert.deepEqual(readdirSync(join(dir, 'accepted')).length, 1, 'the accepted configuration is remembered');
  assert.doesNotMatch(readFileSync(sent, 'latin1'), /known/, 'a configuration not seen before is checked in full');
  rmSync(sent);
  const second = boot(config);
  assert.equal(second.status, 0, second.stderr);
  assert.match(second.stdout, /^applied\nallowed \| REPEAT_TOOL_BLOCKED: [^|]* 2\/2\n[^|]*\| REPEAT_TOOL_BLOCKED: [^|]* 3\/2\n/);
  assert.match(readFileSync(sent, 'latin1'), /known\xc3/, 'the remembered configuration is sent known (true)');
  // The environment loses a package: the remembered configuration does not open the gate; the
  // boot fails with the cause and the fix, and no call is run.
  interpreterScript(`echo "ModuleNotFoundError: No module named 'msgpack'" >&2\nexit 1`);
  const damaged = boot(config);
  assert.notEqual(damaged.status, 0, damaged.stdout);
  assert.doesNotMatch(damaged.stdout, /applied/);
  assert.match(damaged.stderr, /cannot import msgpack .*rebuild the plugin's environment: `node .*setup\.js --force`/);
  // A worker that never answers: the boot waits for it (startTimeoutMs), then fails the same way.
  interpreterScript('exec sleep 30');
  const hung = boot({ ...config, startTimeoutMs: 1_500 });
  assert.notEqual(hung.status, 0, hung.stdout);
  assert.match(hung.stderr, /did not answer within 1500 ms/);
  // A bad configuration is never remembered: it waits for the worker, and the boot fails on it.
  interpreterScript(`exec ${process.env.RTB_PYTHON} "$@"`);
  const bad = boot({ window: 2 });
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /window/);
  assert.deepEqual(readdirSync(join(dir, 'accepted')).length, 1);
});

test('what was accepted is forgotten when any module of the package changes, however deep', () => {
  const root = fakePackage();
  mkdirSync(join(root, 'breaker', 'core'), { recursive: true });
  writeFileSync(join(root, 'breaker', '__init__.py'), '');
  writeFileSync(join(root, 'breaker', 'core', 'urls.py'), 'FOLD = 1\n');
  const dir = scratch('environment');
  const config = { localHosts: ['build.internal'] };
  const settings = { countedTools: '^bash$' };
  rememberAccepted(dir, config, settings, root);
  assert.deepEqual(acceptedSettings(dir, config, root), settings);
  assert.equal(acceptedSettings(dir, { window: 13 }, root), undefined, 'only the very configuration');
  rememberAccepted(dir, { limits: { exact: null } }, settings, root);
  for (const number of [Infinity, -Infinity, NaN]) {
    assert.equal(acceptedSettings(dir, { limits: { exact: number } }, root), undefined, `${number} is not null`);
  }
  // The same change seen by another process, as by this one (the digest is read afresh each time).
  writeFileSync(join(root, 'breaker', 'core', 'urls.py'), 'FOLD = 2\n');
  const later = spawnSync(process.execPath, ['--input-type=module', '-e', `
    import { acceptedSettings } from ${JSON.stringify(ENVIRONMENT_MODULE)};
    console.log(JSON.stringify(acceptedSettings(${JSON.stringify(dir)}, ${JSON.stringify(config)}, ${JSON.stringify(root)}) ?? null));`], { encoding: 'utf8' });
  assert.equal(later.status, 0, later.stderr);
  assert.equal(later.stdout.trim(), 'null', 'a core module changed: the worker must decide again');
});

test('a worker started after the package changed in place keeps its compiled modules apart from the old code\'s (issue 32)', { skip: !process.env.RTB_PYTHON && 'needs RTB_PYTHON: a Python with the worker\'s packages' }, async () => {
  const { workerOptions } = await import('../worker/start.js');
  const { WorkerBridge } = await import('../worker/bridge.js');
  // A copy of this package, run as the plugin's own environment runs it.
  const root = scratch('upgraded');
  cpSync(join(PACKAGE_ROOT, 'breaker'), join(root, 'breaker'), { recursive: true, filter: (path) => !path.includes('__pycache__') });
  for (const file of ['package.json', 'pyproject.toml']) cpSync(join(PACKAGE_ROOT, file), join(root, file));
  const dir = scratch('environment');
  const bridge = new WorkerBridge({ ...workerOptions({ command: PYTHON, chosenBy: 'environment', dir }, root), log: () => {} });
  const prefixOf = (pid) => /(?:^|\0)PYTHONPYCACHEPREFIX=([^\0]*)/.exec(readFileSync(`/proc/${pid}/environ`, 'latin1'))?.[1];
  try {
    assert.equal(bridge.boot({ op: 'configure', config: null }, 20_000).ok, true);
    const before = prefixOf(bridge.pid);
    assert.equal(before, bytecodeFolder(dir, root));
    // An upgrade in place (npm gives every file one time; this module keeps its size), then the
    // worker is lost: the running plugin starts a replacement.
    const module = join(root, 'breaker', 'protocol.py');
    const text = readFileSync(module, 'utf8');
    writeFileSync(module, text.replace('the ', 'teh ')); // in a docstring: the same size, other content
    assert.equal(statSync(module).size, Buffer.byteLength(text));
    assert.notEqual(readFileSync(module, 'utf8'), text);
    const first = bridge.pid;
    process.kill(first, 'SIGKILL');
    assert.equal(bridge.call({ op: 'stats' }).ok, true);
    bridge.drain(); // the helper's news: the replacement's pid
    assert.notEqual(bridge.pid, first, 'a replacement answered');
    assert.equal(prefixOf(bridge.pid), bytecodeFolder(dir, root), 'the new content\'s folder');
    assert.notEqual(prefixOf(bridge.pid), before);
  } finally {
    bridge.close();
  }
});
