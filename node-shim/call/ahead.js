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
// counts every call that was or may still be committed (`spent`: passes taken, and calls its
// guard committed); while `spent` stays under those committed calls plus the passes, a
// pre-execute takes a pass and asks nothing: the call is committed there, at once (the worker
// gets it as an event once the event loop is idle, before any later request: worker/idle.js),
// and its guard allows it. So the worker decides it where dsh logged it, before any call of
// another agent whose pre-execute runs before this call's guard (the order `rtb replay` reads
// from the log: breaker/core/history/agents.py), and a pass is spent in the order passes are
// taken. A pass belongs to the worker that gave it; the call it commits goes to whichever worker
// is there when it is sent (a replacement first gets the agent's journal).
//
// A result brings passes too. Under the defaults an answer promises little while results are
// awaited (each may turn out one more of the same), so the shim sends each result with its reply
// awaited on the event loop (sent once the loop is idle, as above), and the worker answers with
// the passes as of once it is recorded: an agent whose model takes any time over its next call
// finds a pass waiting for it. A pre-execute that finds none while such answers are on their way
// has them sent at once if they wait still, and waits for them rather than ask, waking at each
// (`nextReply`): the worker answers an agent's results in order, and the answer to an earlier one
// may bring the pass before the latest one's comes. A result sent while the agent still has passes
// enough goes without its reply asked for (`quiet`); such a result and a call on a pass wait for
// the next send that must go, rather than wake the worker for them alone: the calls of one model
// turn go to it in one write after the second, not one inside each (docs/benchmarks.md, "What a
// call after a pause costs").
//
// An answer may promise more while results are news (`conditional`, breaker/core/reading/news.py):
// that many calls, counted the same way, surely pass as long as no result of the agent sent after
// the answered request breaks the condition (`NewsCheck`, evaluated on the text and facts the shim
// sends anyway). The shim keeps the last results' checks (`resulted`), so an answer that comes
// after later results were sent is checked against them at once; a result that breaks it ends
// the promise, and the next call beyond the plain passes waits for the worker as before. An
// answer that comes after more results than are kept (a worker far behind calls back to back)
// leaves the promise in effect as it was: that one still holds, checked as each result went.
//
// Such a promise may also name the groups of the agent's window, and list the window's calls by
// group, oldest first (`groups`, `window`, `room`: groups.js): a call beyond it passes while the
// condition holds if fewer than `room` of the calls still in its window (the last of the
// window's calls and of those committed since the answered request, as many as the window holds)
// are of its group or of its stand-ins: its tool's loose group, and for a URL tool the calls with
// no group, a shell line among them (groups.js `CallsSince` keeps and counts those since). The
// result of a call whose group would pass so waits too (`fitsGroup`), and whether it asks for its
// reply is decided as it goes out (`asksLate`): only the latest result of the agent asks, and
// only while no answer is on its way, so a run of such calls back to back asks once a write
// rather than once a call.
import { CallGroups, CallsSince, digestHead } from './groups.js';

/** Results of an agent whose checks are kept for an answer that comes after them. */
const CHECKED_RESULTS = 16;

/** Passes left to an agent with which a result of it goes as an event, its reply not asked for
 * (`quiet`): the next call takes one, and the result after it asks. */
export const QUIET_WHILE_LEFT = 2;

/**
 * What in a result breaks a conditional pass (the configure reply's `breaks`; its meaning is
 * breaker/core/reading/news.py `breaks`, pinned by test/conditions.test.js): a mark anywhere in
 * the text, a prefix at its start, a head within its first so many UTF-16 units with one of its
 * own marks anywhere, a fact with a value not listed; or its digest among those the answer names
 * or of a result before it since.
 */
export class NewsCheck {
  /** @param {{marks: string[], prefixes: string[], heads: [string, number, string[]][], facts: Record<string, unknown[]>}} breaks */
  constructor({ marks, prefixes, heads, facts }) {
    this.marks = marks;
    this.prefixes = prefixes;
    this.heads = heads;
    /** @type {[string, Set<unknown>][]} */
    this.facts = Object.entries(facts).map(([field, values]) => [field, new Set(values)]);
  }

  /** Whether a result's text or outcome breaks every condition (its digest aside). Indexed
   * loops and no slice: nothing allocated on a result's way. */
  breaks(text, outcome) {
    const { marks, prefixes, heads, facts } = this;
    for (let index = 0; index < marks.length; index++) if (text.includes(marks[index])) return true;
    for (let index = 0; index < prefixes.length; index++) if (text.startsWith(prefixes[index])) return true;
    for (let index = 0; index < heads.length; index++) {
      const head = heads[index][0]; // no destructuring: an array's iterator is an object
      const at = text.indexOf(head); // the first is within the units if any is
      if (at !== -1 && at + head.length <= heads[index][1] && holdsAny(text, heads[index][2])) return true;
    }
    if (outcome === null || typeof outcome !== 'object') return false;
    for (let index = 0; index < facts.length; index++) {
      const field = facts[index][0];
      if (Object.hasOwn(outcome, field) && !facts[index][1].has(outcome[field])) return true;
    }
    return false;
  }

  /** A result's digest as conditions name it: SHA-256 of tool, NUL, text; its first 6 bytes
   * (`digestHead`). */
  digest(tool, text) {
    return digestHead(`${tool}\0${text}`);
  }
}

/** Whether `text` holds one of a head's `marks`; a head given without its marks (no list) breaks
 * a condition on its own. */
function holdsAny(text, marks) {
  if (!Array.isArray(marks)) return true;
  for (let index = 0; index < marks.length; index++) if (text.includes(marks[index])) return true;
  return false;
}

/** A promise and what settles it (the wait of a pre-execute for its agent's next reply). */
function settable() {
  /** @type {() => void} */
  let settle = () => {};
  /** @type {Promise<void>} */
  const promise = new Promise((resolve) => (settle = resolve));
  return { promise, settle };
}

export class AheadVerdicts {
  /**
   * @param {number} maxAgents the worker's agent cap (its configure reply)
   * @param {Record<string, {recent: boolean, changes: 'always' | 'when it asks'}>} operations what
   *   each request does to its agent (the configure reply's, breaker/core/history/agents.py OPERATIONS):
   *   whether it makes it the most recent, and when it drops verdicts kept ahead
   */
  constructor(maxAgents, operations, breaks = undefined, grouping = undefined) {
    this.maxAgents = maxAgents;
    this.news = breaks ? new NewsCheck(breaks) : null; // none: the worker gives no conditions
    this.groups = grouping ? new CallGroups(grouping) : null; // none: no promise by group
    this.operations = operations;
    this.touches = 0; // frames sent that make some agent the worker's most recent
    this.kept = new WeakMap(); // execution → what its preflight left for its guard
    this.passed = new WeakSet(); // executions that went through on a pass at pre-execute
    this.open = new WeakSet(); // executions preflighted whose guard has not run
  }

  /**
   * Per-agent bookkeeping, kept by the caller with its agent: frames sent, harmless preflights,
   * calls committed or let through, and how many may be by then (under which worker).
   */
  static agent(id) {
    // turnBegun: a model turn began (agent/pre-step) that the worker has not been told of yet
    // awaited: answers to the agent's results on their way; reply: a wait for the next (see nextReply)
    // results: results sent; checked: the last ones' checks, for an answer that comes after them;
    // conditional: the passes while results are news, while they are (see the top)
    // open: calls preflighted whose guard has not run: a pass waits for them (calls commit in order)
    // since: the calls committed since the latest answer's request, for a promise by group
    return {
      id, sent: 0, harmless: 0, committed: 0, spent: 0, allowance: 0, allowanceGeneration: -1, turnBegun: false, awaited: 0, reply: null,
      results: 0, checked: [], conditional: null, open: 0, since: new CallsSince(),
    };
  }

  /**
   * A result of `agent` goes to worker `generation` after `committed` committed calls, its reply
   * awaited: returns what takes that reply (the answer; anything else, such as the error of a
   * lost worker, brings nothing), which grants the passes it brings and ends a wait for it.
   */
  refreshing(agent, committed, generation, results = agent.results) {
    agent.awaited++;
    return (answer) => {
      agent.awaited--;
      if (answer?.ok === true) this.granted(agent, committed, answer.passes, generation, answer.conditional, results);
      const waiting = agent.reply;
      agent.reply = null;
      waiting?.settle();
    };
  }

  /**
   * A promise settled at the next answer to one of the agent's results (whatever it brings: each
   * may grant a pass, the worker answering them in order), or null when none is on its way. One
   * is made only for a pre-execute that waits.
   * @returns {Promise<void> | null}
   */
  nextReply(agent) {
    if (agent.awaited <= 0) return null;
    agent.reply ??= settable();
    return agent.reply.promise;
  }

  /**
   * A frame that commits a call is about to be sent: `op`, a guard or a commit; `passed`, a call
   * that reserved its pass (it was spent then). Returns the committed count to mark a request with.
   */
  committing(agent, op, passed = false, exec = undefined) {
    this.sending(agent, op);
    if (!passed) agent.spent++;
    agent.committed++;
    if (this.groups !== null) agent.since.add(agent.committed, exec);
    return agent.committed;
  }

  /**
   * An answer from worker `generation` to a request sent after `committed` committed calls and
   * `results` results of the agent: its passes, and its `conditional` ones when it gives them.
   */
  granted(agent, committed, passes, generation, conditional = undefined, results = agent.results) {
    if (!Number.isSafeInteger(passes) || passes < 0) return;
    const standing = agent.allowanceGeneration === generation ? agent.conditional : null;
    agent.allowance = committed + passes;
    agent.allowanceGeneration = generation;
    // An answer that came after more results than are kept to check it against leaves the
    // promise in effect as it was: that one still holds, checked as each result went.
    agent.conditional = this.checkable(agent, results) ? this.promised(agent, committed, conditional, results) : standing;
    // the calls before its mark are the worker's
    if (this.groups !== null) agent.since.answered(agent.conditional?.mark ?? committed);
  }

  // Whether the results of `agent` sent since the `results`th are all kept to be checked.
  checkable(agent, results) {
    const since = agent.results - results;
    return since >= 0 && since <= agent.checked.length;
  }

  // The conditional promise of an answer, checked against the results sent since its request
  // (all kept: `checkable`); null when there is none or one of them broke it.
  promised(agent, committed, conditional, results) {
    const passes = conditional?.passes;
    if (this.news === null || !Number.isSafeInteger(passes) || !Array.isArray(conditional.digests)) return null;
    const since = agent.results - results;
    const promise = { until: committed + passes, forbidden: new Set(conditional.digests), mark: committed, named: null, window: null, room: 0 };
    const { groups, window, room } = conditional;
    if (this.groups !== null && this.groups.window > 0 && Array.isArray(groups) && Array.isArray(window) && window.every((at) => Number.isSafeInteger(at) && at >= -1 && at < groups.length) && Number.isSafeInteger(room)) {
      promise.named = groups; // the answer's own lists: a window's few, never changed
      promise.window = window;
      promise.room = room;
    }
    for (const check of agent.checked.slice(agent.checked.length - since)) {
      if (!this.keeps(promise, check)) return null;
    }
    return promise;
  }

  // Whether a result (its check) keeps a conditional promise; its digest is forbidden after it.
  keeps(promise, { digest, breaks }) {
    if (breaks || promise.forbidden.has(digest)) return false;
    promise.forbidden.add(digest); // as many as results sent since its answer: a set
    return true;
  }

  /**
   * Whether a result of `agent`, checked (`resulted`), may go as an event, its reply not asked
   * for: the latest answer of worker `generation` still lets at least QUIET_WHILE_LEFT more calls
   * through whatever they are (its passes, or its conditional ones while results are news), so
   * the passes its reply would bring are not wanted yet. The worker then makes no promise and
   * writes no reply, and the event loop reads none.
   */
  quiet(agent, generation) {
    return this.allows(agent, agent.spent + QUIET_WHILE_LEFT - 1, generation); // whatever the calls are: no group
  }

  /**
   * Whether a result of `agent` that waited (its call's group would pass: `fitsGroup`), the
   * `results`th, asks for its reply as it goes out: it is the agent's latest, no answer is on its
   * way, and the passes of worker `generation` are not enough to go without (`quiet`). Else the
   * calls that followed it carry the ask, or the answer on its way brings the passes.
   */
  asksLate(agent, results, generation) {
    return agent.results === results && agent.awaited === 0 && !this.quiet(agent, generation);
  }

  /** A result of `agent` (`tool`'s) is about to be sent (`sending`): checked against its promises. */
  resulted(agent, tool, text, outcome) {
    this.sending(agent, 'result');
    if (this.news === null) return;
    const check = { digest: this.news.digest(tool, text), breaks: this.news.breaks(text, outcome) };
    agent.results++;
    if (agent.checked.push(check) > CHECKED_RESULTS) agent.checked.shift();
    if (agent.conditional !== null && !this.keeps(agent.conditional, check)) agent.conditional = null;
  }

  // Whether a call of `agent` with `count` calls spent (or committed) before it is within the
  // latest answer's passes from worker `generation`, or its conditional ones while they hold.
  allows(agent, count, generation, exec = undefined) {
    return this.counts(agent, count, generation) || this.fitsGroup(agent, generation, exec);
  }

  // Whether the `count`th call of `agent` is within the passes of worker `generation` whatever it is.
  counts(agent, count, generation) {
    if (agent.allowanceGeneration !== generation) return false;
    const promise = agent.conditional;
    return count < agent.allowance || (promise !== null && count < promise.until);
  }

  // Whether `exec` of `agent` passes by its group on the latest promise of worker `generation`;
  // of a call done, whether the next call of its group would (its result may then wait to ask for
  // its reply: `asksLate`).
  fitsGroup(agent, generation, exec) {
    const promise = agent.conditional;
    if (agent.allowanceGeneration !== generation || promise === null || promise.named === null || exec === undefined) return false;
    return this.byGroup(agent, promise, exec);
  }

  // Whether `exec` passes by its group on `promise` (see the top; stated in Python as
  // breaker/core/deciding/passes.py `by_group`): fewer than the room of the calls still in its
  // window (the last `window` of the promise's window and of the calls committed since its mark,
  // in order) are of its group or of its stand-ins (its tool's loose group; for a URL tool, the
  // calls with no group too).
  byGroup(agent, promise, exec) {
    const groups = /** @type {CallGroups} */ (this.groups);
    const group = groups.ofCall(exec);
    if (group === 0) return false;
    const standIns = groups.standIns(String(exec.name));
    if (standIns.includes(group)) return false;
    const { named, window, room } = promise;
    const size = groups.window;
    const since = agent.committed - promise.mark;
    let alike = 0;
    for (let index = Math.max(0, window.length + since - size); index < window.length; index++) {
      const at = window[index];
      if (at !== -1 && (named[at] === group || standIns.includes(named[at]))) alike++; // -1: of no group named
    }
    return alike < room && alike + agent.since.alike(groups, promise.mark, agent.committed, size, group, standIns) < room;
  }

  /**
   * At pre-execute: whether `exec` goes through on a pass. If it does, the pass is spent and the
   * call committed now: the caller sends it (as a guard event).
   */
  reserve(exec, agent, generation) {
    if (agent.open > 0 || !this.allows(agent, agent.spent, generation, exec)) return false;
    agent.spent++;
    this.passed.add(exec);
    this.committing(agent, 'guard', true, exec);
    return true;
  }

  /** At the guard: whether `exec` went through on a pass at its pre-execute (taken). */
  usePass(exec) {
    return this.passed.delete(exec);
  }

  /** `exec` of `agent` is preflighted: until its guard runs (`closed`), no call of the agent
   * takes a pass, which would be committed before it. */
  opened(exec, agent) {
    if (this.open.has(exec)) return;
    this.open.add(exec);
    agent.open++;
  }

  /** The guard of `exec` ran, or the call is over. */
  closed(exec, agent) {
    if (this.open.delete(exec)) agent.open--;
  }

  /** A request `op` about `agent` is about to be sent (counted as the operations table says). */
  sending(agent, op) {
    agent.sent++;
    if (this.operations[op]?.recent !== false) this.touches++; // an op not in the table counts
  }

  /** A preflight of `exec` is about to be sent; returns its mark for `answered`. */
  preflighting(agent, generation) {
    this.sending(agent, 'preflight');
    return { sent: agent.sent, touches: this.touches, generation, committed: agent.committed, results: agent.results };
  }

  /**
   * The preflight's answer came back. One that did not ask changed nothing; when it carries a
   * verdict, that verdict is kept for the guard of `exec` with `message` (the call as sent) and
   * its `weight` (for the journal).
   */
  answered(exec, agent, mark, answer, message, weight) {
    if (typeof answer.ask === 'string' || this.operations.preflight?.changes !== 'when it asks') return;
    this.granted(agent, mark.committed, answer.passes, mark.generation, answer.conditional, mark.results);
    agent.harmless++;
    if (answer.decided !== true) return;
    const deny = typeof answer.deny === 'string' ? answer.deny : undefined;
    this.kept.set(exec, { agent, message, weight, deny, counted: answer.counted, ...mark, harmless: agent.harmless });
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
    return this.passed.delete(exec);
  }

  /** A call on a pass that never reached its guard (another listener or guard stopped it) and
   * was not sent yet: it is not committed after all (its pass stays spent). */
  uncommit(agent) {
    agent.since.remove(agent.committed);
    agent.committed--;
  }
}
