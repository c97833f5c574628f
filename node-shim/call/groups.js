// @ts-check
// A call's group: which calls could share a key, read from the arguments as the shim sends them.
// What a group is and why a call of a group the window does not hold passes is the worker's
// (breaker/core/reading/groups.py, breaker/core/deciding/passes.py); this computes the same digest
// from the configure reply's table (`grouping`), for a call that finds no pass (ahead.js), and
// for the calls sent since the promise it is checked against. test/groups.test.js pins the two.
//
// Only arguments the worker surely gets as they are here are read: a plain object of at most
// MOST_ARGUMENTS names of printable ASCII, each a string of at most MOST_TEXT_UNITS units, a
// finite number, a boolean or null (its copy, arguments.js, is then the very same). A call of a
// tool with a group whose arguments are anything else is taken as loose: its tool's group, which
// stands for every call of the tool. A shell tool has none; a URL tool, only while the worker says
// so (`urls`): a call given a URL is grouped by the last name of its path when it is written
// plainly (`plainUrl`), whatever the tool, else it is loose, and every URL tool has one loose group.
import { hash } from 'node:crypto';

const MOST_ARGUMENTS = 64;
const MOST_TEXT_UNITS = 4096;
const PRINTABLE = /^[\x20-\x7e]*$/;
const LOOSE = null;

/** A group as a number: the first 6 bytes of SHA-256 of `text` in UTF-8 (0 reads as 1). */
export function groupDigest(text) {
  return digestHead(text) || 1;
}

/** The first 6 bytes of SHA-256 of `text` in UTF-8, as a number (breaker/core/reading/news.py
 * `head`: a result's digest, a call's group), read from the digest as a string of bytes. */
export function digestHead(text) {
  const bytes = hash('sha256', text, 'binary'); // latin1: a char a byte
  let value = 0;
  for (let index = 0; index < 6; index++) value = value * 256 + bytes.charCodeAt(index);
  return value;
}

/** What a URL group's digest reads before the last name of its path, and every URL tool's loose
 * group's (groups.py `_URL_GROUP`, `_URL_LOOSE`). */
const URL_GROUP = '\x02';
const URL_LOOSE = '\x03';

export class CallGroups {
  /**
   * @param {{apart: string[], urlMarks: string[], pathArgs: string[], pathSuffix: string, urlArgs: string[],
   *   urlListArgs: string[], plainUrl: string, urls: boolean, window: number, ignored: Record<string, string[]>}} grouping
   *   the configure reply's
   */
  constructor({ apart, urlMarks, pathArgs, pathSuffix, urlArgs, urlListArgs, plainUrl, urls, window, ignored }) {
    this.apart = new Set(apart);
    this.urlMarks = urlMarks;
    this.pathArgs = new Set(pathArgs);
    this.pathSuffix = pathSuffix;
    this.urlArgs = new Set(urlArgs);
    this.urlNames = [...urlArgs, ...urlListArgs]; // the names a URL tool may be given a URL under
    this.urlListArgs = new Set(urlListArgs);
    this.plainUrl = new RegExp(`^(?:${plainUrl})$`);
    this.urls = urls === true;
    this.window = Number.isSafeInteger(window) && window > 0 ? window : 0; // the window's size (0: not told)
    this.shared = new Set(ignored['*'] ?? []);
    this.ignored = ignored;
    /** @type {Map<string, {group: number, loose: number, url: boolean, standIns: number[]}>} */
    this.tools = new Map(); // tool -> what its name says (`tool`): the tools seen
    /** @type {WeakMap<object, number>} */
    this.known = new WeakMap(); // execution -> its group, as first read
  }

  /** The group of the call `exec` (`of` its name and arguments), read once a call. */
  ofCall(exec) {
    if (exec === null || typeof exec !== 'object') return 0; // not a call: never promised by group
    let group = this.known.get(exec);
    if (group === undefined) {
      group = this.of(exec.name, exec.arguments);
      this.known.set(exec, group);
    }
    return group;
  }

  /** The group of a tool's loose calls (groups.py `loose`). */
  loose(tool) {
    return this.tool(tool).loose;
  }

  /** The groups whose calls count against a call of `tool` besides its own group's (groups.py
   * `stand_ins`): its loose group, and for a URL tool the calls with no group (0). */
  standIns(tool) {
    return this.tool(tool).standIns;
  }

  /** What the name `tool` says, read once a tool (of the last 256 seen), as every call of it asks:
   * its loose group when its calls have groups (else 0: `group`), its loose group whatever
   * (`loose`), whether it takes a URL, and its stand-ins. */
  tool(tool) {
    let known = this.tools.get(tool);
    if (known === undefined) {
      const lowered = tool.toLowerCase();
      const url = !this.apart.has(lowered) && this.urlMarks.some((mark) => lowered.includes(mark));
      const loose = groupDigest(url ? URL_LOOSE : tool);
      const grouped = PRINTABLE.test(tool) && !this.apart.has(lowered) && (this.urls || !url);
      known = { group: grouped ? loose : 0, loose, url, standIns: url ? [loose, 0] : [loose] };
      if (this.tools.size >= 256) this.tools.clear();
      this.tools.set(tool, known);
    }
    return known;
  }

  /**
   * The group of a call of `tool` with `args` (its tool's loose group when it may be any), or 0
   * when calls of the tool have none.
   * @returns {number}
   */
  of(tool, args) {
    if (typeof tool !== 'string') return 0; // never promised by group
    const known = this.tool(tool);
    if (known.group === 0) return 0;
    const fields = this.fields(tool, args);
    if (fields === LOOSE) return known.loose;
    if (known.url) {
      const url = this.urlGroup(tool, /** @type {Record<string, unknown>} */ (args));
      if (url !== 0) return url;
    }
    return groupDigest(`${tool}\0${fields.sort().join('\0')}`);
  }

  /** The group of a call of URL tool `tool` given a URL (groups.py `url_group`): the last name of
   * its path when it is written plainly, else the tool's loose group; 0 when it is given none.
   * `args` were read by `fields` already. */
  urlGroup(tool, args) {
    const own = Object.hasOwn(this.ignored, tool) && tool !== '*' ? this.ignored[tool] : [];
    const names = this.urlNames;
    let given = null;
    for (let index = 0; index < names.length; index++) {
      const name = names[index];
      if (!Object.hasOwn(args, name) || this.shared.has(name) || own.includes(name)) continue;
      if (given !== null) return this.loose(tool); // a second URL
      given = name;
    }
    if (given === null) return 0;
    const url = args[given];
    if (typeof url !== 'string' || this.urlListArgs.has(given)) return this.loose(tool);
    const plain = this.plainUrl.exec(url);
    if (plain === null || plain[1].includes('/.')) return this.loose(tool);
    const path = plain[1].replace(/\/+$/, '');
    return groupDigest(URL_GROUP + path.slice(path.lastIndexOf('/') + 1));
  }

  /** Each argument but a decoy as `name\x01token`, or LOOSE. @returns {string[] | null} */
  fields(tool, args) {
    if (args === null || typeof args !== 'object' || Array.isArray(args)) return LOOSE;
    const prototype = Object.getPrototypeOf(args);
    if ((prototype !== Object.prototype && prototype !== null) || typeof args.toJSON === 'function') return LOOSE;
    const own = Object.hasOwn(this.ignored, tool) && tool !== '*' ? this.ignored[tool] : [];
    try {
      const names = Object.keys(args);
      if (names.length > MOST_ARGUMENTS) return LOOSE;
      const fields = [];
      for (const name of names) {
        if (!PRINTABLE.test(name)) return LOOSE;
        if (this.shared.has(name) || own.includes(name)) continue;
        const token = this.token(name, args[name]);
        if (token === LOOSE) return LOOSE;
        fields.push(`${name}\x01${token}`);
      }
      return fields;
    } catch {
      return LOOSE; // a getter that throws: the copy holds what the worker reads, not this
    }
  }

  /** One argument's token (groups.py `_token`), or LOOSE. */
  token(name, value) {
    switch (typeof value) {
      case 'string':
        if (value.length > MOST_TEXT_UNITS) return LOOSE;
        if (this.urlArgs.has(name)) return 'u';
        if (this.pathArgs.has(name) || name.endsWith(this.pathSuffix)) return lastName(value);
        return `s${value}`;
      case 'number':
        return Number.isFinite(value) ? '#' : LOOSE;
      case 'boolean':
        return value ? 't' : 'f';
      default:
        return value === null ? 'n' : LOOSE;
    }
  }
}

/** `p` and the last name of a path as it resolves, or LOOSE when it may have none of its own. */
function lastName(path) {
  const names = path.split('/');
  while (names.length > 0 && (names[names.length - 1] === '' || names[names.length - 1] === '.')) names.pop();
  const last = names[names.length - 1];
  if (last === undefined || last === '..' || (names.length === 1 && last.startsWith('~'))) return LOOSE;
  return `p${last}`;
}

/** Calls of an agent committed since its latest answer's request past which no call goes on by
 * its group (the shim runs no further ahead of the worker so); the latest of them are kept, as
 * many as a window the worker lists holds at most (passes.py WINDOW_LISTED) or more. */
const MOST_SINCE = 1024;

/**
 * An agent's calls committed since the request of its latest answer (`answered`), the latest of
 * them: how many of those still in a call's window are of its group or of one of its stand-ins
 * (`alike`). Each call's group is read once, when a call first asks.
 */
export class CallsSince {
  constructor() {
    this.calls = []; // {number, exec, group}, oldest first; numbers one apart, the latest last
    this.from = 0; // the calls up to this number are the worker's (not kept)
  }

  /** Call `number` (its execution, when known) is committed. */
  add(number, exec) {
    if (this.calls.length >= MOST_SINCE) this.calls.splice(0, MOST_SINCE / 2); // the oldest, no longer kept
    this.calls.push({ number, exec, group: undefined });
  }

  /** The latest call (`number`) is not committed after all. */
  remove(number) {
    if (this.calls.at(-1)?.number === number) this.calls.pop();
  }

  /** An answer to a request sent after call `number`: the calls up to it are the worker's. */
  answered(number) {
    if (number <= this.from) return;
    this.from = number;
    const calls = this.calls;
    let drop = 0;
    while (drop < calls.length && calls[drop].number <= number) drop++;
    if (drop > 0) calls.splice(0, drop);
  }

  /**
   * How many of the calls since `mark`, up to call `latest`, that are among the last `size` are
   * of `group` or of one of the groups `standIns` (Infinity when some of those may be and cannot
   * be told: not kept, or not known).
   * @param {CallGroups} groups @param {number} mark @param {number} latest @param {number} size
   * @param {number} group @param {number[]} standIns
   */
  alike(groups, mark, latest, size, group, standIns) {
    if (mark !== this.from || latest - mark > MOST_SINCE) return Infinity; // not those since the mark, or too far ahead
    const calls = this.calls;
    const counted = Math.min(latest - mark, size);
    if (counted > calls.length) return Infinity; // some of them not kept
    let alike = 0;
    for (let index = calls.length - counted; index < calls.length; index++) {
      const call = calls[index];
      let its = call.group;
      if (its === undefined) its = call.group = call.exec === undefined ? -1 : groups.ofCall(call.exec);
      if (its === -1) return Infinity;
      if (its === group || standIns.includes(its)) alike++;
    }
    return alike;
  }
}
