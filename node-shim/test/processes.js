// Process helpers shared by the shim's tests: which children exist, waiting for a condition, and
// what this process wrote to stderr.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

import { WorkerBridge } from '../worker/bridge.js';

const PACKAGE_ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const PYTHON = process.env.RTB_PYTHON || 'python3';

/**
 * A bridge to a worker of `command` (this checkout's, on the tests' Python by default), its closer
 * pushed to `closers`, and the lines it logs.
 * @param {(() => void)[]} closers
 */
export function testBridge(closers, { command = PYTHON, journal = undefined, restartPolicy = undefined } = {}) {
  /** @type {string[]} */
  const lines = [];
  const bridge = new WorkerBridge({
    command,
    args: ['-m', 'breaker.worker'],
    cwd: PACKAGE_ROOT,
    env: { ...process.env, PYTHONPATH: PACKAGE_ROOT },
    log: (line) => lines.push(line),
    replay: journal ? (agent) => journal.of(agent) : undefined,
    restartPolicy,
  });
  closers.push(() => bridge.close());
  return { bridge, lines };
}

/** Direct children of this process (Linux: every thread's children list; threads come and go). */
export function childPids() {
  return readdirSync('/proc/self/task').flatMap((task) => {
    try {
      return readFileSync(`/proc/self/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
    } catch {
      return [];
    }
  });
}

export function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls `predicate` every 10 ms; false when it did not hold within `timeoutMs`. */
export async function waitUntil(predicate, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

/** Every chunk written to this process's stderr while `run` runs (still passed through). */
export async function captureStderr(run) {
  const written = [];
  const write = process.stderr.write;
  process.stderr.write = function capture(chunk, ...rest) {
    written.push(String(chunk));
    return write.call(this, chunk, ...rest);
  };
  try {
    await run();
  } finally {
    process.stderr.write = write;
  }
  return written;
}

/** The settings a worker's configure reply carries for `config` (the shim's tables come from it). */
export function workerSettings(config = null) {
  const script = [
    'import json, sys',
    'from breaker.worker import RequestHandler',
    'from breaker.protocol import Configure',
    'reply = RequestHandler().handle(Configure(1, json.loads(sys.argv[1])))',
    'print(json.dumps(reply["settings"]))',
  ].join('\n');
  const run = spawnSync(process.env.RTB_PYTHON || 'python3', ['-c', script, JSON.stringify(config)], {
    cwd: PACKAGE_ROOT,
    env: { ...process.env, PYTHONPATH: PACKAGE_ROOT },
  });
  if (run.status !== 0) throw new Error(String(run.stderr));
  return JSON.parse(String(run.stdout));
}

/** A small seeded generator (mulberry32): the same seed, the same numbers in [0, 1), `int`s and
 * `pick`s, so a fuzz is deterministic. */
export function generator(seed) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (limit) => Math.floor(next() * limit), pick: (items) => items[Math.floor(next() * items.length)] };
}
