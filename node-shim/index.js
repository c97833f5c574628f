// @ts-check
// repeat-tool-breaker: the dsh (cordis) plugin. It decides nothing itself: it forwards each tool
// call and the few events that matter to the Python worker (`python -m breaker.worker`) and
// turns the answers into dsh's verdicts. See ARCHITECTURE.md and breaker/protocol.py.
import { randomUUID } from 'node:crypto';

import { boundedCopy } from './call/arguments.js';
import { AheadVerdicts } from './call/ahead.js';
import { WorkerBridge, WorkerUnavailable, clock, workerEnvironment } from './worker/bridge.js';
import {
  EnvironmentUnavailable,
  PACKAGE_ROOT,
  acceptedSettings,
  pythonEnvironment,
  rememberAccepted,
  startupFailure,
  workerInterpreter,
} from './boot/environment.js';
import { watchFrontend } from './boot/frontend.js';
import { askWhenIdle } from './worker/idle.js';
import { Journal } from './call/journal.js';
import { patchRows } from './boot/patch-rows.js';
import { outcomeOf, resultText } from './call/result-facts.js';
import { boundedWriter } from './shared/stderr.js';

export const name = 'repeat-tool-breaker';
export const inject = ['tools'];

/** Before the worker has validated `startTimeoutMs`, its first answer gets this long: the one
 * limit the shim keeps itself, as it bounds the wait for the reply that brings all the others
 * (the worker's default, kept equal to it by tests/test_shim_constants.py). */
const BOOT_TIMEOUT_MS = 10_000;
/** The `startTimeoutMs` the worker accepts (its NUMBER_BOUNDS, tests/test_shim_constants.py): past them
 * the boot waits BOOT_TIMEOUT_MS for the worker, whose answer names the key (0.5, 3e9). */
const START_TIMEOUT_BOUNDS = [1, 86_400_000];
/** A logged failure is cut to this; the texts remembered for logging once are this many at most. */
const LOGGED_CHARS = 300;
const REMEMBERED_FAILURES = 100;

const writeStderr = boundedWriter();
function log(text) {
  writeStderr(`[repeat-tool-breaker] ${text}\n`);
}

// The worker is started as soon as dsh loads this module: dsh imports its plugins well before it
// applies them (0.6-1.2 s on a real boot of the pinned dsh), so when `apply` sends the configuration
// the worker has started and imported what answering it needs, and the boot does not wait for
// Python. Only a ready environment of the plugin's own is used here, never prepared (preparing, and
// every error, belong to `apply`); `apply` takes this worker only if it would have started the very same one, and one
// left unclaimed is stopped after EARLY_WORKER_MS.
const EARLY_WORKER_MS = 60_000;

/**
 * How a worker of `python` is started. Its variables are worked out again for each worker
 * started: a replacement started after an upgrade in place keeps its compiled modules apart from
 * the old code's (package-digest.js). cwd keeps the user's working directory off its import path.
 */
export function workerOptions(python, root = PACKAGE_ROOT) {
  return { command: python.command, args: ['-m', 'breaker.worker'], cwd: PACKAGE_ROOT, env: () => pythonEnvironment(process.env, root, python) };
}

// What makes two workers the same: the command, and the variables Python, the loader, the locale
// or the worker itself read (dsh's own plugins set others while it loads, VIPSHOME for one).
const WORKER_VARIABLES = /^(?:PYTHON|RTB_|LD_|LC_|LANG$|PATH$|HOME$|TMPDIR$)/;
function workerKey({ command, env }) {
  return JSON.stringify([command, Object.entries(workerEnvironment(env)).filter(([name]) => WORKER_VARIABLES.test(name)).sort()]);
}

function startEarly() {
  try {
    // Only the plugin's own environment: an interpreter chosen by RTB_PYTHON (a development
    // setup, the tests) starts its worker in `apply`, as the config key's always does.
    const python = workerInterpreter({ log: () => {}, prepare: false });
    if (python?.chosenBy !== 'environment') return null;
    const options = workerOptions(python);
    const bridge = new WorkerBridge({ ...options, log });
    bridge.spawn();
    const timer = setTimeout(() => {
      if (early?.bridge !== bridge) return;
      early = null;
      bridge.close();
    }, EARLY_WORKER_MS);
    timer.unref();
    return { bridge, key: workerKey(options), timer };
  } catch {
    return null; // apply finds the same trouble and reports it
  }
}

/** The early worker when it is the one `options` describe (it is then claimed), else a new bridge. */
function bridgeFor(options) {
  const claimed = early;
  early = null;
  if (claimed) clearTimeout(claimed.timer);
  if (claimed?.key === workerKey(options)) return claimed.bridge;
  claimed?.bridge.close();
  return new WorkerBridge({ ...options, log });
}

let early = startEarly();

// A failure that repeats on every call is reported once, not once per call. The texts are the
// shim's own or the worker's (already redacted): nothing read from a call's arguments is ever
// thrown (see arguments.js). Only so many are remembered: an endless stream of distinct failures
// costs a line each, never memory.
const reported = new Set();
function logOnce(text) {
  const line = text.length > LOGGED_CHARS ? `${text.slice(0, LOGGED_CHARS)} [cut]` : text;
  if (reported.has(line)) return;
  if (reported.size >= REMEMBERED_FAILURES) reported.clear();
  reported.add(line);
  log(line);
}

// A notice the worker owes a call, as the UserMessage dsh appends after its result.
function noticeMessage({ text, summary }) {
  return {
    id: `${name}-${randomUUID()}`,
    role: 'user',
    content: [{ type: 'text', text }],
    source: { kind: 'plugin', plugin: name, form: 'notice', summary },
  };
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

// The fix a configuration error needs, after the worker's "key must be …, got …".
const CONFIG_FIX = 'correct it in the config: of the repeat-tool-breaker row (the profile\'s ' +
  'cordis.patch.yml or your --patch file); `npx rtb check` in the profile folder checks it without booting';

/** The line logDenials writes for one denial (see reportDenial in apply). */
export function denialLine(tool, agent, deny) {
  const reached = [...deny.matchAll(/^- ([a-z]+):.* (\d+)\/(\d+)$/gm)].map((m) => `${m[1]} ${m[2]}/${m[3]}`);
  const why = reached.length ? `reached ${reached.join(', ')}` : 'no progress: the same result again';
  const name = tool.replace(/[^\w.:-]/g, '?').slice(0, 64);
  return `denied a ${name} call of agent ${agent} (${why}); the session log has the text the model got`;
}

export function apply(ctx, config) {
  let python; // found, or prepared on the first boot that has no ready environment
  try {
    python = workerInterpreter({ configured: config?.python, log });
  } catch (error) {
    throw error instanceof EnvironmentUnavailable ? bootFailure(error.message) : error;
  }
  let journal; // created from the worker's settings once it has accepted the config
  const bridge = bridgeFor(workerOptions(python));
  bridge.replay = (agent) => journal.of(agent); // an agent's recent calls, before a new worker hears of it
  const configure = { op: 'configure', config: config == null ? null : boundedCopy(config).value, rows: patchRows(ctx) };
  const [least, most, wanted] = [...START_TIMEOUT_BOUNDS, config?.startTimeoutMs];
  const bootTimeout = Number.isInteger(wanted) && wanted >= least && wanted <= most ? wanted : BOOT_TIMEOUT_MS;
  // Every boot waits for the worker's answer to its configuration, so a worker that cannot start
  // (a package lost from its environment, the base Python of its venv replaced) or a bad
  // configuration stops the boot here, loud, with the fix. A configuration the plugin's own
  // environment has accepted before, from this very code, is sent `known`: the worker then skips
  // pydantic's check (breaker/core/config.py), and the worker started when dsh loaded this module
  // has usually answered by the time apply runs.
  const known = python.chosenBy === 'environment' && acceptedSettings(python.dir, configure.config) !== undefined;
  let reply;
  try {
    reply = bridge.boot(known ? { ...configure, known: true } : configure, bootTimeout);
  } catch (error) {
    bridge.close();
    throw error instanceof WorkerUnavailable ? bootFailure(startupFailure(error, python)) : error;
  }
  if (!reply.ok) {
    bridge.close();
    throw bootFailure(`${reply.error}${/[.?!]$/.test(reply.error) ? '' : '.'} Fix: ${CONFIG_FIX}`);
  }
  const settings = reply.settings;
  for (const line of settings.strays ?? []) log(line); // a row meant for this plugin, given to nothing
  if (python.chosenBy === 'environment' && !known) rememberAccepted(python.dir, configure.config, settings);
  const { countedTools, onWorkerFailure, notices, maxAgents, condensedChars, logDenials, operations } = settings;
  const { resultTextChars, factFields, factTextChars, workerFailureDenial } = settings;
  journal = new Journal(settings);
  const ahead = new AheadVerdicts(maxAgents, operations);
  const counted = new RegExp(countedTools);

  // Live Agent objects → {id: a small integer, what was sent for it (ahead.js)}; a collected
  // agent is forgotten by the worker too.
  const agents = new WeakMap();
  let nextAgentId = 1;
  const forgetting = new FinalizationRegistry((agent) => {
    journal.drop(agent);
    try {
      bridge.notify({ op: 'forget', agent });
    } catch (error) {
      logOnce(`could not tell the worker to forget an agent: ${error.message}`);
    }
  });
  function agentOf(agent, { create }) {
    if (agent === null || (typeof agent !== 'object' && typeof agent !== 'function')) return undefined;
    let known = agents.get(agent);
    if (known === undefined && create) {
      known = AheadVerdicts.agent(nextAgentId++);
      agents.set(agent, known);
      forgetting.register(agent, known.id);
    }
    return known;
  }

  // A model turn the agent began (agent/pre-step) is told to the worker before the turn's first
  // counted call, so a turn without one costs no frame (breaker/core/history/progress.py reads
  // turns; a harness that tells none gets each call read as a turn of its own).
  function toldTurn(agent) {
    if (!agent.turnBegun) return;
    agent.turnBegun = false;
    const message = { op: 'step', agent: agent.id };
    ahead.sending(agent, 'step');
    bridge.notify(message);
    journal.stepped(message);
  }

  // The agent of a call that the worker should see, or undefined when it costs no round trip.
  function countedAgent(exec, options) {
    if (!counted.test(String(exec?.name))) return undefined;
    return agentOf(exec?.agent, options);
  }

  // The request for one call and what it weighs (for the journal). The copy of its arguments is
  // made once per call (its pre-execute and its guard send the same). A call heavy enough to hold
  // a text that counts by its digest asks for its stand-in, which the journal keeps instead.
  const copies = new WeakMap();
  // logDenials: one line on stderr per denied call, for an operator of a headless dsh: the tool,
  // the kinds of what reached its limit and the agent, never the arguments or a result (the
  // session log holds the whole denial; `rtb replay` shows it).
  function reportDenial(exec, agent, deny) {
    if (deny !== undefined && logDenials) log(denialLine(String(exec.name), agent.id, deny));
    return deny;
  }

  function callMessage(op, exec, agent) {
    let copy = copies.get(exec);
    if (copy === undefined) {
      const { value: args, weight, textUnits } = boundedCopy(exec.arguments);
      copy = { call: String(exec.callId ?? ''), name: String(exec.name), args, weight, textUnits };
      copies.set(exec, copy);
    }
    const { call, name, args, weight, textUnits } = copy;
    const message = { op, agent, call, name, args };
    const large = textUnits >= condensedChars; // only then can it hold a text that long
    if (large) message.standIn = true;
    return { message, weight: weight + call.length + name.length, large };
  }

  // What the journal keeps of a call the worker answered: the stand-in it gave (the call with its
  // long texts by digest, breaker/core/history/standin.py), else the call as sent.
  function journaled(message, weight, answer) {
    if (answer.standIn === undefined || answer.standIn === null) return { message, weight };
    const { standIn: _, ...sent } = message;
    const { value: args, weight: argsWeight } = boundedCopy(answer.standIn);
    return { message: { ...sent, args }, weight: argsWeight + sent.call.length + sent.name.length };
  }

  const failureVerdict = onWorkerFailure === 'deny'
    ? (error) => workerFailureDenial.replace('{plugin}', name).replace('{reason}', () => error.message)
    : () => undefined;

  // The guard request of a call let through on a pass, as an event. A call heavy enough to hold
  // a text that counts by its digest asks for its stand-in, which the journal keeps instead.
  function sendPassed(exec, agent, since) {
    try {
      const { message, weight, large } = callMessage('guard', exec, agent.id);
      if (large && bridge.later) {
        const answered = bridge.ask(message, since, true); // a restart inside replays the journal first
        const entry = journal.guard(message, weight);
        answered.then((answer) => {
          if (!answer.ok) return;
          const kept = journaled(message, weight, answer);
          journal.restate(agent.id, entry, kept.message, kept.weight);
        }, () => {}); // a lost worker's successor replays the call as sent
        return;
      }
      bridge.notify(message); // a restart inside notify replays the journal without it, then sends it
      journal.guard(message, weight);
    } catch (error) {
      if (!(error instanceof WorkerUnavailable)) logOnce(`a call let through on a pass was not sent: ${error.message}`);
    }
  }

  function guard(exec) {
    const since = clock(); // the deadline runs from here, copying and encoding included
    ran = true;
    try {
      const agent = countedAgent(exec, { create: true });
      if (agent === undefined) return undefined;
      toldTurn(agent);
      if (ahead.usePass(exec, agent, bridge.generation)) {
        // Surely allowed (its pre-execute reserved a pass that still holds now, whatever guards
        // ran since): the worker decides it in order. It is sent once the event loop is idle
        // (before any later request): the call goes on at once.
        ahead.committing(agent, 'guard', true);
        bridge.idle.push(() => sendPassed(exec, agent, since));
        return undefined;
      }
      const kept = ahead.take(exec, agent, bridge.generation);
      if (kept) {
        // The worker's verdict from the preflight still holds: it takes effect, no round trip.
        journal.guard({ ...kept.message, op: 'guard' }, kept.weight, 'commit');
        ahead.committing(agent, 'commit');
        // Only to the worker that kept it: a replacement rebuilds the call from the journal's guard.
        bridge.notify({ op: 'commit', agent: agent.id, call: kept.message.call }, kept.generation);
        return reportDenial(exec, agent, kept.deny);
      }
      const { message, weight } = callMessage('guard', exec, agent.id);
      const committed = ahead.committing(agent, 'guard');
      const answer = bridge.call(message, since);
      if (!answer.ok) throw new Error(answer.error);
      ahead.granted(agent, committed, answer.passes, bridge.generation);
      const entry = journaled(message, weight, answer);
      journal.guard(entry.message, entry.weight);
      journal.keepFrom(agent.id, answer.keepFrom);
      return reportDenial(exec, agent, typeof answer.deny === 'string' ? answer.deny : undefined);
    } catch (error) {
      // A lost worker was already reported by the bridge when it replaced it.
      if (!(error instanceof WorkerUnavailable)) logOnce(`guard failed: ${error.message}`);
      return failureVerdict(error);
    }
  }

  // dsh awaits this before the guard: a call the worker will surely allow takes a pass and asks
  // nothing; any other goes to the worker here without blocking, and its answer is the ask, or
  // the guard's verdict ahead of time (see ahead.js).
  async function preExecute(exec, next) {
    ran = true;
    const decision = await next();
    if (decision?.kind !== 'allow') return decision;
    const since = clock();
    try {
      const agent = countedAgent(exec, { create: true });
      if (agent === undefined) return decision;
      toldTurn(agent);
      // What still waits to be sent (the loop was never idle since: calls back to back) goes now,
      // so the answers that bring the next passes are on their way while this call runs.
      bridge.idle.flush();
      if (ahead.reserve(exec, agent, bridge.generation)) return decision;
      if (agent.refresh) {
        await agent.refresh; // the answer to its latest result, on its way, may bring a pass
        if (ahead.reserve(exec, agent, bridge.generation)) return decision;
      }
      const { message, weight } = callMessage('preflight', exec, agent.id);
      bridge.idle.flush(); // what waits for an idle moment was asked first: the journal orders it so
      const mark = ahead.preflighting(agent, bridge.generation);
      journal.sent('preflight', agent.id, message.call);
      const answer = await bridge.ask(message, since);
      if (!answer.ok) throw new Error(answer.error);
      const entry = journaled(message, weight, answer);
      ahead.answered(exec, agent, mark, answer, entry.message, entry.weight);
      journal.keepFrom(agent.id, answer.keepFrom);
      if (typeof answer.ask === 'string') {
        journal.asked(entry.message, entry.weight);
        return { kind: 'ask', reason: answer.ask };
      }
    } catch (error) {
      if (!(error instanceof WorkerUnavailable)) logOnce(`preflight failed, the guard decides alone: ${error.message}`);
    }
    return decision;
  }

  async function postExecute(exec, result, next) {
    let owed = [];
    try {
      ahead.drop(exec);
      const agent = countedAgent(exec, { create: false });
      if (agent !== undefined) {
        const message = {
          op: 'result', agent: agent.id, call: String(exec.callId ?? ''), text: resultText(result, resultTextChars),
          outcome: outcomeOf(result, factFields, factTextChars),
        };
        ahead.sending(agent, 'result');
        const committed = agent.committed; // what the passes its answer brings count from
        if (notices) {
          // Only when advisories are switched on does a result block for its reply.
          const answer = bridge.call(message);
          if (!answer.ok) throw new Error(answer.error);
          journal.result(message, message.text.length + 64);
          ahead.granted(agent, committed, answer.passes, bridge.generation);
          owed = answer.notices ?? [];
        } else if (bridge.later) {
          // Its answer, read on the event loop, brings the agent's passes (ahead.js); a worker
          // slow to give it is left to the next request that cannot wait. It is sent once this
          // turn of the event loop is over (or before any later request): the call is done first.
          const sent = () => journal.result(message, message.text.length + 64);
          ahead.refreshing(agent, askWhenIdle(bridge, message, clock(), true, sent), committed, bridge.generation);
        } else {
          bridge.notify(message); // a restart inside notify replays the journal without it, then sends it
          journal.result(message, message.text.length + 64);
        }
      }
    } catch (error) {
      logOnce(`could not record a result: ${error.message}`);
    }
    const decision = await next();
    if (owed.length === 0) return decision;
    return { ...decision, additionalContexts: [...owed.map(noticeMessage), ...(decision?.additionalContexts ?? [])] };
  }

  // Each model turn: a user message clears the agent's window; then the turn itself begins (the
  // calls of one turn were sent together, before any of their answers: breaker/core/progress.py).
  function preStep(step, next) {
    ran = true;
    try {
      const human = step?.messages?.some((message) => message?.source?.kind === 'user');
      const known = agentOf(step?.agent, { create: false });
      if (known !== undefined && human) {
        bridge.idle.flush(); // what waits for an idle moment came first: the journal has it before
        journal.cleared(known.id);
        ahead.sending(known, 'human');
        bridge.notify({ op: 'human', agent: known.id });
      }
      const agent = known ?? agentOf(step?.agent, { create: true }); // no frame: an id of its own
      if (agent !== undefined) agent.turnBegun = true;
    } catch (error) {
      logOnce(`could not record a new turn: ${error.message}`);
    }
    return next();
  }

  let ran = false; // whether any agent step or tool call came: then dsh has a frontend (frontend.js)
  const disposers = [
    ctx.tools.guard(guard),
    ctx.on('tools/pre-execute', preExecute),
    ctx.on('tools/post-execute', postExecute),
    ctx.on('agent/pre-step', preStep),
    watchFrontend(ctx, log, () => ran),
  ];
  return () => {
    for (const dispose of disposers) {
      try {
        dispose?.();
      } catch (error) {
        log(`teardown: ${error.message}`);
      }
    }
    bridge.close();
  };
}

export default { name, inject, apply };
