// @ts-check
// One line on stderr when the configuration counts none of the tools dsh has. An `include`
// list whose entries are all mistyped (`include: [bsh]`) leaves the breaker stopping nothing,
// without a word; so does an `exclude` of `*`. Which tools count is the worker's pattern
// (`settings.countedTools`, breaker/core/reading/counted.py): this only applies it to the names of
// the tools dsh has and offers the calling agent, once, when the agents have made UNCOUNTED_CALLS calls and not
// one was counted. By then every plugin has registered its tools (an MCP server's too), so a
// configuration that counts one of them, called or not yet, is never named.

/** The calls, none counted, after which the tools dsh has (and offers the calling agent) are looked at. */
export const UNCOUNTED_CALLS = 16;
/** At most this many of the agent's tools are named in the line. */
const NAMED_TOOLS = 8;

/** A tool's name as a line shows it: word characters, `.`, `:`, `-` and `*`, the rest `?`. */
export const printable = (name) => String(name).replace(/[^\w.:*-]/g, '?').slice(0, 64);

/** Up to NAMED_TOOLS of `names`, sorted, and `…` for the rest. */
function named(names) {
  const sorted = names.map(printable).sort();
  return sorted.slice(0, NAMED_TOOLS).join(', ') + (sorted.length > NAMED_TOOLS ? ', …' : '');
}

/**
 * The line for a configuration that counts none of `names` (dsh's tools), `lists` being its
 * include and exclude and `called` the tools of the calls not counted.
 */
export function countsNothing(names, lists, called) {
  return `the config counts none of the ${names.length} tools dsh has (${named(names)}), so it stops no ` +
    `call: ${UNCOUNTED_CALLS} calls so far (${named(called)}), none counted (${lists}). Fix: list in include ` +
    'the tools to count as dsh names them (`*` wildcards; none: every tool), and in exclude only tools never to count';
}

export class UncountedWatch {
  /**
   * @param {RegExp} counted the worker's pattern of the counted tool names
   * @param {(agent: any) => string[]} toolNames the names of dsh's tools and of those it offers an agent
   * @param {string} lists the config's include and exclude, as the line quotes them
   * @param {(text: string) => void} log a line on stderr
   */
  constructor(counted, toolNames, lists, log) {
    this.counted = counted;
    this.toolNames = toolNames;
    this.lists = lists;
    this.log = log;
    this.calls = 0;
    /** The tools of the calls not counted, up to NAMED_TOOLS + 1 of them. */
    this.called = new Set();
    this.done = false;
  }

  /** A call was counted: the configuration counts a tool, and nothing is looked at any more. */
  sawCounted() {
    this.done = true;
  }

  /** A call of `tool` by `agent` was not counted: at the UNCOUNTED_CALLS-th, the agent's tools are looked at. */
  sawUncounted(tool, agent) {
    if (this.done) return;
    if (this.called.size <= NAMED_TOOLS) this.called.add(tool);
    if (++this.calls < UNCOUNTED_CALLS) return;
    this.done = true;
    let names;
    try {
      names = this.toolNames(agent).filter((name) => typeof name === 'string');
    } catch {
      return; // a registry shaped otherwise: nothing is said
    }
    if (names.length > 0 && !names.some((name) => this.counted.test(name))) {
      this.log(countsNothing(names, this.lists, [...this.called]));
    }
  }
}
