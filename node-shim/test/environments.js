// Helpers of the environment tests: fresh scratch folders, a package like this one with a
// dependency list of our choosing, and an environment whose pip installs offline.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';

import { workerInterpreter } from '../boot/environment.js';

export const PYTHON = process.env.RTB_PYTHON || 'python3';
export const ENVIRONMENT_MODULE = new URL('../boot/environment.js', import.meta.url).href;

/** Every folder a test made, removed when the file's tests end so /tmp keeps nothing of them. */
const scratchFolders = [];
after(() => {
  for (const folder of scratchFolders) rmSync(folder, { recursive: true, force: true });
});

export function scratch(prefix) {
  const folder = mkdtempSync(join(tmpdir(), `rtb-environment-${prefix}-`));
  scratchFolders.push(folder);
  return folder;
}

/**
 * A package root like this one, whose Python dependency list is only `pip` (or `dependencies`), of
 * which the worker's are `worker` (when given: [tool.dsh-repeat-tool-breaker] worker-dependencies).
 */
export function fakePackage(version = '1.0.0', dependencies = ['pip'], worker = undefined, pins = undefined) {
  const root = scratch('package');
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'dsh-repeat-tool-breaker', version }));
  const table = [
    ...(worker ? [`worker-dependencies = ${JSON.stringify(worker)}`] : []),
    ...(pins ? [`worker-pins = ${JSON.stringify(pins)}`] : []),
  ];
  writeFileSync(
    join(root, 'pyproject.toml'),
    `[project]\nname = "x"\ndependencies = [\n${dependencies.map((d) => `  "${d}",\n`).join('')}]\n` +
      (table.length ? `\n[tool.dsh-repeat-tool-breaker]\n${table.join('\n')}\n` : ''),
  );
  return root;
}

/** Where the base Python keeps the pip wheel ensurepip installs: pip's only package source here. */
export const BUNDLED_WHEELS = spawnSync(PYTHON, ['-c', 'import ensurepip, os; print(os.path.join(os.path.dirname(ensurepip.__file__), "_bundled"))'], {
  encoding: 'utf8',
}).stdout.trim();

/** An environment with the cache and home in fresh folders and pip kept off the network and config files. */
export function offline(extra = {}) {
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
export function interpreter(options) {
  return workerInterpreter({ progress: 'ignore', ...options });
}

export const folderOf = (env) => join(env.XDG_CACHE_HOME, 'dsh-repeat-tool-breaker');
export const environmentsIn = (folder) => readdirSync(folder).filter((name) => name.startsWith('py')).sort();

export function recorder() {
  const lines = [];
  const log = (line) => lines.push(line);
  return { lines, log };
}

export function statMode(path) {
  return statSync(path).mode & 0o777;
}

export const asRoot = process.getuid?.() === 0;
