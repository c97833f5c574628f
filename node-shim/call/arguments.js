// @ts-check
// The plain, bounded copy of a call's arguments that crosses the pipe.
//
// dsh hands the guard whatever the model produced, parsed: normally a small JSON object, but a
// confused model (or a harness) can produce a million keys, 300,000 empty objects or a 10 MB
// string, and a harness can hand over cycles, getters that throw, typed arrays and sparse arrays.
// The copy keeps what JSON.stringify would keep (a BigInt becomes its decimal text) and costs at
// most COPY_LIMITS, so copying, encoding and deciding one call fit the guard's deadline whatever
// the argument: past `values` values or `textUnits` UTF-16 units of text the rest of a container
// or a string is replaced by a marker that says how much was cut. The limits are counts, not
// times, so the same arguments always give the same copy and a loop on a huge call is still seen
// as a loop. The one cost no count can cut short is V8 listing an object's keys (~0.4 µs a key
// here): past `listedKeys` listed in all (one object with more, or a huge object referenced over
// and over) the copy is replaced as a whole by TOO_COSTLY, the same way every time.

/** Enough for any real tool call (a 10 MB write, an edit list of thousands of items). */
export const COPY_LIMITS = Object.freeze({
  values: 20_000,
  textUnits: 16 * 1024 * 1024,
  depth: 256,
  listedKeys: 1_000_000,
});

/** The whole copy of arguments whose keys were too many to list. */
export const TOO_COSTLY = '[arguments too costly to copy]';

class TooCostly extends Error {}

/**
 * @param {unknown} value the call's arguments
 * @param {typeof COPY_LIMITS} [limits]
 * @param {boolean} [nonFinite] whether Infinity and NaN stay (a configuration, refused by the
 *   worker as written), where JSON, and so a call's copy, makes them null
 * @returns {{value: unknown, weight: number, textUnits: number}} the copy, about how many bytes it
 *   encodes to, and how many UTF-16 units of text it holds
 */
export function boundedCopy(value, limits = COPY_LIMITS, nonFinite = false) {
  const copier = new Copier(limits, nonFinite);
  try {
    const copy = copier.readableCopy(value, undefined, -1);
    return { value: copy, weight: copier.weight(), textUnits: copier.textUnits };
  } catch (error) {
    if (!(error instanceof TooCostly)) throw error;
    return { value: TOO_COSTLY, weight: TOO_COSTLY.length, textUnits: TOO_COSTLY.length };
  }
}

class Copier {
  constructor(limits, nonFinite) {
    this.limits = limits;
    this.nonFinite = nonFinite;
    this.values = 0;
    this.textUnits = 0;
    this.listedKeys = 0;
    this.ancestors = new Set();
  }

  weight() {
    return this.textUnits + 8 * this.values;
  }

  // One more value is paid for; false when the budget is spent.
  pay() {
    if (this.values >= this.limits.values) return false;
    this.values++;
    return true;
  }

  text(value) {
    const left = this.limits.textUnits - this.textUnits;
    if (value.length <= left) {
      this.textUnits += value.length;
      return value;
    }
    this.textUnits = this.limits.textUnits;
    return `${value.slice(0, Math.max(0, left))}[cut: ${value.length - Math.max(0, left)} more characters]`;
  }

  copy(value, depth) {
    switch (typeof value) {
      case 'string':
        return this.text(value);
      case 'boolean':
        return value;
      case 'number':
        return Number.isFinite(value) || this.nonFinite ? value : null;
      case 'bigint':
        return value.toString();
      case 'object':
        return value === null ? null : this.container(value, depth);
      default:
        return null; // undefined, functions, symbols
    }
  }

  container(value, depth) {
    if (typeof value.toJSON === 'function') return this.copy(value.toJSON(), depth);
    if (this.ancestors.has(value)) return '[circular]';
    if (depth >= this.limits.depth) return '[nested too deeply]';
    this.ancestors.add(value);
    try {
      return isListLike(value) ? this.list(value, depth) : this.object(value, depth);
    } finally {
      this.ancestors.delete(value);
    }
  }

  // Arrays by index, so a sparse one costs what it holds up to the budget, not its length;
  // typed arrays the same way, as the lists of numbers they are.
  list(items, depth) {
    const copy = [];
    const length = items.length;
    for (let index = 0; index < length; index++) {
      if (!this.pay()) {
        copy.push(`[cut: ${length - index} more items]`);
        break;
      }
      copy.push(this.readableCopy(items, index, depth));
    }
    return copy;
  }

  // A plain object (V8 keeps one without a prototype as a dictionary: ~8x the bytes), where an
  // own "__proto__" key (JSON.parse makes them) is defined as a key, never assigned.
  object(object, depth) {
    const copy = {};
    const keys = Object.keys(object);
    this.listedKeys += keys.length;
    if (this.listedKeys > this.limits.listedKeys) throw new TooCostly();
    for (let index = 0; index < keys.length; index++) {
      if (!this.pay()) {
        copy['[cut]'] = `${keys.length - index} more keys`;
        break;
      }
      const key = this.text(keys[index]);
      let item;
      try {
        item = object[keys[index]];
      } catch {
        item = '[unreadable]';
      }
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
      const value = this.readableCopy(item, undefined, depth);
      if (key === '__proto__') Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true });
      else copy[key] = value;
    }
    return copy;
  }

  // The copy of `value` (or of `value[index]`, with an index) one level down. A getter, toJSON or
  // proxy trap that throws costs its value, never the call. Its message is not kept: it may quote
  // what the call holds. (No closure per value: a call's copy makes no garbage of its own.)
  readableCopy(value, index, depth) {
    try {
      return this.copy(index === undefined ? value : value[index], depth + 1);
    } catch (error) {
      if (error instanceof TooCostly) throw error;
      return '[unreadable]';
    }
  }
}

function isListLike(value) {
  return Array.isArray(value) || (ArrayBuffer.isView(value) && !(value instanceof DataView));
}
