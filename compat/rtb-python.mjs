// @ts-check
// The Python `rtb` runs in, for compat/demo.sh, which reads dsh's session logs in it: the plugin's
// own environment (prepared now if it is not yet) with the packages only rtb uses. Prints two
// lines: the interpreter, then what to put on PYTHONPATH for those packages (empty when nothing).
// What it does goes to stderr; exit 1, naming the fix, when no environment can be had.
import { EnvironmentUnavailable, rtbPackages, workerInterpreter } from '../node-shim/boot/environment.js';

const PREFIX = 'demo: ';
/** @param {string} text */
function log(text) {
  process.stderr.write(`${PREFIX}${text}\n`);
}

try {
  const python = workerInterpreter({ log, prefix: PREFIX });
  const packages = rtbPackages(python, { log, prefix: PREFIX });
  process.stdout.write(`${python.command}\n${packages ?? ''}\n`);
} catch (error) {
  if (!(error instanceof EnvironmentUnavailable)) throw error;
  log(error.message);
  process.exit(1);
}
