// @ts-check
// This package as the shim sees it: where its Python code is, its identity (name, version, Python
// dependency list), and the error that says an environment to run it cannot be had.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The directory holding `breaker/` and pyproject.toml: the Python code shipped with this module. */
export const PACKAGE_ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
export const MINIMUM_PYTHON = [3, 10];
export const minimum = MINIMUM_PYTHON.join('.');
/** `npm run setup`: what a failure's fix names. */
export const SETUP_SCRIPT = join(PACKAGE_ROOT, 'node-shim', 'setup.js');

/** The environment could not be found or prepared; the message names the fix. */
export class EnvironmentUnavailable extends Error {
  constructor(message) {
    super(message);
    this.name = 'EnvironmentUnavailable';
  }
}

/**
 * The strings of the array `key` of the table `table` in a pyproject.toml text, or undefined when
 * the table has no such key and `optional`. Reads only one array of plain strings (what this
 * package writes there), and refuses anything else rather than guess.
 */
function readStrings(pyproject, table, key, { optional = false } = {}) {
  const unreadable = (why) => new EnvironmentUnavailable(`cannot read [${table}].${key} of pyproject.toml: ${why}`);
  const lines = pyproject.split(/\r?\n/);
  const header = `[${table}]`;
  const start = lines.findIndex((line) => line.trim().replace(/\s*#.*$/, '') === header);
  if (start < 0 && optional) return undefined;
  if (start < 0) throw unreadable(`no ${header} table`);
  const end = lines.findIndex((line, index) => index > start && /^\s*\[/.test(line));
  const body = lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
  const opening = new RegExp(`^\\s*${key}\\s*=\\s*\\[`, 'm').exec(body);
  if (!opening && optional) return undefined;
  if (!opening) throw unreadable(`no ${key} key`);
  const strings = [];
  let index = opening.index + opening[0].length;
  for (;;) {
    const token = /\s*(?:#[^\n]*\s*)*/y;
    token.lastIndex = index;
    index += token.exec(body)[0].length;
    const quote = body[index];
    if (quote === ']') return strings;
    if (quote !== '"' && quote !== "'") throw unreadable(`unexpected ${JSON.stringify(body.slice(index, index + 20))}`);
    const close = body.indexOf(quote, index + 1);
    const text = close < 0 ? '' : body.slice(index + 1, close);
    if (close < 0 || text.includes('\n') || (quote === '"' && text.includes('\\'))) {
      throw unreadable(`an unterminated or escaped string near ${JSON.stringify(body.slice(index, index + 20))}`);
    }
    strings.push(text);
    const separator = /\s*(?:#[^\n]*\s*)*(,|\])/y;
    separator.lastIndex = close + 1;
    const found = separator.exec(body);
    if (!found) throw unreadable(`expected , or ] after ${JSON.stringify(text)}`);
    if (found[1] === ']') return strings;
    index = separator.lastIndex;
  }
}

/** `[project].dependencies` of a pyproject.toml text: every Python package the package needs. */
export function readDependencies(pyproject) {
  return readStrings(pyproject, 'project', 'dependencies');
}

/** The name a requirement is for (`pydantic>=2.5` → `pydantic`), normalised as pip compares names. */
export function requirementName(requirement) {
  return (/^\s*([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(requirement)?.[1] ?? requirement).toLowerCase().replace(/[-_.]+/g, '-');
}

/**
 * Of `dependencies`, those the worker imports: the names `[tool.dsh-repeat-tool-breaker]
 * worker-dependencies` lists (the rest only `rtb` uses); all of them when there is no such list.
 */
export function readWorkerDependencies(pyproject, dependencies = readDependencies(pyproject)) {
  const names = readStrings(pyproject, 'tool.dsh-repeat-tool-breaker', 'worker-dependencies', { optional: true });
  if (names === undefined) return dependencies;
  const wanted = new Set(names.map(requirementName));
  const worker = dependencies.filter((requirement) => wanted.has(requirementName(requirement)));
  if (worker.length !== wanted.size) {
    throw new EnvironmentUnavailable(
      `cannot read [tool.dsh-repeat-tool-breaker].worker-dependencies of pyproject.toml: each of ${names.join(', ')} ` +
        'must name one of [project].dependencies',
    );
  }
  return worker;
}

/**
 * This package's version and Python runtime dependencies (what identifies its environment), and
 * of those the worker's (`worker`: what a first boot installs) and the rest (`later`: what only
 * `rtb` uses, installed by the first `rtb`); `pinned`, the worker's packages and what they need at
 * one exact version each (`[tool.dsh-repeat-tool-breaker] worker-pins`, empty without it): the
 * wheels a first boot fetches at once when it can.
 */
export function packageIdentity(root = PACKAGE_ROOT) {
  const { name, version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const pyproject = readFileSync(join(root, 'pyproject.toml'), 'utf8');
  const dependencies = readDependencies(pyproject);
  const worker = readWorkerDependencies(pyproject, dependencies);
  const pinned = readStrings(pyproject, 'tool.dsh-repeat-tool-breaker', 'worker-pins', { optional: true }) ?? [];
  const unpinned = pinned.find((pin) => !/^[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9.+!_-]+$/.test(pin));
  if (unpinned !== undefined) {
    throw new EnvironmentUnavailable(
      `cannot read [tool.dsh-repeat-tool-breaker].worker-pins of pyproject.toml: ${JSON.stringify(unpinned)} is not name==version`,
    );
  }
  return { name, version, dependencies, worker, later: dependencies.filter((requirement) => !worker.includes(requirement)), pinned };
}

/** What an environment is made for, besides its interpreter: a digest of the dependency list. */
export function dependencyDigest(dependencies) {
  return createHash('sha256').update(JSON.stringify(dependencies)).digest('hex').slice(0, 12);
}
