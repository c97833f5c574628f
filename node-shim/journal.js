// What the shim has told the worker about each live agent, kept so that a replacement worker can
// be brought to the same state: the requests are replayed in their original order after
// `configure`, and the core, being deterministic, rebuilds the same windows.
//
// Bounded by what the window can still see: per agent, the last `window` guard requests (each
// guard commits one window entry), plus the results and asks that came after the oldest of
// them. A human message or a forgotten agent drops its journal, as the worker drops its state.
// The window size and the agent cap come from the worker's settings: no policy lives here.
//
// What replaying must not do: a replayed ask is never put to the operator again and a replayed
// denial is never shown again (the bridge drops the replies of replayed requests); a request the
// worker never answered (a hung or dead worker) is not journaled, so a replay commits nothing
// that the lost worker had not decided.

export class Journal {
  /** @param {{window: number, maxAgents: number}} settings the worker's configure reply */
  constructor({ window, maxAgents }) {
    this.window = window;
    this.maxAgents = maxAgents;
    this.agents = new Map(); // agent id → its requests, oldest first; least recently guarded first
  }

  /** A guard request the worker answered. */
  guard(message) {
    let requests = this.agents.get(message.agent);
    if (requests) {
      this.agents.delete(message.agent); // re-inserted last, as the core orders its agents
    } else {
      requests = [];
      // The core forgets its idlest agent past maxAgents; so does the journal.
      if (this.agents.size >= this.maxAgents) this.agents.delete(this.agents.keys().next().value);
    }
    this.agents.set(message.agent, requests);
    requests.push(message);
    const guards = requests.filter((request) => request.op === 'guard').length;
    if (guards > this.window) {
      // The oldest guard's entry has left the window: drop it and everything before the next guard.
      const next = requests.findIndex((request, index) => index > 0 && request.op === 'guard');
      requests.splice(0, next);
    }
  }

  /** A preflight the worker answered with an ask (one that did not ask changed nothing). */
  asked(message) {
    this.agents.get(message.agent)?.push(message);
  }

  /** A result, kept when it is about a call still in the journal (any other changes nothing). */
  result(message) {
    const requests = this.agents.get(message.agent);
    if (requests?.some((request) => request.call === message.call)) requests.push(message);
  }

  /** A human message or a forgotten agent: the worker starts that agent afresh, so does replay. */
  drop(agent) {
    this.agents.delete(agent);
  }

  /** Every journaled request, in an order that rebuilds the worker's state. */
  *requests() {
    for (const requests of this.agents.values()) yield* requests;
  }
}
