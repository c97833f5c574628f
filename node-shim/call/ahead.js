// @ts-check
// Verdicts the worker gave ahead of the guard, and whether one still holds when the guard runs.
//
// dsh awaits `tools/pre-execute` before it calls the (synchronous) guard, so the shim sends the
// call there (a `preflight` request) and the worker answers with the ask, or with the verdict its guard
// would give as of that moment. The guard may use that verdict without a round trip only if the
// worker's state for the agent cannot have changed in between, which the shim can tell from what
// it sent, the pipe being ordered:
//   - the same worker (a replacement starts from the journal and knows no kept verdict);
//   - nothing sent for that agent since, except preflights whose answers came back without asking
//     (a preflight that did not ask changes nothing the guard reads; answers come in order, so
//     those counted after this one's are exactly the ones sent after it);
//   - fewer than maxAgents frames that make an agent the worker's most recent sent since: the
//     worker forgets its idlest agent past maxAgents, and this agent, most recent at its
//     preflight, cannot have become the idlest and been forgotten in fewer.
// Which requests make an agent the most recent, and which change what a verdict reads (a
// preflight only when it asks), is the worker's table (breaker/core/history/agents.py OPERATIONS, in its
// configure reply): applied here, never restated.
// Otherwise the guard asks the worker as it always did. Which verdict is right stays the worker's
// business: this only decides whether the one it gave is still the one it would give.
//
// Passes go further. Each answer to a preflight or a guard says how many more calls of the agent
// the worker will surely allow (`passes`, breaker/core/decision.py), counting from what it had
// been sent when it answered: the calls committed before the request (`committed`). The shim
// counts every call that was or may still be committed (`spent`: passes reserved, and calls its
// guard committed); while `spent` stays under those committed calls plus the passes, a
// pre-execute reserves a pass and asks nothing, and the call's guard allows it and has the call
// sent as an event once the event loop is idle (before any later request: bridge.js whenIdle),
// to be decided in order like any other. The worker decides it where the guard
// sends it, so the pass is spent in order: it is used only while the calls committed so far are
// fewer than the latest answer allows; when other calls' guards ran first and used that room up,
// this call's guard asks the worker like any other. A pass belongs to the worker that gave it;
// one reserved by a call that never reaches its guard stays spent, which only wastes it.
//
// A result brings passes too. Under the defaults an answer promises little while results are
// awaited (each may turn out one more of the same), so the shim sends each result with its reply
// awaited on the event loop (sent once the loop is idle, as above), and the worker answers with
// the passes as of once it is recorded: an agent whose model takes any time over its next call
// finds a pass waiting for it. A pre-execute that finds none while such an answer is on its way
// has it sent at once if it waits still, and waits for the answer rather than ask.

export class AheadVerdicts {
  /**
   * @param {number} maxAgents the worker's agent cap (its configure reply)
   * @param {Record<string, {recent: boolean, changes: 'always' | 'when it asks'}>} operations what
   *   each request does to its agent (the configure reply's, breaker/core/history/agents.py OPERATIONS):
   *   whether it makes it the most recent, and when it drops verdicts kept ahead
   */
  constructor(maxAgents, operations) {
    this.maxAgents = maxAgents;
    this.operations = operations;
    this.touches = 0; // frames sent that make some agent the worker's most recent
    this.kept = new WeakMap(); // execution → what its preflight left for its guard
    this.passed = new WeakMap(); // execution → the worker (generation) whose pass it reserved
  }

  /**
   * Per-agent bookkeeping, kept by the caller with its agent: frames sent, harmless preflights,
   * calls committed or let through, and how many may be by then (under which worker).
   */
  static agent(id) {
    // turnBegun: a model turn began (agent/pre-step) that the worker has not been told of yet
    // refresh: the answer to the agent's latest result while it is on its way (see refreshing)
    return { id, sent: 0, harmless: 0, committed: 0, spent: 0, allowance: 0, allowanceGeneration: -1, turnBegun: false, refresh: null };
  }

  /**
   * A result of `agent` went to worker `generation` after `committed` committed calls, its reply
   * awaited (`reply`, a promise): the passes it brings are granted when it comes. Until then it
   * is the agent's `refresh`, for a pre-execute to wait for; a lost worker's brings nothing.
   */
  refreshing(agent, reply, committed, generation) {
    const settle = (answer) => {
      if (agent.refresh === pending) agent.refresh = null;
      if (answer?.ok) this.granted(agent, committed, answer.passes, generation);
    };
    const pending = reply.then(settle, () => settle(undefined));
    agent.refresh = pending;
  }

  /**
   * A frame that commits a call is about to be sent: `op`, a guard or a commit; `passed`, a call
   * that reserved its pass (it was spent then). Returns the committed count to mark a request with.
   */
  committing(agent, op, passed = false) {
    this.sending(agent, op);
    if (!passed) agent.spent++;
    return ++agent.committed;
  }

  /** An answer from worker `generation` to a request sent after `committed` committed calls. */
  granted(agent, committed, passes, generation) {
    if (!Number.isSafeInteger(passes) || passes < 0) return;
    agent.allowance = committed + passes;
    agent.allowanceGeneration = generation;
  }

  /** At pre-execute: whether `exec` may go through on a pass (one is then reserved for it). */
  reserve(exec, agent, generation) {
    if (agent.allowanceGeneration !== generation || agent.spent >= agent.allowance) return false;
    agent.spent++;
    this.passed.set(exec, generation);
    return true;
  }

  /**
   * At the guard: whether `exec` holds a pass (taken either way) that still holds now: one of the
   * current worker, and this call, sent now, is within the passes of its latest answer (fewer
   * calls committed than it allows). A pass is spent in order: when other calls of the agent
   * were committed first (their guards ran before this one's), the guard asks the worker instead.
   */
  usePass(exec, agent, generation) {
    const reserved = this.passed.get(exec);
    this.passed.delete(exec);
    return reserved === generation && agent.allowanceGeneration === generation && agent.committed < agent.allowance;
  }

  /** A request `op` about `agent` is about to be sent (counted as the operations table says). */
  sending(agent, op) {
    agent.sent++;
    if (this.operations[op]?.recent !== false) this.touches++; // an op not in the table counts
  }

  /** A preflight of `exec` is about to be sent; returns its mark for `answered`. */
  preflighting(agent, generation) {
    this.sending(agent, 'preflight');
    return { sent: agent.sent, touches: this.touches, generation, committed: agent.committed };
  }

  /**
   * The preflight's answer came back. One that did not ask changed nothing; when it carries a
   * verdict, that verdict is kept for the guard of `exec` with `message` (the call as sent) and
   * its `weight` (for the journal).
   */
  answered(exec, agent, mark, answer, message, weight) {
    if (typeof answer.ask === 'string' || this.operations.preflight?.changes !== 'when it asks') return;
    this.granted(agent, mark.committed, answer.passes, mark.generation);
    agent.harmless++;
    if (answer.decided !== true) return;
    const deny = typeof answer.deny === 'string' ? answer.deny : undefined;
    this.kept.set(exec, { agent, message, weight, deny, ...mark, harmless: agent.harmless });
  }

  /** The kept verdict of `exec` if it still holds (see above), taken either way; else undefined. */
  take(exec, agent, generation) {
    const kept = this.kept.get(exec);
    if (kept === undefined) return undefined;
    this.kept.delete(exec);
    const holds =
      kept.agent === agent &&
      kept.generation === generation &&
      agent.sent - kept.sent === agent.harmless - kept.harmless &&
      this.touches - kept.touches < this.maxAgents - 1;
    return holds ? kept : undefined;
  }

  /** The call will not reach the guard (it is over): nothing is kept for it. */
  drop(exec) {
    this.kept.delete(exec);
    this.passed.delete(exec);
  }
}
