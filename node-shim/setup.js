// `npm run setup` (or `node node-shim/setup.js [--force]`): prepare the worker's environment now
// instead of at the first boot: a head start, or the fix after a first boot that could not
// prepare it (offline, say). `--force` rebuilds it. Nothing is written into the package itself.
import { EnvironmentUnavailable, workerInterpreter } from './environment.js';

function log(text) {
  console.error(`repeat-tool-breaker setup: ${text}`);
}

try {
  const { command, chosenBy } = workerInterpreter({ log, rebuild: process.argv.includes('--force') });
  log(chosenBy === 'environment'
    ? `the worker runs ${command}`
    : `${chosenBy} is set, so the worker runs ${command} and no environment is prepared`);
} catch (error) {
  if (!(error instanceof EnvironmentUnavailable)) throw error;
  log(error.message);
  process.exit(1);
}
