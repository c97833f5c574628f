// @ts-check
// `npm run setup` (or `node node-shim/setup.js`): prepare the worker's environment now instead of
// at the first boot: a head start, or the fix after a first boot that could not prepare it
// (offline, say). Nothing is written into the package itself. Prints the worker's interpreter on
// stdout; what it does goes to stderr.
//
//   --force   prepare it again from nothing
//   --prune   remove the environments no installed copy of the plugin uses (every boot does this too)
//   --remove  remove every environment and the plugin's cache folders, the temporary ones too (uninstalling)
import {
  EnvironmentUnavailable,
  cacheFolder,
  pruneEnvironments,
  removeCacheFolders,
  rtbPackages,
  workerInterpreter,
} from './boot/environment.js';
import { chosenInterpreterProblem } from './boot/startup.js';

const PREFIX = 'repeat-tool-breaker setup: ';
function log(text) {
  console.error(`${PREFIX}${text}`);
}

const USAGE = `usage: node node-shim/setup.js [--force | --prune | --remove]
  (none)    prepare the worker's environment now and print its interpreter
  --force   prepare it again from nothing
  --prune   remove the environments no installed copy of the plugin uses
  --remove  remove every environment and the plugin's cache folders (uninstalling)`;

const flags = process.argv.slice(2);
if (flags.includes('--help') || flags.includes('-h')) {
  console.log(USAGE);
  process.exit(0);
}
const unknown = flags.filter((flag) => !['--force', '--prune', '--remove'].includes(flag));
if (unknown.length > 0) {
  // A mistyped --remove must not prepare an environment and exit 0 as if it had removed one.
  log(`unknown option ${unknown.join(' ')}: nothing was done\n${USAGE}`);
  process.exit(2);
}
if (new Set(flags).size > 1) {
  // --force --remove: which one was meant? Neither is done rather than the wrong one.
  log(`${[...new Set(flags)].join(' ')}: give one option at a time; nothing was done\n${USAGE}`);
  process.exit(2);
}
try {
  if (flags.includes('--remove')) {
    const folders = removeCacheFolders();
    log(folders.length ? `removed ${folders.join(', ')} and everything in it` : 'there is no cache folder to remove');
  } else if (flags.includes('--prune')) {
    const removed = pruneEnvironments();
    const { folder } = cacheFolder(process.env, { make: false });
    log(removed.length
      ? `removed ${removed.length} environment no installed copy uses: ${removed.join(', ')}`
      : `nothing to remove in ${folder}: every environment there is used`);
  } else {
    const python = workerInterpreter({ log, rebuild: flags.includes('--force'), prefix: PREFIX });
    if (python.chosenBy !== 'environment') {
      log(`${python.chosenBy} is set, so the worker runs it and no environment is prepared`);
      const problem = chosenInterpreterProblem(python); // what the boot would stop on
      if (problem) throw new EnvironmentUnavailable(problem);
    }
    rtbPackages(python, { log, prefix: PREFIX }); // ahead of time: what the first `rtb` would fetch too
    console.log(python.command);
  }
} catch (error) {
  if (!(error instanceof EnvironmentUnavailable)) throw error;
  log(error.message);
  process.exit(1);
}
