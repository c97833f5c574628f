// @ts-check
// This package as the shim sees it: where its Python code is, its identity (name, version, Python
// dependency list), and the error that says an environment to run it cannot be had.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The directory holding `breaker/` and pyproject.toml: the Python code shipped with this module. */
export const PACKAGE_ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
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
 * The strings of `[project].dependencies` in a pyproject.toml text. Reads only that one array of
 * plain strings (what this package writes there), and refuses anything else rather than guess.
 */
export function readDependencies(pyproject) {
  const unreadable = (why) => new EnvironmentUnavailable(`cannot read [project].dependencies of pyproject.toml: ${why}`);
  const lines = pyproject.split(/\r?\n/);
  const start = lines.findIndex((line) => /^\s*\[project\]\s*(#.*)?$/.test(line));
  if (start < 0) throw unreadable('no [project] table');
  const end = lines.findIndex((line, index) => index > start && /^\s*\[/.test(line));
  const table = lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
  const opening = /^\s*dependencies\s*=\s*\[/m.exec(table);
  if (!opening) throw unreadable('no dependencies key');
  const dependencies = [];
  let index = opening.index + opening[0].length;
  for (;;) {
    const token = /\s*(?:#[^\n]*\s*)*/y;
    token.lastIndex = index;
    index += token.exec(table)[0].length;
    const quote = table[index];
    if (quote === ']') return dependencies;
    if (quote !== '"' && quote !== "'") throw unreadable(`unexpected ${JSON.stringify(table.slice(index, index + 20))}`);
    const close = table.indexOf(quote, index + 1);
    const text = close < 0 ? '' : table.slice(index + 1, close);
    if (close < 0 || text.includes('\n') || (quote === '"' && text.includes('\\'))) {
      throw unreadable(`an unterminated or escaped string near ${JSON.stringify(table.slice(index, index + 20))}`);
    }
    dependencies.push(text);
    const separator = /\s*(?:#[^\n]*\s*)*(,|\])/y;
    separator.lastIndex = close + 1;
    const found = separator.exec(table);
    if (!found) throw unreadable(`expected , or ] after ${JSON.stringify(text)}`);
    if (found[1] === ']') return dependencies;
    index = separator.lastIndex;
  }
}

/** This package's version and Python runtime dependencies: what identifies its environment. */
export function packageIdentity(root = PACKAGE_ROOT) {
  const { name, version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const dependencies = readDependencies(readFileSync(join(root, 'pyproject.toml'), 'utf8'));
  return { name, version, dependencies };
}

/** What an environment is made for, besides its interpreter: a digest of the dependency list. */
export function dependencyDigest(dependencies) {
  return createHash('sha256').update(JSON.stringify(dependencies)).digest('hex').slice(0, 12);
}
