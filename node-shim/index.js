// @ts-check
// repeat-tool-breaker: the dsh (cordis) plugin. It decides nothing itself: it forwards each tool
// call and the few events that matter to the Python worker (`python -m breaker.worker`) and
// turns the answers into dsh's verdicts. See ARCHITECTURE.md and breaker/protocol.py.
//
// `apply` wires the parts: the worker started on its environment and configured (worker/start.js,
// boot/), what each call does on its way (call/hooks.js), whether dsh has a frontend
// (boot/frontend.js), and the teardown.
import { watchFrontend } from './boot/frontend.js';
import { patchRows } from './boot/patch-rows.js';
import { boundedCopy } from './call/arguments.js';
import { CallHooks } from './call/hooks.js';
import { Journal } from './call/journal.js';
import { printable } from './call/uncounted.js';
import { boundedWriter } from './shared/stderr.js';
import { startEarly, startWorker } from './worker/start.js';

export const name = 'repeat-tool-breaker';
export const inject = ['tools'];

/** A logged failure is cut to this; the texts remembered for logging once are this many at most. */
const LOGGED_CHARS = 300;
const REMEMBERED_FAILURES = 100;

const writeStderr = boundedWriter();
function log(text) {
  writeStderr(`[repeat-tool-breaker] ${text}\n`);
}

// The worker is started as soon as dsh loads this module, on the plugin's own ready environment
// (worker/start.js): when `apply` sends the configuration, the worker has usually answered.
startEarly(log);

// A failure that repeats on every call is reported once, not once per call. The texts are the
// shim's own or the worker's (already redacted): nothing read from a call's arguments is ever
// thrown (see call/arguments.js). Only so many are remembered: an endless stream of distinct
// failures costs a line each, never memory.
const reported = new Set();
function logOnce(text) {
  const line = text.length > LOGGED_CHARS ? `${text.slice(0, LOGGED_CHARS)} [cut]` : text;
  if (reported.has(line)) return;
  if (reported.size >= REMEMBERED_FAILURES) reported.clear();
  reported.add(line);
  log(line);
}

// Why the plugin cannot start, for the operator: one message that names what to change, thrown
// from apply so the boot fails loud, with no frame of this plugin's code. dsh prints what apply
// throws inside its own error and stack, twice, where the message is one line among twenty: so it
// is written to stderr first, once and alone, in the form `rtb check` prints (`repeat-tool-breaker:
// <what is wrong>. Fix: <what to do>`), and is the first thing on the terminal.
function bootFailure(message) {
  const error = new Error(`${name}: ${message}`);
  error.stack = error.message;
  writeStderr(`${error.message}\n\n`);
  return error;
}

/** The include and exclude a config gives, as a line quotes them (`include: [bsh]`). */
function listed(config) {
  const given = ['include', 'exclude'].filter((key) => Array.isArray(config?.[key]) && config[key].length > 0);
  return given.map((key) => `${key}: [${config[key].slice(0, 8).map(printable).join(', ')}]`).join('; ') || 'no include given';
}

export async function apply(ctx, config) {
  // Every boot waits for the worker's answer to its configuration, so a worker that cannot start
  // (a package lost from its environment, the base Python of its venv replaced) or a bad
  // configuration stops the boot here, loud, with the fix. dsh awaits the promise `apply` returns
  // while it loads and applies its other plugins, and runs a task only once every plugin has
  // started: its main thread never blocks for the worker's start (worker/first-answer.js).
  // `.inf` and `.nan` in the YAML reach the worker as written, which refuses them (not as null: no cap).
  const configure = { op: 'configure', config: config == null ? null : boundedCopy(config, undefined, true).value, rows: patchRows(ctx) };
  let journal; // created from the worker's settings once it has accepted the config
  const replay = (agent) => journal.of(agent); // an agent's recent calls, before a new worker hears of it
  const start = startWorker(configure, config, { log, fail: bootFailure, replay });
  let hooks; // what each call does on its way, made from the worker's settings
  // The hooks, made once the worker has accepted the configuration: a hook that runs before the
  // boot has seen the answer waits for it here, so no call is ever let through unchecked.
  const ready = () => {
    if (hooks === undefined) {
      const settings = start.settings();
      journal = new Journal(settings);
      // dsh's tools and the agent's own (a subagent may see fewer, a scope may add some)
      const toolNames = (agent) => [...new Set([...ctx.tools.schemas(), ...ctx.tools.schemas(agent)].map((tool) => tool.name))];
      const lists = listed(config);
      hooks = new CallHooks({ bridge: start.bridge, journal, settings, plugin: name, log, logOnce, toolNames, lists });
    }
    return hooks;
  };
  // A host that runs a hook before awaiting apply, whose worker then never answers (or refuses the
  // configuration), gets no throw: the call is judged as onWorkerFailure says (the boot's one line
  // on stderr names the cause), the other hooks pass it on, and apply rejects with that cause.
  const unstarted = (error) => (config?.onWorkerFailure === 'deny' ? error.message : undefined);
  const withHooks = (use, otherwise) => {
    let made;
    try {
      made = ready();
    } catch (error) {
      return otherwise(error);
    }
    return use(made);
  };
  const disposers = [
    ctx.tools.guard((exec) => withHooks((made) => made.guard(exec), unstarted)),
    ctx.on('tools/pre-execute', (exec, next) => withHooks((made) => made.preExecute(exec, next), next)),
    ctx.on('tools/post-execute', (exec, result, next) => withHooks((made) => made.postExecute(exec, result, next), next)),
    ctx.on('agent/pre-step', (step, next) => withHooks((made) => made.preStep(step, next), next)),
    watchFrontend(ctx, log, () => hooks?.ran === true),
  ];
  const dispose = () => {
    for (const disposer of disposers) {
      try {
        disposer?.();
      } catch (error) {
        log(`teardown: ${error.message}`);
      }
    }
    start.bridge.close();
  };
  try {
    await start.ready;
    ready();
  } catch (error) {
    dispose();
    throw error;
  }
  return dispose;
}

export default { name, inject, apply };
