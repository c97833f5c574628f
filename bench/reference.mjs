// The in-process reference plugin the benchmarks compare against, dsh-repeat-tool-breaker@0.5.2
// (bench/run.sh installs it into a temporary folder), and the settings both plugins get.
import { pathToFileURL } from 'node:url';

// The seed's settings: a window of 12, caps of 5; the reference's advisories, failure track and
// host measure off, and no asking at a cap. Ours runs its own defaults (breaker/core/config/tables.py
// DEFAULTS: the same caps, and it reads results too), the settings a user who changes nothing gets.
export const REFERENCE_CONFIG = Object.freeze({
  window: 12,
  localHosts: 'deny',
  onLimit: 'deny',
  warnAt: null,
  summarizeAt: null,
  failWarnAt: null,
  failLimit: null,
  limits: { exact: 5, cmd: 5, net: 5, sink: 5, host: null },
});

/** The reference module from the path of its index.js, or a usage error naming `script`. */
export async function loadReference(referencePath, script) {
  if (!referencePath) throw new Error(`usage: node ${script} <path of the reference index.js> ...`);
  return import(pathToFileURL(referencePath).href);
}
