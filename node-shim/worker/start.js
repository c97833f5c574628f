// @ts-check
// The worker's start: the one begun as soon as dsh imports the plugin, and the boot's, which sends
// the configuration and waits for the worker's answer, so that a worker that cannot start or a bad
// configuration stops the boot, loud, with the fix.
import {
  EnvironmentUnavailable,
  PACKAGE_ROOT,
  acceptedSettings,
  keptDigest,
  pythonEnvironment,
  rememberAccepted,
  startupFailure,
  workerInterpreter,
} from '../boot/environment.js';
import { WorkerBridge, WorkerUnavailable } from './bridge.js';
import { answered, begin, booted } from './first-answer.js';

/** Before the worker has validated `startTimeoutMs`, its first answer gets this long: the one
 * limit the shim keeps itself, as it bounds the wait for the reply that brings all the others
 * (the worker's default, kept equal to it by tests/test_shim_constants.py). */
const BOOT_TIMEOUT_MS = 10_000;
/** The `startTimeoutMs` the worker accepts (its NUMBER_BOUNDS, tests/test_shim_constants.py): past them
 * the boot waits BOOT_TIMEOUT_MS for the worker, whose answer names the key (0.5, 3e9). */
const START_TIMEOUT_BOUNDS = [1, 86_400_000];

// The fix a configuration error needs, after the worker's "key must be …, got …".
const CONFIG_FIX = 'correct it in the config: of the repeat-tool-breaker row (the profile\'s ' +
  'cordis.patch.yml, the dsh home\'s, or your --patch file); `npx --no rtb check` in the profile folder checks it without booting';

// The worker is started as soon as dsh loads the plugin (startEarly): dsh imports its plugins well
// before it applies them (0.6-1.2 s on a real boot of the pinned dsh), so when `apply` sends the
// configuration the worker has started and imported what answering it needs, and the boot does not
// wait for Python. Only a ready environment of the plugin's own is used here, never prepared
// (preparing, and every error, belong to the boot); the boot takes this worker only if it would
// have started the very same one, and one left unclaimed is stopped after EARLY_WORKER_MS.
const EARLY_WORKER_MS = 60_000;

/**
 * How a worker of `python` is started. Its variables are worked out again for each worker
 * started: a replacement started after an upgrade in place keeps its compiled modules apart from
 * the old code's (package-digest.js); only the first may be given the package's `digest`, worked
 * out already. cwd keeps the user's working directory off its import path.
 */
export function workerOptions(python, root = PACKAGE_ROOT, digest = undefined) {
  let given = digest;
  const env = () => {
    const variables = pythonEnvironment(process.env, root, python, given);
    given = undefined;
    return variables;
  };
  return { command: python.command, args: ['-m', 'breaker.worker'], cwd: PACKAGE_ROOT, env };
}

// What makes two workers the same: the interpreter (and who chose it), and the variables Python,
// the loader, the locale or the worker itself read (dsh's own plugins set others while it loads,
// VIPSHOME for one); from these and the package's code its variables are worked out.
const WORKER_VARIABLES = /^(?:PYTHON|RTB_|LD_|LC_|LANG$|PATH$|HOME$|TMPDIR$)/;
/** @param {{ command: string, chosenBy: string, dir?: string }} python */
function workerKey({ command, chosenBy, dir }) {
  const variables = Object.entries(process.env).filter(([name]) => WORKER_VARIABLES.test(name)).sort();
  return JSON.stringify([command, chosenBy, dir ?? null, variables]);
}

/**
 * The worker started early, until the boot claims it or EARLY_WORKER_MS pass: its bridge, its
 * interpreter (`python`, the boot's too unless the config chooses another), what makes it the
 * same as the boot's (`key`) and the package's digest it was started with.
 */
let early = null;

/** Start the early worker on the plugin's own ready environment, if there is one. */
export function startEarly(log) {
  try {
    // Only the plugin's own environment: an interpreter chosen by RTB_PYTHON (a development
    // setup, the tests) starts its worker at the boot, as the config key's always does.
    const python = workerInterpreter({ log: () => {}, prepare: false });
    if (python?.chosenBy !== 'environment') return;
    const digest = keptDigest(python.dir);
    const bridge = new WorkerBridge({ ...workerOptions(python, PACKAGE_ROOT, digest), log });
    bridge.spawn();
    const timer = setTimeout(() => {
      if (early?.bridge !== bridge) return;
      early = null;
      bridge.close();
    }, EARLY_WORKER_MS);
    timer.unref();
    early = { bridge, python, key: workerKey(python), digest, timer };
  } catch {
    // the boot finds the same trouble and reports it
  }
}

/**
 * The early worker when it is the one `python` starts (it is then claimed, with the package's
 * digest it was started with), else a new bridge.
 */
function bridgeFor(python, log) {
  const claimed = early;
  early = null;
  if (claimed) clearTimeout(claimed.timer);
  if (claimed?.key === workerKey(python)) return { bridge: claimed.bridge, digest: claimed.digest };
  claimed?.bridge.close();
  return { bridge: new WorkerBridge({ ...workerOptions(python), log }), digest: undefined };
}

/**
 * The boot's worker, sent `configure` (the configure request: the config and the patch rows)
 * without waiting for its answer: `bridge`; `settings()`, the worker's settings once it has
 * accepted the configuration, waiting for its answer if it has not come (dsh's main thread blocks
 * then); `ready`, a promise of them that never blocks (first-answer.js). `configured` is the
 * plugin's config as dsh gave it (its `python` key, its `startTimeoutMs` before the worker
 * validated it). What stops the boot is thrown (or rejected) as `fail(message)`, the message
 * naming the fix, the same error each time; `replay` gives an agent's recent calls to a worker
 * that replaces a lost one.
 */
export function startWorker(configure, configured, { log, fail, replay }) {
  let python; // found, or prepared on the first boot that has no ready environment
  try {
    python = workerInterpreter({ configured: configured?.python, log, foundEarlier: early?.python });
  } catch (error) {
    throw error instanceof EnvironmentUnavailable ? fail(error.message) : error;
  }
  const { bridge, digest } = bridgeFor(python, log);
  bridge.replay = replay;
  const [least, most, wanted] = [...START_TIMEOUT_BOUNDS, configured?.startTimeoutMs];
  const bootTimeout = Number.isInteger(wanted) && wanted >= least && wanted <= most ? wanted : BOOT_TIMEOUT_MS;
  // Every boot waits for the worker's answer to its configuration. A configuration the plugin's
  // own environment has accepted before, from this very code, is sent `known`: the worker then
  // skips pydantic's check (breaker/core/config/loading.py), and the worker started when dsh loaded
  // the plugin has usually answered by the time the boot looks for the answer.
  const known = python.chosenBy === 'environment' && acceptedSettings(python.dir, configure.config, PACKAGE_ROOT, digest) !== undefined;
  begin(bridge, known ? { ...configure, known: true } : configure, bootTimeout);
  let outcome; // once the answer has been read: {settings}, or {error}, what stops the boot
  const settings = () => {
    outcome ??= accepted(bridge, python, { config: configure.config, known, digest, log, fail });
    if (outcome.error) throw outcome.error;
    return outcome.settings;
  };
  return { bridge, settings, ready: answered(bridge).then(settings) };
}

// The worker's answer to the boot's configuration, read once: its settings, or the error that
// stops the boot (the worker is then stopped).
function accepted(bridge, python, { config, known, digest, log, fail }) {
  let reply;
  try {
    reply = booted(bridge);
  } catch (error) {
    bridge.kill(); // it missed its deadline: it may hang
    bridge.close();
    return { error: error instanceof WorkerUnavailable ? fail(startupFailure(error, python)) : error };
  }
  if (!reply.ok) {
    bridge.close();
    return { error: fail(`${reply.error}${/[.?!]$/.test(reply.error) ? '' : '.'} Fix: ${CONFIG_FIX}`) };
  }
  const settings = reply.settings;
  for (const line of settings.strays ?? []) log(line); // a row meant for this plugin, given to nothing
  if (python.chosenBy === 'environment' && !known) rememberAccepted(python.dir, config, settings, PACKAGE_ROOT, digest);
  return { settings };
}
