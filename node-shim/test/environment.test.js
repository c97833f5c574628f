// The worker's environment: where it lives, when it is reused and shared, when it is removed, when
// it is not trusted, how it is prepared and how a preparation that cannot succeed says so.
// Preparations here are real venvs: most with an empty dependency list (a venv, no pip run), some
// installing `pip` from the wheel Python's own ensurepip bundles, with the package index switched
// off, so they need no network; the compat harness prepares the real dependency list against a
// real dsh.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import test, { after } from 'node:test';

import {
  PACKAGE_ROOT,
  acceptedSettings,
  cacheHome,
  environmentName,
  packageIdentity,
  pruneEnvironments,
  bytecodeFolder,
  pythonEnvironment,
  readDependencies,
  rememberAccepted,
  removeCacheFolders,
  workerInterpreter,
} from '../environment.js';
import { pidNamespace } from '../owners.js';

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

/** A package root like this one, whose Python dependency list is only `pip` (or `dependencies`). */
function fakePackage(version = '1.0.0', dependencies = ['pip']) {
  const root = scratch('package');
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'dsh-repeat-tool-breaker', version }));
  writeFileSync(
    join(root, 'pyproject.toml'),
    `[project]\nname = "x"\ndependencies = [\n${dependencies.map((d) => `  "${d}",\n`).join('')}]\n`,
  );
  return root;
}

/** Where the base Python keeps the pip wheel ensurepip installs: pip's only package source here. */
const BUNDLED_WHEELS = spawnSync(PYTHON, ['-c', 'import ensurepip, os; print(os.path.join(os.path.dirname(ensurepip.__file__), "_bundled"))'], {
  encoding: 'utf8',
}).stdout.trim();

/** An environment with the cache and home in fresh folders and pip kept off the network and config files. */
function offline(extra = {}) {
  const env = {
    ...process.env,
    XDG_CACHE_HOME: scratch('cache'),
    HOME: scratch('home'),
    TMPDIR: scratch('tmp'),
    PIP_NO_INDEX: '1',
    PIP_CONFIG_FILE: '/dev/null',
    PIP_FIND_LINKS: BUNDLED_WHEELS,
    ...extra,
  };
  delete env.RTB_PYTHON;
  return env;
}

/** workerInterpreter with the progress lines kept out of the test's output. */
function interpreter(options) {
  return workerInterpreter({ progress: 'ignore', ...options });
}

const folderOf = (env) => join(env.XDG_CACHE_HOME, 'dsh-repeat-tool-breaker');
const environmentsIn = (folder) => readdirSync(folder).filter((name) => name.startsWith('py')).sort();

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

test('an environment is named by its Python and its dependency list, not the package version', () => {
  const base = environmentName([3, 11], ['a>=1', 'b']);
  assert.match(base, /^py3\.11-[0-9a-f]{12}$/);
  assert.equal(environmentName([3, 11], ['a>=1', 'b']), base);
  assert.notEqual(environmentName([3, 12], ['a>=1', 'b']), base);
  assert.notEqual(environmentName([3, 11], ['a>=2', 'b']), base);
  assert.notEqual(environmentName([3, 11], ['a>=1', 'b', 'c']), base);
  assert.deepEqual(packageIdentity().dependencies, readDependencies(readFileSync(join(PACKAGE_ROOT, 'pyproject.toml'), 'utf8')));
});

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

test('an environment no installed copy uses is removed at the next boot, and only that', () => {
  const env = offline();
  const log = () => {};
  const root = fakePackage('1.0.0', []);
  const other = fakePackage('2.0.0', ['pip']);
  const old = interpreter({ env, log, root });
  const kept = interpreter({ env, log, root: other });
  const folder = folderOf(env);
  mkdirSync(join(folder, 'not-ours'));
  mkdirSync(join(folder, '0.0.9-0123456789ab')); // the name an earlier version gave its environment
  const gone = spawnSync('true').pid; // a pid that no longer runs, in this PID namespace
  mkdirSync(join(folder, `py3.11-0123456789ab.partial-${gone}@${pidNamespace()}-00ff`)); // a preparation that died
  // Preparations of another PID namespace (a container sharing the cache: its pids mean nothing
  // here), and of an earlier version that did not name its namespace: kept while they may be at
  // work, removed once idle for longer than any preparation takes.
  const foreign = [`py3.11-0123456789ab.partial-${gone}@0badf00d-01ff`, `py3.11-0123456789ab.partial-${gone}-02ff`];
  const idle = [`py3.11-0123456789ab.partial-${gone}@0badf00d-03ff`, `py3.11-0123456789ab.pruning-${gone}-04ff`];
  for (const name of [...foreign, ...idle]) mkdirSync(join(folder, name));
  const hourAgo = new Date(Date.now() - 3_600_000);
  for (const name of idle) utimesSync(join(folder, name), hourAgo, hourAgo);
  // An upgrade in place: the same folder, a new dependency list.
  writeFileSync(join(root, 'pyproject.toml'), '[project]\nname = "x"\ndependencies = ["pip>=1"]\n');
  const { lines, log: logged } = recorder();
  const upgraded = interpreter({ env, log: logged, root });
  assert.notEqual(upgraded.dir, old.dir);
  assert.match(lines.at(-1), /removed 5 no installed copy uses/);
  assert.ok(!existsSync(old.dir), 'the environment of the old dependency list is gone');
  assert.ok(existsSync(kept.command), 'the other copy keeps its environment');
  const environments = [upgraded.dir, kept.dir].map((dir) => dir.split('/').at(-1));
  assert.deepEqual(readdirSync(folder).sort(), [...environments, 'not-ours', 'users', ...foreign].sort());
  for (const name of foreign) rmSync(join(folder, name), { recursive: true });
  // An uninstalled copy: its environment goes at the next boot of any other.
  rmSync(other, { recursive: true });
  interpreter({ env, log, root });
  assert.ok(!existsSync(kept.dir));
  assert.deepEqual(environmentsIn(folder), [upgraded.dir.split('/').at(-1)]);
  assert.deepEqual(pruneEnvironments({ env }), [], 'nothing else is unused');
});

test('the prune and remove commands: `node setup.js --prune`, `--remove`', () => {
  const env = offline();
  const root = fakePackage('1.0.0', []);
  interpreter({ env, log: () => {}, root });
  const setup = (flag) => spawnSync(process.execPath, [new URL('../setup.js', import.meta.url).pathname, flag], { env, encoding: 'utf8' });
  rmSync(root, { recursive: true });
  const pruned = setup('--prune');
  assert.equal(pruned.status, 0, pruned.stderr);
  assert.match(pruned.stderr, /removed 1 environment no installed copy uses: py3\.\d+-[0-9a-f]{12}/);
  assert.deepEqual(environmentsIn(folderOf(env)), []);
  const removed = setup('--remove');
  assert.equal(removed.status, 0, removed.stderr);
  assert.match(removed.stderr, /removed .*dsh-repeat-tool-breaker and everything in it/);
  assert.ok(!existsSync(folderOf(env)));
  assert.deepEqual(removeCacheFolders(env), []);
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

test('the cache folder is private: made 700, and one of ours found open is closed', () => {
  const env = offline();
  const first = interpreter({ env, log: () => {}, root: fakePackage('1.0.0', []) });
  const folder = folderOf(env);
  assert.equal(statMode(folder), 0o700);
  assert.equal(statMode(first.dir), 0o700);
  chmodSync(folder, 0o755); // as earlier versions made it
  const { lines, log } = recorder();
  assert.deepEqual(interpreter({ env, log, root: fakePackage('1.0.0', []) }), first);
  assert.deepEqual(lines, []);
  assert.equal(statMode(folder), 0o700);
});

function statMode(path) {
  return statSync(path).mode & 0o777;
}

const asRoot = process.getuid?.() === 0;

test('an environment that is a symbolic link, or writable by others, is never run: it is prepared again', () => {
  const env = offline();
  const root = fakePackage('1.0.0', []);
  const first = interpreter({ env, log: () => {}, root });
  const elsewhere = join(scratch('planted'), 'env');
  renameSync(first.dir, elsewhere);
  symlinkSync(elsewhere, first.dir);
  const { lines, log } = recorder();
  const again = interpreter({ env, log, root });
  assert.equal(again.dir, first.dir);
  assert.match(lines[0], /not running the worker environment .*py3\.\d+-[0-9a-f]{12}: .* is a symbolic link; it is removed and prepared again/);
  assert.ok(existsSync(join(elsewhere, 'bin')), 'the link is removed, not what it points to');
  chmodSync(join(again.dir, 'bin'), 0o777);
  const writable = recorder();
  interpreter({ env, log: writable.log, root });
  assert.match(writable.lines[0], /bin can be written by its group and others \(mode 777\); it is removed and prepared again/);
});

test("another user's cache folder, or a cache others can write, is not used: a private one is, with one line saying why", { skip: !asRoot && 'needs root to give a folder to another uid' }, () => {
  const shared = scratch('shared-cache');
  chmodSync(shared, 0o777); // world-writable, no sticky bit: anyone could swap what is in it
  const env = offline({ XDG_CACHE_HOME: shared });
  const { lines, log } = recorder();
  const chosen = interpreter({ env, log, root: fakePackage('1.0.0', []) });
  assert.match(lines[0], new RegExp(`not using the worker environments in ${shared}/dsh-repeat-tool-breaker: ${shared} can be written by its group and others \\(mode 777\\); using ${env.HOME}/.cache/dsh-repeat-tool-breaker instead`));
  assert.ok(chosen.dir.startsWith(join(env.HOME, '.cache', 'dsh-repeat-tool-breaker')));
  assert.ok(!existsSync(join(shared, 'dsh-repeat-tool-breaker')), 'nothing is made in the shared folder');

  // A planted environment in a folder of another uid: never run, whatever it holds.
  const theirs = scratch('their-cache');
  const planted = join(theirs, 'dsh-repeat-tool-breaker');
  mkdirSync(planted);
  const name = environmentName(chosen.dir.split('/').at(-1).slice(2).split('-')[0].split('.'), []);
  spawnSync('cp', ['-a', chosen.dir, join(planted, name)]);
  spawnSync('chown', ['-R', '12345:12345', planted]);
  const foreign = offline({ XDG_CACHE_HOME: theirs });
  const seen = recorder();
  const used = interpreter({ env: foreign, log: seen.log, root: fakePackage('1.0.0', []) });
  assert.match(seen.lines[0], /dsh-repeat-tool-breaker belongs to another user \(uid 12345\)/);
  assert.ok(!used.dir.startsWith(theirs), used.dir);
  // Neither home nor cache safe: this user's private temporary folder, reused by the next boot,
  // and found by `--remove` (issue 32: a new 42 MB venv was left there at every boot).
  const nowhere = offline({ XDG_CACHE_HOME: theirs, HOME: shared });
  const last = recorder();
  const root = fakePackage('1.0.0', []);
  const temporary = interpreter({ env: nowhere, log: last.log, root });
  assert.match(last.lines[0], /your private temporary folder: reused until the system clears it/);
  const own = join(nowhere.TMPDIR, `dsh-repeat-tool-breaker-${process.getuid()}`);
  assert.ok(temporary.dir.startsWith(join(own, 'environments')), temporary.dir);
  assert.equal(statSync(own).mode & 0o777, 0o700);
  const next = recorder();
  assert.equal(interpreter({ env: nowhere, log: next.log, root }).dir, temporary.dir, 'reused');
  assert.ok(next.lines.every((line) => !/preparing/.test(line)), next.lines.join('\n'));
  // A per-boot folder an earlier version left there, and another user's look-alike.
  mkdirSync(join(nowhere.TMPDIR, 'dsh-repeat-tool-breaker-Ab12Cd'), { mode: 0o700 });
  mkdirSync(join(nowhere.TMPDIR, 'dsh-repeat-tool-breaker-Ef34Gh'), { mode: 0o700 });
  chownSync(join(nowhere.TMPDIR, 'dsh-repeat-tool-breaker-Ef34Gh'), 12345, 12345);
  const removed = spawnSync(process.execPath, [new URL('../setup.js', import.meta.url).pathname, '--remove'], { env: nowhere, encoding: 'utf8' });
  assert.equal(removed.status, 0, removed.stderr);
  assert.match(removed.stderr, /removed .*environments.*dsh-repeat-tool-breaker-Ab12Cd/);
  assert.deepEqual(readdirSync(nowhere.TMPDIR).sort(), [`dsh-repeat-tool-breaker-${process.getuid()}`, 'dsh-repeat-tool-breaker-Ef34Gh'].sort());
  assert.deepEqual(readdirSync(own), []);
});

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

// --- configurations accepted before (issue 24: the boot does not wait for Python) ---

test('a configuration accepted before is sent known, and still waited for: a worker that cannot start fails the boot (issue 32)', { skip: !process.env.RTB_PYTHON && 'needs RTB_PYTHON: a Python with the worker\'s packages' }, () => {
  const env = offline();
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
    const dispose = apply(dsh.ctx, ${JSON.stringify(config)});
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
  // The same change seen by another process, as by this one (the digest is read afresh each time).
  writeFileSync(join(root, 'breaker', 'core', 'urls.py'), 'FOLD = 2\n');
  const later = spawnSync(process.execPath, ['--input-type=module', '-e', `
    import { acceptedSettings } from ${JSON.stringify(ENVIRONMENT_MODULE)};
    console.log(JSON.stringify(acceptedSettings(${JSON.stringify(dir)}, ${JSON.stringify(config)}, ${JSON.stringify(root)}) ?? null));`], { encoding: 'utf8' });
  assert.equal(later.status, 0, later.stderr);
  assert.equal(later.stdout.trim(), 'null', 'a core module changed: the worker must decide again');
});

test('a worker started after the package changed in place keeps its compiled modules apart from the old code\'s (issue 32)', { skip: !process.env.RTB_PYTHON && 'needs RTB_PYTHON: a Python with the worker\'s packages' }, async () => {
  const { workerOptions } = await import('../index.js');
  const { WorkerBridge } = await import('../bridge.js');
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
    const module = join(root, 'breaker', 'core', 'urls.py');
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
