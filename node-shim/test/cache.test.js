// The cache of environments: what no installed copy uses is removed (and only that, across PID
// namespaces), the prune and remove commands, and a cache another user could change is not used.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import {
  environmentName,
  pruneEnvironments,
  removeCacheFolders,
} from '../boot/environment.js';
import { pidNamespace } from '../shared/owners.js';
import { privateFolder } from '../shared/private-folder.js';
import { scratch, fakePackage, offline, interpreter, folderOf, environmentsIn, recorder, statMode, asRoot, ENVIRONMENT_MODULE } from './environments.js';

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

test('setup.js refuses an option it does not know, or two options at once, doing nothing, and --help shows its options', () => {
  const env = offline();
  const setup = (...flags) => spawnSync(process.execPath, [new URL('../setup.js', import.meta.url).pathname, ...flags], { env, encoding: 'utf8' });
  const mistyped = setup('--remve');
  assert.equal(mistyped.status, 2);
  assert.equal(mistyped.stdout, '', 'no interpreter printed: none was prepared');
  assert.match(mistyped.stderr, /^repeat-tool-breaker setup: unknown option --remve: nothing was done\nusage: .*--remove/s);
  assert.ok(!existsSync(folderOf(env)), 'no environment prepared');
  const both = setup('--force', '--remove');
  assert.equal(both.status, 2);
  assert.equal(both.stdout, '', 'no interpreter printed: none was prepared');
  assert.match(both.stderr, /^repeat-tool-breaker setup: --force --remove: give one option at a time; nothing was done\nusage: /);
  assert.ok(!existsSync(folderOf(env)), 'no environment prepared');
  const help = setup('--help');
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^usage: node node-shim\/setup\.js \[--force \| --prune \| --remove\]\n/);
});

test('setup.js with RTB_PYTHON checks that interpreter imports the worker\'s packages, naming the fix, as a boot would', () => {
  // A Python that sees no site-packages (-S) lacks msgpack and pydantic, as a system Python may.
  const bare = join(scratch('bare-python'), 'python');
  writeFileSync(bare, '#!/bin/sh\nexec python3 -S "$@"\n', { mode: 0o755 });
  const env = { ...offline(), RTB_PYTHON: bare };
  const setup = spawnSync(process.execPath, [new URL('../setup.js', import.meta.url).pathname], { env, encoding: 'utf8' });
  assert.equal(setup.status, 1, setup.stderr);
  assert.equal(setup.stdout, '', 'no interpreter printed: the boot could not run it');
  assert.match(setup.stderr, /RTB_PYTHON is set, so the worker runs it and no environment is prepared\n/);
  assert.match(setup.stderr, /the Python worker cannot import (msgpack|pydantic) \(interpreter .*python from RTB_PYTHON\): run `.*python -m pip install "msgpack>=1\.0" "pydantic>=2\.5"/);
  // The same Python given modules of those names imports them: it is printed, as before.
  const modules = scratch('worker-modules');
  for (const name of ['msgpack', 'pydantic']) writeFileSync(join(modules, `${name}.py`), '');
  const given = join(scratch('given-python'), 'python');
  writeFileSync(given, `#!/bin/sh\nPYTHONPATH=${modules} exec python3 -S "$@"\n`, { mode: 0o755 });
  const good = spawnSync(process.execPath, [new URL('../setup.js', import.meta.url).pathname], { env: { ...offline(), RTB_PYTHON: given }, encoding: 'utf8' });
  assert.equal(good.status, 0, good.stderr);
  assert.equal(good.stdout, `${given}\n`);
});

test('`setup.js --remove` removes the private folder of the FIFOs once empty, in the temporary and the runtime folder; one in use stays', () => {
  const runtime = scratch('runtime');
  chmodSync(runtime, 0o700);
  const env = offline({ XDG_RUNTIME_DIR: runtime });
  const inTemporary = privateFolder(env.TMPDIR);
  const inRuntime = privateFolder(runtime);
  assert.ok(inTemporary && inRuntime);
  assert.deepEqual(removeCacheFolders(env).sort(), [inRuntime, inTemporary].sort());
  assert.ok(!existsSync(inTemporary) && !existsSync(inRuntime));
  const busy = privateFolder(env.TMPDIR);
  mkdirSync(join(busy, 'a-start'));
  assert.deepEqual(removeCacheFolders(env), [], 'a start making its FIFOs there: left alone');
  assert.ok(existsSync(join(busy, 'a-start')));
});

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
  assert.match(last.lines[0], /your private temporary folder: removed when the last dsh or rtb using it exits/);
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
  assert.deepEqual(readdirSync(nowhere.TMPDIR), ['dsh-repeat-tool-breaker-Ef34Gh'], 'ours gone, emptied; theirs left');
  assert.ok(!existsSync(own));
});

// A node process that finds (or prepares) the worker's environment as a boot does, prints its
// folder and, with `hold`, keeps it until its stdin ends; then it exits.
function booting(root, hold) {
  return `import { workerInterpreter } from ${JSON.stringify(ENVIRONMENT_MODULE)};
    const python = workerInterpreter({ log: () => {}, root: ${JSON.stringify(root)}, progress: 'ignore' });
    console.log(python.dir);
    if (${hold}) { process.stdin.resume(); process.stdin.on('end', () => process.exit(0)); }`;
}

test('an environment in the temporary folder is removed once the last process using it has exited, and by --remove (issue 40, finding 7)', async () => {
  const home = scratch('open-home');
  chmodSync(home, 0o775); // another member of its group can write it: its cache is not used
  const env = offline({ HOME: home, XDG_CACHE_HOME: join(home, '.cache') });
  const own = join(env.TMPDIR, `dsh-repeat-tool-breaker-${process.getuid()}`);
  const root = fakePackage('1.0.0', []);
  const holder = spawn(process.execPath, ['--input-type=module', '-e', booting(root, true)], { env, stdio: ['pipe', 'pipe', 'inherit'] });
  const [dir] = (await once(holder.stdout, 'data')).map((chunk) => chunk.toString().trim());
  assert.ok(dir.startsWith(join(own, 'environments')), dir);
  const other = spawnSync(process.execPath, ['--input-type=module', '-e', booting(root, false)], { env, encoding: 'utf8' });
  assert.equal(other.stdout.trim(), dir, 'a second boot reuses it while the first runs');
  assert.ok(existsSync(join(dir, 'bin')), 'kept while a process still uses it');
  holder.stdin.end();
  await once(holder, 'exit');
  assert.deepEqual(readdirSync(own), [], 'nothing is left once the last one has exited');
  // A boot killed before it could clean up leaves it: the next boot reuses it, --remove removes it.
  const killed = spawn(process.execPath, ['--input-type=module', '-e', booting(root, true)], { env, stdio: ['pipe', 'pipe', 'inherit'] });
  await once(killed.stdout, 'data');
  killed.kill('SIGKILL');
  await once(killed, 'exit');
  assert.equal(environmentsIn(join(own, 'environments')).length, 1);
  const removed = spawnSync(process.execPath, [new URL('../setup.js', import.meta.url).pathname, '--remove'], { env, encoding: 'utf8' });
  assert.equal(removed.status, 0, removed.stderr);
  assert.ok(!existsSync(own), 'the private folder too, once emptied');
});
