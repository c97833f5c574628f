// The worker's environment: where it lives, when it is reused, how it is prepared and how a
// preparation that cannot succeed says so. Preparations here install only `pip` (already in every
// fresh venv) with the package index switched off, so they are real but need no network; the
// compat harness prepares the real dependency list against a real dsh.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { after } from 'node:test';

import {
  PACKAGE_ROOT,
  cacheHome,
  environmentDir,
  packageIdentity,
  pythonEnvironment,
  readDependencies,
  workerInterpreter,
} from '../environment.js';

const PYTHON = process.env.RTB_PYTHON || 'python3';
const ENVIRONMENT_MODULE = new URL('../environment.js', import.meta.url).href;

/** Every folder a test made, removed when the file's tests end so /tmp keeps nothing of them. */
const scratchFolders = [];
after(() => {
  for (const folder of scratchFolders) rmSync(folder, { recursive: true, force: true });
});

function scratch(prefix) {
  const folder = mkdtempSync(join(tmpdir(), `rtb-environment-${prefix}-`));
  scratchFolders.push(folder);
  return folder;
}

/** A package root like this one, whose Python dependency list is only `pip`. */
function fakePackage(version = '1.0.0', dependencies = ['pip']) {
  const root = scratch('package');
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'dsh-repeat-tool-breaker', version }));
  writeFileSync(
    join(root, 'pyproject.toml'),
    `[project]\nname = "x"\ndependencies = [\n${dependencies.map((d) => `  "${d}",\n`).join('')}]\n`,
  );
  return root;
}

/** An environment with the cache in a fresh folder and pip kept off the network and config files. */
function offline(extra = {}) {
  const env = { ...process.env, XDG_CACHE_HOME: scratch('cache'), PIP_NO_INDEX: '1', PIP_CONFIG_FILE: '/dev/null', ...extra };
  delete env.RTB_PYTHON;
  delete env.PIP_FIND_LINKS;
  return env;
}

function recorder() {
  const lines = [];
  const log = (line) => lines.push(line);
  return { lines, log };
}

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

test('the environment is keyed by the version and the dependency list', () => {
  const env = { XDG_CACHE_HOME: '/c' };
  const base = environmentDir({ version: '1.0.0', dependencies: ['a>=1', 'b'] }, env);
  assert.match(base, /^\/c\/dsh-repeat-tool-breaker\/1\.0\.0-[0-9a-f]{12}$/);
  assert.equal(environmentDir({ version: '1.0.0', dependencies: ['a>=1', 'b'] }, env), base);
  assert.notEqual(environmentDir({ version: '1.0.1', dependencies: ['a>=1', 'b'] }, env), base);
  assert.notEqual(environmentDir({ version: '1.0.0', dependencies: ['a>=2', 'b'] }, env), base);
  assert.notEqual(environmentDir({ version: '1.0.0', dependencies: ['a>=1', 'b', 'c'] }, env), base);
  assert.deepEqual(packageIdentity().dependencies, readDependencies(readFileSync(join(PACKAGE_ROOT, 'pyproject.toml'), 'utf8')));
});

test("Python runs this package's own breaker/ first", () => {
  assert.equal(pythonEnvironment({ PYTHONPATH: '/elsewhere' }, '/pkg').PYTHONPATH, '/pkg:/elsewhere');
  assert.equal(pythonEnvironment({ HOME: '/h' }, '/pkg').PYTHONPATH, '/pkg');
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
  const first = workerInterpreter({ env, log, root });
  assert.equal(first.chosenBy, 'environment');
  assert.equal(first.dir, environmentDir(packageIdentity(root), env));
  assert.equal(first.command, join(first.dir, 'bin', 'python'));
  assert.equal(lines.length, 2, lines.join('\n'));
  assert.match(lines[0], /no worker environment for dsh-repeat-tool-breaker 1\.0\.0 yet: preparing .* \(a Python 3\.\d+ venv \(python3?\) with pip\)/);
  assert.match(lines[1], /^worker environment ready after \d+\.\d s$/);
  const marker = JSON.parse(readFileSync(join(first.dir, 'rtb-environment.json'), 'utf8'));
  assert.deepEqual([marker.version, marker.dependencies], ['1.0.0', ['pip']]);
  assert.equal(spawnSync(first.command, ['-c', 'import pip']).status, 0);
  assert.deepEqual(workerInterpreter({ env, log, root }), first);
  assert.equal(lines.length, 2, 'a ready environment is not announced again');
  assert.deepEqual(readdirSync(join(env.XDG_CACHE_HOME, 'dsh-repeat-tool-breaker')), [`1.0.0-${first.dir.split('-').at(-1)}`]);
});

test('an environment whose Python has gone is prepared again', () => {
  const root = fakePackage();
  const env = offline();
  const first = workerInterpreter({ env, log: () => {}, root });
  rmSync(first.command);
  const { lines, log } = recorder();
  assert.deepEqual(workerInterpreter({ env, log, root }), first);
  assert.match(lines[0], /no longer has a working Python: preparing it again/);
  assert.equal(spawnSync(first.command, ['-c', 'import pip']).status, 0);
});

test('an upgrade with another dependency list gets a fresh environment and leaves the old one', () => {
  const env = offline();
  const log = () => {};
  const old = workerInterpreter({ env, log, root: fakePackage('1.0.0', ['pip']) });
  const upgraded = workerInterpreter({ env, log, root: fakePackage('1.1.0', ['pip', 'pip>=1']) });
  assert.notEqual(upgraded.dir, old.dir);
  assert.ok(existsSync(old.command) && existsSync(upgraded.command));
});

test('boots preparing at once leave one complete environment and both use it', async () => {
  const root = fakePackage();
  const env = offline();
  const script = `import { workerInterpreter } from ${JSON.stringify(ENVIRONMENT_MODULE)};
    process.stdout.write(JSON.stringify(workerInterpreter({ root: ${JSON.stringify(root)}, log: () => {} })));`;
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
  assert.deepEqual(readdirSync(join(env.XDG_CACHE_HOME, 'dsh-repeat-tool-breaker')).length, 1, 'no partial folder is left');
  assert.equal(spawnSync(first.command, ['-c', 'import pip']).status, 0);
});

test('no reachable package index: the failure names what failed and the command that fixes it', () => {
  const env = offline();
  const root = fakePackage('1.0.0', ['surely-not-installed-rtb-dependency']);
  assert.throws(() => workerInterpreter({ env, log: () => {}, root }), (error) => {
    assert.equal(error.name, 'EnvironmentUnavailable');
    assert.match(error.message, /installing the worker's Python packages \(surely-not-installed-rtb-dependency\) failed:/);
    assert.match(error.message, /No matching distribution|Could not find a version/);
    assert.match(error.message, /With network access, run `node .*node-shim\/setup\.js`/);
    return true;
  });
  assert.deepEqual(readdirSync(join(env.XDG_CACHE_HOME, 'dsh-repeat-tool-breaker')), [], 'nothing half-made is left');
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
