// The worker's environment: the dependency list, how an environment is named, found, prepared and
// shared, what only rtb uses, and how a preparation that cannot succeed says so. Preparations here
// are real venvs: most with an empty dependency list (a venv, no pip run), some installing `pip`
// from the wheel Python's own ensurepip bundles, with the package index switched off, so they need
// no network; the compat harness prepares the real dependency list against a real dsh.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import {
  PACKAGE_ROOT,
  cacheHome,
  environmentName,
  packageIdentity,
  readDependencies,
  rtbPackages,
  workerInterpreter,
} from '../boot/environment.js';
import { PYTHON, ENVIRONMENT_MODULE, scratch, fakePackage, offline, interpreter, folderOf, environmentsIn, recorder, statMode } from './environments.js';

test('the dependency list is [project].dependencies of pyproject.toml, as Python reads it', (t) => {
  const text = readFileSync(join(PACKAGE_ROOT, 'pyproject.toml'), 'utf8');
  const ours = readDependencies(text);
  assert.ok(ours.length > 0);
  const probe = spawnSync(PYTHON, ['-c', 'import json, sys, tomllib; print(json.dumps(tomllib.loads(sys.stdin.read())["project"]["dependencies"]))'], {
    input: text,
    encoding: 'utf8',
  });
  if (probe.status !== 0) return t.skip(`no tomllib in ${PYTHON}`);
  assert.deepEqual(ours, JSON.parse(probe.stdout));
});

test('the dependency reader takes comments, both quotes and a trailing comma, and stops at its table', () => {
  const text = [
    '[build-system]',
    'requires = ["setuptools>=61"]',
    '[project]  # the package',
    'name = "x"',
    "dependencies = [ # runtime",
    '  "msgpack>=1.0",  # frames',
    "  'anyio>=4.0',",
    '  "pydantic>=2.5; python_version >= \'3.10\'",',
    ']',
    '[project.optional-dependencies]',
    'test = ["pytest"]',
  ].join('\n');
  assert.deepEqual(readDependencies(text), ['msgpack>=1.0', 'anyio>=4.0', "pydantic>=2.5; python_version >= '3.10'"]);
  assert.deepEqual(readDependencies('[project]\ndependencies = []\n'), []);
  assert.deepEqual(readDependencies('[project]\ndependencies = ["a", "b"]\n'), ['a', 'b']);
});

test('a dependency list it cannot read is refused, not guessed', () => {
  assert.throws(() => readDependencies('[tool.x]\ndependencies = ["a"]\n'), /no \[project\] table/);
  assert.throws(() => readDependencies('[project]\nname = "x"\n[tool.x]\ndependencies = ["a"]\n'), /no dependencies key/);
  assert.throws(() => readDependencies('[project]\ndependencies = ["a\\"b"]\n'), /escaped string/);
  assert.throws(() => readDependencies('[project]\ndependencies = [a]\n'), /unexpected/);
  assert.throws(() => readDependencies('[project]\ndependencies = ["a" "b"]\n'), /expected , or \]/);
});

test('the cache is XDG_CACHE_HOME when absolute, else ~/.cache', () => {
  assert.equal(cacheHome({ XDG_CACHE_HOME: '/var/cache/me', HOME: '/home/me' }), '/var/cache/me');
  assert.equal(cacheHome({ XDG_CACHE_HOME: 'relative', HOME: '/home/me' }), '/home/me/.cache');
  assert.equal(cacheHome({ HOME: '/home/me' }), '/home/me/.cache');
});

test('an environment is named by its Python and its dependency list, not the package version', () => {
  const base = environmentName([3, 11], ['a>=1', 'b']);
  assert.match(base, /^py3\.11-[0-9a-f]{12}$/);
  assert.equal(environmentName([3, 11], ['a>=1', 'b']), base);
  assert.notEqual(environmentName([3, 12], ['a>=1', 'b']), base);
  assert.notEqual(environmentName([3, 11], ['a>=2', 'b']), base);
  assert.notEqual(environmentName([3, 11], ['a>=1', 'b', 'c']), base);
  assert.deepEqual(packageIdentity().dependencies, readDependencies(readFileSync(join(PACKAGE_ROOT, 'pyproject.toml'), 'utf8')));
});

test('the python config key, then RTB_PYTHON, are used as they are', () => {
  const { lines, log } = recorder();
  const env = { RTB_PYTHON: '/opt/py/bin/python3', XDG_CACHE_HOME: '/nonexistent' };
  assert.deepEqual(workerInterpreter({ configured: '/usr/bin/python3.12', env, log }), {
    command: '/usr/bin/python3.12',
    chosenBy: 'the `python` config key',
  });
  assert.deepEqual(workerInterpreter({ configured: '  ', env, log }), { command: '/opt/py/bin/python3', chosenBy: 'RTB_PYTHON' });
  assert.deepEqual(lines, []);
});

test('the first call prepares the environment once, says so with the time taken, and later calls reuse it', () => {
  const root = fakePackage();
  const env = offline();
  const { lines, log } = recorder();
  const first = interpreter({ env, log, root });
  assert.equal(first.chosenBy, 'environment');
  assert.equal(first.dir, join(folderOf(env), environmentName(JSON.parse(readFileSync(join(first.dir, 'rtb-environment.json'))).python.split('.'), ['pip'])));
  assert.equal(first.command, join(first.dir, 'bin', 'python'));
  assert.equal(lines.length, 2, lines.join('\n'));
  assert.match(lines[0], /no worker environment for dsh-repeat-tool-breaker 1\.0\.0 yet: preparing .* \(a Python 3\.\d+ venv \(python3?\) with pip\); this happens once per Python dependency list/);
  assert.match(lines[1], /^worker environment ready after \d+\.\d s$/);
  const marker = JSON.parse(readFileSync(join(first.dir, 'rtb-environment.json'), 'utf8'));
  assert.deepEqual([marker.version, marker.dependencies, marker.pip], ['1.0.0', ['pip'], 'base']);
  assert.equal(spawnSync(first.command, ['-c', 'import pip']).status, 0);
  assert.deepEqual(interpreter({ env, log, root }), first);
  assert.equal(lines.length, 2, 'a ready environment is not announced again');
  assert.deepEqual(environmentsIn(folderOf(env)), [first.dir.split('/').at(-1)]);
});

test('the preparation says how far it is: its steps and each package fetched', () => {
  const env = offline();
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', `
    import { workerInterpreter } from ${JSON.stringify(ENVIRONMENT_MODULE)};
    workerInterpreter({ root: ${JSON.stringify(fakePackage())}, log: () => {}, prefix: 'P: ' });`], { env, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const steps = run.stderr.split('\n').filter((line) => line.startsWith('P: '));
  assert.match(steps[0], /^P: step 1\/3, creating a venv \(without pip\)$/);
  assert.match(steps[1], /^P: step 2\/3, fetching packages: 1 requirements and what they need$/);
  assert.ok(steps.some((line) => /^P: step 2\/3, fetching packages: 1 so far, .*pip-\d/.test(line)), steps.join('\n'));
  assert.match(steps.at(-1), /^P: step 3\/3, installing 1 packages into the environment$/);
});

test('package versions with one dependency list share one environment', () => {
  const env = offline();
  const { lines, log } = recorder();
  const old = interpreter({ env, log, root: fakePackage('1.0.0', []) });
  const newer = interpreter({ env, log, root: fakePackage('1.1.0', []) });
  assert.equal(newer.dir, old.dir);
  assert.equal(lines.filter((line) => /preparing/.test(line)).length, 1, lines.join('\n'));
  assert.deepEqual(environmentsIn(folderOf(env)), [old.dir.split('/').at(-1)]);
});

test('an environment whose Python has gone is prepared again', () => {
  const root = fakePackage('1.0.0', []);
  const env = offline();
  const first = interpreter({ env, log: () => {}, root });
  rmSync(first.command);
  const { lines, log } = recorder();
  assert.deepEqual(interpreter({ env, log, root }), first);
  assert.match(lines[0], /no longer has a working Python: preparing it again/);
  assert.equal(spawnSync(first.command, ['-c', 'pass']).status, 0);
});

test('an upgrade with another dependency list gets a fresh environment; the old one stays while a copy uses it', () => {
  const env = offline();
  const log = () => {};
  const old = interpreter({ env, log, root: fakePackage('1.0.0', []) });
  const upgraded = interpreter({ env, log, root: fakePackage('1.1.0', ['pip']) });
  assert.notEqual(upgraded.dir, old.dir);
  assert.ok(existsSync(old.command) && existsSync(upgraded.command));
});

test('boots preparing at once leave one complete environment and both use it', async () => {
  const root = fakePackage();
  const env = offline();
  const script = `import { workerInterpreter } from ${JSON.stringify(ENVIRONMENT_MODULE)};
    process.stdout.write(JSON.stringify(workerInterpreter({ root: ${JSON.stringify(root)}, log: () => {}, progress: 'ignore' })));`;
  const boot = () => new Promise((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { env });
    let out = '';
    child.stdout.on('data', (chunk) => { out += chunk; });
    child.on('close', (code) => resolve({ code, out }));
  });
  const results = await Promise.all([boot(), boot(), boot()]);
  for (const { code } of results) assert.equal(code, 0);
  const [first, ...others] = results.map(({ out }) => JSON.parse(out));
  for (const other of others) assert.deepEqual(other, first);
  assert.deepEqual(readdirSync(folderOf(env)).sort(), [first.dir.split('/').at(-1), 'users'], 'no partial folder is left');
  assert.equal(spawnSync(first.command, ['-c', 'import pip']).status, 0);
});

// --- who may have written it (issue 25.6) ---

test('no reachable package index: the failure names what failed and the command that fixes it', () => {
  const env = offline();
  const root = fakePackage('1.0.0', ['surely-not-installed-rtb-dependency']);
  assert.throws(() => interpreter({ env, log: () => {}, root }), (error) => {
    assert.equal(error.name, 'EnvironmentUnavailable');
    assert.match(error.message, /installing the worker's Python packages \(surely-not-installed-rtb-dependency\) failed:/);
    assert.match(error.message, /No matching distribution|Could not find a version/);
    assert.match(error.message, /With network access, run `node .*node-shim\/setup\.js`/);
    return true;
  });
  assert.deepEqual(readdirSync(folderOf(env)), [], 'nothing half-made is left');
});

test('only a Python older than 3.10 on PATH: "needs Python >= 3.10"', () => {
  const bin = scratch('old-python');
  writeFileSync(join(bin, 'python3'), '#!/bin/sh\necho 3 9\n', { mode: 0o755 });
  const env = offline({ PATH: bin });
  assert.throws(() => workerInterpreter({ env, log: () => {}, root: fakePackage() }), /the worker needs Python >= 3\.10, but python3 is 3\.9\. Install Python >= 3\.10/);
});

test('no Python on PATH at all: the failure says so and how to install it', () => {
  const env = offline({ PATH: scratch('empty-path') });
  const { lines, log } = recorder();
  assert.throws(() => workerInterpreter({ env, log, root: fakePackage() }), /needs Python >= 3\.10 and none is on PATH \(tried python3, python, .*\)\. Install it/);
  assert.deepEqual(lines, [], 'nothing is announced that cannot be done');
});

test('a cache folder that cannot be created is reported with the way around it', () => {
  const blocker = join(scratch('blocked'), 'file');
  writeFileSync(blocker, '');
  const env = offline({ XDG_CACHE_HOME: blocker });
  assert.throws(() => workerInterpreter({ env, log: () => {}, root: fakePackage() }), /cannot create the worker environment's cache folder .* Set XDG_CACHE_HOME to a writable folder/);
});

test('a cache folder under /proc, where mkdir answers ENOENT, is reported, not retried for ever', { skip: !existsSync('/proc/self') && 'no /proc' }, () => {
  // In a child process: before, Node's recursive mkdir looped there, the CPU busy, until killed.
  const env = offline({ XDG_CACHE_HOME: '/proc/self/no-such-folder/cache' });
  const script = `import { workerInterpreter } from ${JSON.stringify(ENVIRONMENT_MODULE)};
    try { workerInterpreter({ root: ${JSON.stringify(fakePackage())}, log: () => {}, progress: 'ignore' }); } catch (error) { process.stdout.write(error.message); }`;
  const boot = spawnSync(process.execPath, ['--input-type=module', '-e', script], { env, encoding: 'utf8', timeout: 30_000 });
  assert.equal(boot.signal, null, 'it ended by itself');
  assert.match(boot.stdout, /cannot create the worker environment's cache folder \/proc\/self\/no-such-folder\/cache\/dsh-repeat-tool-breaker \(ENOENT\)\..* Set XDG_CACHE_HOME to a writable folder/);
});

// --- configurations accepted before (issue 24: the boot does not wait for Python) ---

test('a first boot installs only the worker\'s packages; the first rtb installs the rest, once, beside them (issue 31)', () => {
  const env = offline();
  // The worker needs nothing here; rtb needs pip (the one package installable offline).
  const root = fakePackage('1.0.0', ['pip'], []);
  const { lines, log } = recorder();
  const python = interpreter({ env, log, root });
  assert.match(lines[0], /venv \(python3?\) with \); this happens once/);
  const hasPip = (paths) => spawnSync(python.command, ['-c', 'import pip'], { env: { ...env, PYTHONPATH: paths } }).status === 0;
  assert.equal(hasPip(''), false, 'the boot installed nothing rtb alone needs');
  const first = recorder();
  const packages = rtbPackages(python, { env, log: first.log, root, progress: 'ignore' });
  assert.equal(packages, join(python.dir, 'rtb-packages'));
  assert.match(first.lines[0], /rtb needs pip besides the worker's packages: installing them into .*rtb-packages \(once\)/);
  assert.match(first.lines.at(-1), /^ready after \d+\.\d s$/);
  assert.equal(hasPip(packages), true);
  assert.equal(statMode(packages), 0o700);
  const again = recorder();
  assert.equal(rtbPackages(python, { env, log: again.log, root, progress: 'ignore' }), packages);
  assert.deepEqual(again.lines, [], 'installed once');
  // Another interpreter (RTB_PYTHON, the python key) is the user's to equip: nothing is installed.
  assert.equal(rtbPackages({ command: PYTHON, chosenBy: 'RTB_PYTHON' }, { env, log, root }), null);
  // This package itself: the worker's are msgpack and pydantic, rtb adds zstandard and pyyaml.
  const identity = packageIdentity();
  assert.deepEqual(identity.worker.map((text) => text.split(/[<>=]/)[0]), ['msgpack', 'pydantic']);
  assert.deepEqual(identity.later.map((text) => text.split(/[<>=]/)[0]), ['zstandard', 'pyyaml']);
});
