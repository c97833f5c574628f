// `npm run setup` (or `node node-shim/setup.js [--force]`): prepare the worker's environment now
// instead of at the first boot: a head start, or the fix after a first boot that could not
// prepare it (offline, say). `--force` rebuilds it. Nothing is written into the package itself.
// Prints the worker's interpreter on stdout; what it does goes to stderr.
import { EnvironmentUnavailable, workerInterpreter } from './environment.js';

function log(text) {
  console.error(`repeat-tool-breaker setup: ${text}`);
}

try {
  const { command, chosenBy } = workerInterpreter({ log, rebuild: process.argv.includes('--force') });
  if (chosenBy !== 'environment') log(`${chosenBy} is set, so the worker runs it and no environment is prepared`);
  console.log(command);
} catch (error) {
  if (!(error instanceof EnvironmentUnavailable)) throw error;
  log(error.message);
  process.exit(1);
}
