// @ts-check
// What dsh's guard and hooks do with each call: the guard's verdict (from a pass, a verdict kept
// ahead, or the worker's answer), the pre-execute's ask or verdict ahead of time, the result sent
// after the call, and each model turn told. Every failure is logged once and never thrown into
// dsh: a call the worker could not judge is let through, or denied when onWorkerFailure says so.
import { randomUUID } from 'node:crypto';

import { askNow, askWhenIdle } from '../worker/idle.js';
import { WorkerUnavailable, clock } from '../worker/bridge.js';
import { Agents } from './agents.js';
import { AheadVerdicts } from './ahead.js';
import { callRequests, journaled } from './requests.js';
import { outcomeOf, resultText } from './result-facts.js';
import { UncountedWatch } from './uncounted.js';

/** The line logDenials writes for one denial (see reportDenial): what it counted, in the
 * worker's words (its reply's `counted`: breaker/core/wording/messages.py denial_counts). */
export function denialLine(tool, agent, counted) {
  const why = typeof counted === 'string' && counted ? counted.slice(0, 300) : 'what it counted was not given';
  const name = tool.replace(/[^\w.:-]/g, '?').slice(0, 64);
  return `denied a ${name} call of agent ${agent} (${why}); the session log has the text the model got`;
}

export class CallHooks {
  /**
   * @param {object} parts
   * @param {import('../worker/bridge.js').WorkerBridge} parts.bridge the worker, booted
   * @param {import('./journal.js').Journal} parts.journal what each agent did, for a replacement
   * @param {any} parts.settings the worker's answer to the configuration
   * @param {string} parts.plugin the plugin's name, in what the model reads
   * @param {(text: string) => void} parts.log a line on stderr
   * @param {(text: string) => void} parts.logOnce a failure's line on stderr, once
   * @param {(agent: any) => string[]} [parts.toolNames] the names of the tools dsh offers an agent
   * @param {string} [parts.lists] the config's include and exclude, as a line quotes them
   */
  constructor({ bridge, journal, settings, plugin, log, logOnce, toolNames = () => [], lists = '' }) {
    this.bridge = bridge;
    this.journal = journal;
    this.settings = settings;
    this.plugin = plugin;
    this.log = log;
    this.logOnce = logOnce;
    this.ahead = new AheadVerdicts(settings.maxAgents, settings.operations, settings.breaks, settings.grouping);
    this.counted = new RegExp(settings.countedTools);
    this.uncounted = new UncountedWatch(this.counted, toolNames, lists, log);
    this.request = callRequests(settings.condensedChars);
    // a collected agent is forgotten by the worker too
    this.agents = new Agents((agent) => {
      journal.drop(agent);
      try {
        bridge.notify({ op: 'forget', agent });
      } catch (error) {
        logOnce(`could not tell the worker to forget an agent: ${error.message}`);
      }
    });
    /** A call on a pass → what takes it back while it is not sent. */
    this.unsent = new WeakMap();
    /** Calls the operator was asked about: the answer to their result may owe a notice. */
    this.asked = new WeakSet();
    /** Whether any agent step or tool call came: then dsh has a frontend (frontend.js). */
    this.ran = false;
  }

  // A model turn the agent began (agent/pre-step) is told to the worker before the turn's first
  // counted call, so a turn without one costs no frame (breaker/core/history/progress.py reads
  // turns; a harness that tells none gets each call read as a turn of its own).
  toldTurn(agent) {
    if (!agent.turnBegun) return;
    agent.turnBegun = false;
    const message = { op: 'step', agent: agent.id };
    this.ahead.sending(agent, 'step');
    this.bridge.notify(message);
    this.journal.stepped(message);
  }

  // The agent of a call that the worker should see, or undefined when it costs no round trip.
  countedAgent(exec, options) {
    if (!this.counted.test(String(exec?.name))) return undefined;
    return this.agents.of(exec?.agent, options);
  }

  // logDenials: one line on stderr per denied call, for an operator of a headless dsh: the tool,
  // the kinds of what reached its limit and the agent, never the arguments or a result (the
  // session log holds the whole denial; `rtb replay` shows it).
  reportDenial(exec, agent, deny, counted) {
    if (deny !== undefined && this.settings.logDenials) this.log(denialLine(String(exec.name), agent.id, counted));
    return deny;
  }

  // The verdict of a call the worker could not judge: let through, or denied (onWorkerFailure).
  failureVerdict(error) {
    if (this.settings.onWorkerFailure !== 'deny') return undefined;
    return this.settings.workerFailureDenial.replace('{plugin}', this.plugin).replace('{reason}', () => error.message);
  }

  // The guard request of a call let through on a pass, as an event. A call heavy enough to hold
  // a text that counts by its digest asks for its stand-in, which the journal keeps instead.
  sendPassed(exec, agent, since) {
    const { bridge, journal } = this;
    try {
      const { message, weight, large } = this.request('guard', exec, agent.id);
      if (large && bridge.later) {
        const answered = bridge.ask(message, since, true); // a restart inside replays the journal first
        const entry = journal.guard(message, weight, 'guard', true); // its bytes are owed a stand-in
        answered.then((answer) => {
          if (!answer.ok) return journal.unowed(entry);
          const kept = journaled(message, weight, answer);
          journal.restate(agent.id, entry, kept.message, kept.weight);
        }, () => journal.unowed(entry)); // a lost worker's successor replays the call as sent
        return;
      }
      bridge.notify(message); // a restart inside notify replays the journal without it, then sends it
      journal.guard(message, weight);
    } catch (error) {
      if (!(error instanceof WorkerUnavailable)) this.logOnce(`a call let through on a pass was not sent: ${error.message}`);
    }
  }

  // A call that went through on a pass (ahead.reserve): surely allowed, it is committed where dsh
  // logged it, here, as `rtb replay` reads it (before another agent's call that begins before its
  // guard runs). It is sent once the event loop is idle (before any later request): the call goes
  // on at once. Stopped before its guard (another listener or guard) while unsent, it is taken back.
  passed(exec, agent, since, decision, place = undefined) {
    let cancelled = false;
    const send = () => {
      this.unsent.delete(exec);
      if (!cancelled) this.sendPassed(exec, agent, since);
    };
    if (!place?.put(send)) this.idleSend(send);
    this.unsent.set(exec, () => {
      this.unsent.delete(exec);
      cancelled = true;
      this.ahead.uncommit(agent);
    });
    return decision;
  }

  // A send no call waits on: with the next send that must go, or DEFER_MS later (idle.js `defer`).
  idleSend(send) {
    this.bridge.idle.defer(send);
  }

  // The preflight of a call: the request, and its answer on its way.
  sendPreflight(exec, agent, since) {
    const { bridge, journal, ahead } = this;
    const { message, weight } = this.request('preflight', exec, agent.id);
    bridge.idle.flush(); // what waits for an idle moment was asked first: the journal orders it so
    const mark = ahead.preflighting(agent, bridge.generation);
    ahead.opened(exec, agent);
    journal.sent('preflight', agent.id, message.call);
    return { message, weight, mark, reply: bridge.ask(message, since) };
  }

  // A call whose pre-execute waits (for the answer to a result, on its way) before it sends
  // anything holds its place among the idle sends: nothing dsh logged after the call goes to the
  // worker before the call's first frame, as `rtb replay` reads the log (the agent the worker
  // forgets past maxAgents is then the replay's, breaker/core/history/agents.py). Sends or a
  // request that must go out meanwhile send its preflight there, and the wait is over (`woken`);
  // once the wait is over, what the call sends first goes there (`put`).
  holdPlace(exec, agent, since) {
    let action = null;
    let early = null;
    let done = false;
    /** @type {(value?: unknown) => void} */
    let wake = () => {};
    const woken = new Promise((resolve) => (wake = resolve));
    const hold = () => {
      if (done) return;
      done = true;
      if (action !== null) return action();
      early = this.sendPreflight(exec, agent, since);
      wake();
    };
    this.bridge.idle.hold(hold);
    return {
      woken,
      early: () => early,
      put: (send) => !done && ((action = send), true),
      last: () => !done && this.bridge.idle.isLast(hold) && ((done = true), true),
    };
  }

  guard(exec) {
    const { bridge, journal, ahead } = this;
    const since = clock(); // the deadline runs from here, copying and encoding included
    this.ran = true;
    try {
      const agent = this.countedAgent(exec, { create: true });
      if (agent === undefined) {
        this.uncounted.sawUncounted(String(exec?.name), exec?.agent);
        return undefined;
      }
      this.uncounted.sawCounted();
      this.toldTurn(agent);
      ahead.closed(exec, agent);
      if (ahead.usePass(exec)) return undefined; // surely allowed: committed at its pre-execute
      const kept = ahead.take(exec, agent, bridge.generation);
      if (kept) {
        // The worker's verdict from the preflight still holds: it takes effect, no round trip.
        journal.guard({ ...kept.message, op: 'guard' }, kept.weight, 'commit');
        ahead.committing(agent, 'commit', false, exec);
        // Only to the worker that kept it: a replacement rebuilds the call from the journal's guard.
        bridge.notify({ op: 'commit', agent: agent.id, call: kept.message.call }, kept.generation);
        return this.reportDenial(exec, agent, kept.deny, kept.counted);
      }
      this.asked.delete(exec); // an asked call that reaches the guard was approved: no notice owed
      const { message, weight } = this.request('guard', exec, agent.id);
      const committed = ahead.committing(agent, 'guard', false, exec);
      const answer = bridge.call(message, since);
      if (!answer.ok) throw new Error(answer.error);
      ahead.granted(agent, committed, answer.passes, bridge.generation, answer.conditional);
      const entry = journaled(message, weight, answer);
      journal.guard(entry.message, entry.weight);
      journal.keepFrom(agent.id, answer.keepFrom);
      return this.reportDenial(exec, agent, typeof answer.deny === 'string' ? answer.deny : undefined, answer.counted);
    } catch (error) {
      // A lost worker was already reported by the bridge when it replaced it.
      if (!(error instanceof WorkerUnavailable)) this.logOnce(`guard failed: ${error.message}`);
      return this.failureVerdict(error);
    }
  }

  // dsh awaits this before the guard: a call the worker will surely allow takes a pass and asks
  // nothing; any other goes to the worker here without blocking, and its answer is the ask, or
  // the guard's verdict ahead of time (see ahead.js).
  async preExecute(exec, next) {
    const { bridge, journal, ahead } = this;
    this.ran = true;
    const decision = await next();
    if (decision?.kind !== 'allow') return decision;
    const since = clock();
    try {
      const agent = this.countedAgent(exec, { create: true });
      if (agent === undefined) return decision;
      this.toldTurn(agent);
      // What still waits for an idle moment (the loop was never idle since: calls back to back)
      // goes now, so the answers that bring the next passes are on their way while this call
      // runs; what was deferred (idle.js) waits on.
      if (bridge.idle.soon) bridge.idle.flush();
      if (ahead.reserve(exec, agent, bridge.generation)) return this.passed(exec, agent, since, decision);
      let preflight = null; // the preflight sent, its answer on its way
      let reply = ahead.nextReply(agent); // an answer to one of its results, on its way, may bring a pass
      if (reply !== null) {
        const place = this.holdPlace(exec, agent, since);
        // Each answer in turn, as it comes (the worker answers the results in order: an earlier
        // one's may bring the pass), until one brings it, none is on its way, or a request had
        // to go out meanwhile and sent the preflight at the call's place.
        while (reply !== null) {
          await Promise.race([reply, place.woken]);
          preflight = place.early();
          if (preflight !== null) break;
          if (ahead.reserve(exec, agent, bridge.generation)) return this.passed(exec, agent, since, decision, place);
          reply = ahead.nextReply(agent);
        }
        // The preflight goes at the call's place: next, or run there now with what waited before it.
        if (preflight === null && !place.last() && place.put(() => (preflight = this.sendPreflight(exec, agent, since)))) bridge.idle.flush();
      }
      preflight ??= this.sendPreflight(exec, agent, since);
      const { message, weight, mark } = preflight;
      const answer = await preflight.reply;
      if (!answer.ok) throw new Error(answer.error);
      const entry = journaled(message, weight, answer);
      ahead.answered(exec, agent, mark, answer, entry.message, entry.weight);
      journal.keepFrom(agent.id, answer.keepFrom);
      if (typeof answer.ask === 'string') {
        journal.asked(entry.message, entry.weight);
        this.asked.add(exec);
        return { kind: 'ask', reason: answer.ask };
      }
    } catch (error) {
      if (!(error instanceof WorkerUnavailable)) this.logOnce(`preflight failed, the guard decides alone: ${error.message}`);
    }
    return decision;
  }

  // The stage's decision passes through as the next listener's promise unless notices are owed
  // (no async function, no await of its own on a call's way).
  postExecute(exec, result, next) {
    let owed = [];
    try {
      owed = this.sendResult(exec, result);
    } catch (error) {
      this.logOnce(`could not record a result: ${error.message}`);
    }
    if (owed.length === 0) return next();
    return this.withNotices(owed, next());
  }

  async withNotices(owed, pending) {
    const decision = await pending;
    return { ...decision, additionalContexts: [...owed.map((notice) => this.noticeMessage(notice)), ...(decision?.additionalContexts ?? [])] };
  }

  // A call's result to the worker; the notices it owes the call, when notices are on.
  sendResult(exec, result) {
    const { bridge, journal, ahead, settings } = this;
    if (ahead.drop(exec)) this.unsent.get(exec)?.(); // on a pass, stopped before its guard: not sent
    const agent = this.countedAgent(exec, { create: false });
    if (agent !== undefined) ahead.closed(exec, agent);
    if (agent === undefined) return [];
    const message = {
      op: 'result', agent: agent.id, call: String(exec.callId ?? ''), text: resultText(result, settings.resultTextChars),
      outcome: outcomeOf(result, settings.factFields, settings.factTextChars),
    };
    ahead.resulted(agent, String(exec.name), message.text, message.outcome);
    const committed = agent.committed; // what the passes its answer brings count from
    if (settings.notices || this.asked.delete(exec)) {
      // Only when advisories are switched on, or the call was asked about (a declined ask's
      // result, worded by dsh, is told why by a notice), does a result block for its reply.
      const answer = bridge.call(message);
      if (!answer.ok) throw new Error(answer.error);
      journal.result(message, message.text.length + 64);
      ahead.granted(agent, committed, answer.passes, bridge.generation, answer.conditional);
      return answer.notices ?? [];
    }
    if (bridge.later) {
      // Its answer, read on the event loop, brings the agent's passes (ahead.js); a worker
      // slow to give it is left to the next request that cannot wait. It is sent once this
      // turn of the event loop is over (or before any later request): the call is done first.
      // While the agent has passes enough, it goes as an event (ahead.quiet); while a call of its
      // group would pass, it waits and decides as it goes out (askingLate).
      const sent = () => journal.result(message, message.text.length + 64);
      if (ahead.quiet(agent, bridge.generation)) {
        this.idleSend(() => {
          bridge.notify(message);
          sent();
        });
      } else if (ahead.fitsGroup(agent, bridge.generation, exec)) {
        this.idleSend(this.askingLate(agent, message, committed, sent));
      } else {
        askWhenIdle(bridge, message, clock(), true, sent, ahead.refreshing(agent, committed, bridge.generation));
      }
    } else {
      bridge.notify(message); // a restart inside notify replays the journal without it, then sends it
      journal.result(message, message.text.length + 64);
    }
    return [];
  }

  // The send of a result of a call whose group would pass (ahead.fitsGroup): whether it asks for its
  // reply is decided as it goes out (ahead.asksLate), so a run of such calls asks once a write.
  askingLate(agent, message, committed, sent) {
    const { bridge, ahead } = this;
    const { generation } = bridge;
    const results = agent.results;
    const since = clock();
    return () => {
      if (ahead.asksLate(agent, results, generation)) {
        return askNow(bridge, message, since, true, sent, ahead.refreshing(agent, committed, generation, results));
      }
      bridge.notify(message);
      sent();
    };
  }

  // A notice the worker owes a call, as the UserMessage dsh appends after its result.
  noticeMessage({ text, summary }) {
    return {
      id: `${this.plugin}-${randomUUID()}`,
      role: 'user',
      content: [{ type: 'text', text }],
      source: { kind: 'plugin', plugin: this.plugin, form: 'notice', summary },
    };
  }

  // Each model turn: a user message clears the agent's window; then the turn itself begins (the
  // calls of one turn were sent together, before any of their answers: breaker/core/history/progress.py).
  preStep(step, next) {
    this.ran = true;
    try {
      const human = step?.messages?.some((message) => message?.source?.kind === 'user');
      const known = this.agents.of(step?.agent, { create: false });
      if (known !== undefined && human) {
        this.bridge.idle.flush(); // what waits for an idle moment came first: the journal has it before
        this.journal.cleared(known.id);
        this.ahead.sending(known, 'human');
        this.bridge.notify({ op: 'human', agent: known.id });
      }
      const agent = known ?? this.agents.of(step?.agent, { create: true }); // no frame: an id of its own
      if (agent !== undefined) agent.turnBegun = true;
    } catch (error) {
      this.logOnce(`could not record a new turn: ${error.message}`);
    }
    return next();
  }
}
