// Install step: give the package a private Python environment for its worker.
//
// Runs as the package's `postinstall` (and as `npm run setup`). It creates `<package>/.venv`
// and installs the package's own pyproject.toml into it, so the Python dependencies are
// declared in one place. Set RTB_PYTHON to use another interpreter instead; the plugin then
// checks that interpreter when dsh boots.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MINIMUM_PYTHON = [3, 10];
const packageRoot = dirname(dirname(fileURLToPath(import.meta.url)));
const venvDir = join(packageRoot, '.venv');
const venvPython = process.platform === 'win32'
  ? join(venvDir, 'Scripts', 'python.exe')
  : join(venvDir, 'bin', 'python');
const force = process.argv.includes('--force');

function fail(message) {
  console.error(`repeat-tool-breaker setup: ${message}`);
  process.exit(1);
}

function run(command, args) {
  return spawnSync(command, args, { cwd: packageRoot, encoding: 'utf8' });
}

function pythonVersion(command) {
  const probe = run(command, ['-c', 'import sys; print(*sys.version_info[:2])']);
  if (probe.error || probe.status !== 0) return null;
  return probe.stdout.trim().split(' ').map(Number);
}

function hasWorkerDependencies(python) {
  return run(python, ['-c', 'import msgpack, anyio, pydantic']).status === 0;
}

if (process.env.RTB_PYTHON) {
  console.log(`repeat-tool-breaker setup: RTB_PYTHON=${process.env.RTB_PYTHON}; no virtual environment made`);
  process.exit(0);
}
if (!force && existsSync(venvPython) && hasWorkerDependencies(venvPython)) {
  process.exit(0);
}

const candidates = ['python3', 'python'];
const interpreter = candidates.find((command) => pythonVersion(command) !== null);
if (!interpreter) {
  fail(
    `no Python interpreter found on PATH (tried ${candidates.join(', ')}). The breaker's worker needs ` +
    `Python >= ${MINIMUM_PYTHON.join('.')}: install it (Debian/Ubuntu: apt-get install python3 python3-venv), ` +
    `then run \`npm run setup --prefix ${packageRoot}\`, or set RTB_PYTHON to an interpreter that has ` +
    'msgpack, anyio and pydantic.',
  );
}
const [major, minor] = pythonVersion(interpreter);
if (major < MINIMUM_PYTHON[0] || (major === MINIMUM_PYTHON[0] && minor < MINIMUM_PYTHON[1])) {
  fail(
    `${interpreter} is Python ${major}.${minor}; the worker needs >= ${MINIMUM_PYTHON.join('.')}. ` +
    `Install a newer Python and run \`npm run setup --prefix ${packageRoot}\`, or set RTB_PYTHON to one.`,
  );
}

const venv = run(interpreter, ['-m', 'venv', '--clear', venvDir]);
if (venv.status !== 0) {
  fail(
    `\`${interpreter} -m venv ${venvDir}\` failed:\n${venv.stderr || venv.stdout}\n` +
    'On Debian/Ubuntu the venv module is a separate package: apt-get install python3-venv, ' +
    `then run \`npm run setup --prefix ${packageRoot}\`.`,
  );
}
const install = run(venvPython, [
  '-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-input', packageRoot,
]);
if (install.status !== 0) {
  fail(
    `installing the Python package into ${venvDir} failed:\n${install.stderr || install.stdout}\n` +
    `Fix the cause above and run \`npm run setup --prefix ${packageRoot}\`.`,
  );
}
console.log(`repeat-tool-breaker setup: worker environment ready at ${venvDir}`);
