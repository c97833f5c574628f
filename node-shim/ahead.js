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
//   - fewer than maxAgents frames that make an agent the worker's most recent (preflight, guard,
//     commit) sent since: the worker forgets its idlest agent past maxAgents, and this agent,
//     most recent at its preflight, cannot have become the idlest and been forgotten in fewer.
// Otherwise the guard asks the worker as it always did. Which verdict is right stays the worker's
// business: this only decides whether the one it gave is still the one it would give.

export class AheadVerdicts {
  /** @param {number} maxAgents the worker's agent cap (its configure reply) */
  constructor(maxAgents) {
    this.maxAgents = maxAgents;
    this.touches = 0; // frames sent that make some agent the worker's most recent
    this.kept = new WeakMap(); // execution → what its preflight left for its guard
  }

  /** Per-agent bookkeeping, kept by the caller with its agent: frames sent, harmless preflights. */
  static agent(id) {
    return { id, sent: 0, harmless: 0 };
  }

  /** A frame for `agent` is about to be sent; `touches`: it makes that agent the most recent. */
  sending(agent, touches) {
    agent.sent++;
    if (touches) this.touches++;
  }

  /** A preflight of `exec` is about to be sent; returns its mark for `answered`. */
  preflighting(agent, generation) {
    this.sending(agent, true);
    return { sent: agent.sent, touches: this.touches, generation };
  }

  /**
   * The preflight's answer came back. One that did not ask changed nothing; when it carries a
   * verdict, that verdict is kept for the guard of `exec` with `message` (the call as sent) and
   * its `weight` (for the journal).
   */
  answered(exec, agent, mark, answer, message, weight) {
    if (typeof answer.ask === 'string') return;
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
  }
}
