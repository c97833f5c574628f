// @ts-check
// What the shim has told the worker about each live agent, kept so that a replacement worker can
// be brought to the same state: before a new worker hears anything about an agent, that agent's
// requests are replayed to it in their original order, and the core, being deterministic,
// rebuilds the same window. Agents are independent in the core, so each is restored on its own
// first request: recovery costs one agent's journal, however many agents are live.
//
// Bounded by what the window can still see: per agent, the last `window` guard requests (each
// guard commits one window entry), plus the results and asks that came after the oldest of
// them; and further back from the call the worker names (`keepFrom`), when the agent's state
// still depends on it (a failure streak kept alive by denied retries). A human message is kept in
// order (the worker's window starts afresh, its workspace does not); a forgotten agent drops its
// journal, as the worker does with its state. The window
// size, the agent cap and which requests make an agent the most recent (the order in which the
// worker forgets its idlest agents) come from the worker's settings: no policy lives here.
// A large call is journaled by its stand-in when the worker gave one (its long texts by digest,
// breaker/core/history/standin.py: the same call to the core), so megabytes of arguments cost bytes here.
// Bounded in bytes too (JOURNAL_BYTES, by the weight of each request, about its encoded size):
// past it the idlest agents are dropped, and an agent that alone outweighs it keeps its newest
// requests only. A call let through on a pass whose stand-in is on its way (`owed`) does not weigh
// against the bound until it comes, or the answer fails (the lost worker's successor gets the call
// as sent, and the next guard trims): its megabytes are about to shrink to bytes, and a loop of
// such calls must not push out the calls that count it. A dropped agent's window does not survive a worker loss: the loss then errs
// towards checking again, never towards committing what was not decided.
//
// What replaying must not do: a replayed ask is never put to the operator again and a replayed
// denial is never shown again (the bridge drops the replies of replayed requests); a request the
// worker never answered (a hung or dead worker) is not journaled, so a replay commits nothing
// that the lost worker had not decided, except a call that went through on a pass (it ran: the
// lost worker had promised to allow it).

/** Enough for a dozen agents each writing a dozen 200 KB files; replayed within a second. */
export const JOURNAL_BYTES = 32 * 1024 * 1024;

export class Journal {
  /**
   * @param {{window: number, maxAgents: number, operations: Record<string, {recent: boolean}>}} settings
   *   the worker's configure reply
   */
  constructor({ window, maxAgents, operations }, bytesLimit = JOURNAL_BYTES) {
    this.window = window;
    this.maxAgents = maxAgents;
    this.operations = operations;
    this.bytesLimit = bytesLimit;
    this.bytes = 0;
    this.owed = 0; // bytes of calls journaled as sent whose stand-in the worker is yet to give
    // agent id → {entries: [{message, weight}], oldest first; bytes; guards: how many entries are
    // guard requests}; least recently guarded first
    this.agents = new Map();
    // `${agent} ${call}` of calls preflighted whose agent was pushed out before their guard: the
    // worker keeps their verdicts, and their guard makes no agent (Breaker._dropped)
    this.settled = new Set();
  }

  /**
   * A request `op` about `agent` (and its `call`) was sent. The journal's agents are the worker's,
   * in its order, by its rule (the operations table, breaker/core/history/agents.py): a request
   * the table marks recent makes the agent the most recent, unless it is the guard of a call
   * whose preflight came before it (a preflight opens its call, its guard or commit closes it); a
   * new agent past maxAgents pushes out the idlest, whatever its calls await. Returns the agent's
   * journal, if it has one.
   */
  sent(op, agent, call) {
    let journal = this.agents.get(agent);
    const recent = this.operations[op]?.recent !== false;
    const preflighted = Boolean(call) && journal?.opened.has(call) === true;
    if (journal) {
      if (recent && !preflighted) {
        this.agents.delete(agent);
        this.agents.set(agent, journal);
      }
    } else if (recent) {
      journal = this.made(agent);
    }
    if (journal && call && op === 'preflight') {
      journal.opened.delete(call); // the latest request last: past the window the oldest goes
      journal.opened.add(call);
      if (journal.opened.size > this.window) journal.opened.delete(journal.opened.values().next().value);
    } else if (preflighted) {
      journal?.opened.delete(call);
    }
    return journal;
  }

  // A new agent's journal, the most recent; past maxAgents the idlest goes first (idlest).
  made(agent) {
    const journal = emptyJournal();
    if (this.agents.size >= this.maxAgents) this.pushOut(this.idlest());
    this.agents.set(agent, journal);
    return journal;
  }

  // The idlest agent goes, past maxAgents: its preflighted calls keep their verdicts in the worker.
  pushOut(agent) {
    for (const call of this.agents.get(agent)?.opened ?? []) {
      this.settled.add(`${agent} ${call}`);
      if (this.settled.size > 1024) this.settled.delete(this.settled.values().next().value);
    }
    this.drop(agent);
  }

  // The agent a new one pushes out: the idlest, whatever its calls await (as the worker).
  idlest() {
    return this.agents.keys().next().value;
  }

  /** A guard request the worker answered (or a call let through on a pass, or a kept verdict
   * committed: `op`), as a guard, and about how many bytes it encodes to; `owed` when its
   * stand-in is on its way (`restate` or `unowed` settles it). Returns its entry. */
  guard(message, weight, op = 'guard', owed = false) {
    if (this.settled.size > 0 && !this.agents.has(message.agent) && this.settled.delete(`${message.agent} ${message.call}`)) {
      return undefined; // decided before its agent was pushed out: nothing to rebuild
    }
    let journal = this.sent(op, message.agent, message.call);
    if (!journal) {
      journal = emptyJournal();
      this.agents.set(message.agent, journal);
    }
    const entry = this.add(journal, message, weight);
    if (owed) {
      entry.owed = true;
      this.owed += weight;
    }
    while (journal.guards > this.window && !this.pinned(journal)) this.dropOldestGuard(journal);
    if (this.over()) {
      for (const [agent, other] of this.agents) {
        if (!this.over() || other === journal) break;
        this.drop(agent);
      }
    }
    while (this.over() && journal.entries.length > 1) this.dropOldestGuard(journal);
    return entry;
  }

  // Whether what the journal holds, less what stand-ins on their way will give back, is past the bound.
  over() {
    return this.bytes - this.owed > this.bytesLimit;
  }

  /** The stand-in owed for `entry` will not come (its answer failed): it weighs as sent from now. */
  unowed(entry) {
    if (!entry?.owed) return;
    entry.owed = false;
    this.owed -= entry.weight;
  }

  /** The stand-in the worker gave for a call journaled as sent (`entry`, from `guard`, unless it
   * has left the journal since): kept instead, weighing `weight`. */
  restate(agent, entry, message, weight) {
    const journal = this.agents.get(agent);
    if (!journal?.entries.includes(entry)) return;
    this.unowed(entry);
    journal.bytes += weight - entry.weight;
    this.bytes += weight - entry.weight;
    entry.message = message;
    entry.weight = weight;
  }

  /**
   * The worker says from which call on the agent's calls rebuild what outlives its window
   * (`keepFrom`, Breaker.history_from: the failure that began a streak still alive), or null:
   * the journal keeps that call's guard and everything after it, past the window if need be
   * (not past the bytes).
   */
  keepFrom(agent, call) {
    const journal = this.agents.get(agent);
    if (journal) journal.keepFrom = typeof call === 'string' ? call : null;
  }

  // Whether the oldest guard is the call the worker said to keep from.
  pinned(journal) {
    const oldest = journal.entries.find((entry) => entry.message.op === 'guard');
    return journal.keepFrom !== null && oldest?.message.call === journal.keepFrom;
  }

  /** A preflight the worker answered with an ask (one that did not ask changed nothing). */
  asked(message, weight) {
    const journal = this.agents.get(message.agent);
    if (journal) this.add(journal, message, weight);
  }

  /** A result, kept when it is about a call still in the journal (any other changes nothing). */
  result(message, weight) {
    const journal = this.agents.get(message.agent);
    journal?.opened.delete(message.call); // no longer opened
    if (journal !== undefined && holdsCall(journal.entries, message.call)) this.add(journal, message, weight);
  }

  /** A model turn began (a step request sent just before the turn's first counted call): kept,
   * as the turn decides whether its calls' answers count as repeats (the worker enters the turn at
   * that call: Breaker.new_step). An agent with no journal yet gets one here, the most recent, as
   * its call, next, makes it in the worker. */
  stepped(message) {
    const journal = this.sent('step', message.agent) ?? this.made(message.agent);
    this.add(journal, message, 32);
  }

  /** A human message: the worker starts the agent's window afresh, but not its workspace (what
   * the calls before it changed still keys the calls after it, identity: state-aware), so the
   * message is kept in order like any request, and the calls before it leave as the window moves. */
  cleared(agent) {
    const journal = this.agents.get(agent);
    if (!journal) return;
    journal.opened = new Set(); // as the worker's agent registry forgets them at a human turn
    this.add(journal, { op: 'human', agent }, 32);
  }

  /** A forgotten agent (or one the worker forgot): the worker drops it whole, so does replay. */
  drop(agent) {
    const journal = this.agents.get(agent);
    if (!journal) return;
    this.bytes -= journal.bytes;
    for (const entry of journal.entries) this.unowed(entry);
    this.agents.delete(agent);
  }

  /** One agent's requests, in the order that rebuilds its state, and what they weigh together. */
  of(agent) {
    const journal = this.agents.get(agent);
    return { requests: journal?.entries.map((entry) => entry.message) ?? [], weight: journal?.bytes ?? 0 };
  }

  add(journal, message, weight) {
    const entry = { message, weight };
    journal.entries.push(entry);
    journal.bytes += weight;
    if (message.op === 'guard') journal.guards++;
    this.bytes += weight;
    return entry;
  }

  // The oldest guard's entry has left the window: drop it and everything before the next guard.
  dropOldestGuard(journal) {
    const next = journal.entries.findIndex((entry, index) => index > 0 && entry.message.op === 'guard');
    const dropped = journal.entries.splice(0, next === -1 ? journal.entries.length - 1 : next);
    let weight = 0;
    for (const entry of dropped) {
      this.unowed(entry);
      weight += entry.weight;
      if (entry.message.op === 'guard') journal.guards--;
    }
    journal.bytes -= weight;
    this.bytes -= weight;
  }
}

/** Whether an entry of `entries` is about `call` (a loop: no closure per result). */
function holdsCall(entries, call) {
  for (let index = 0; index < entries.length; index++) if (entries[index].message.call === call) return true;
  return false;
}

/** An agent's journal with nothing in it yet. */
function emptyJournal() {
  return { entries: [], bytes: 0, guards: 0, keepFrom: null, opened: new Set() };
}
