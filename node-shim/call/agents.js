// @ts-check
// The agents dsh runs, as the worker knows them: each live Agent object gets a small integer id
// and what was sent for it (ahead.js) the first time one of its calls or steps counts; an agent
// the garbage collector took is forgotten, here and by the worker.
import { AheadVerdicts } from './ahead.js';

export class Agents {
  /** @param {(id: number) => void} forget run once an agent with an id is collected */
  constructor(forget) {
    /** Live Agent objects → {id, what was sent for it}. */
    this.known = new WeakMap();
    this.nextId = 1;
    this.forgetting = new FinalizationRegistry(forget);
  }

  /** The agent `agent` is to the worker, made when `create` and it has none yet; undefined for
   * what is no agent (dsh gave none, or not an object). */
  of(agent, { create }) {
    if (agent === null || (typeof agent !== 'object' && typeof agent !== 'function')) return undefined;
    let known = this.known.get(agent);
    if (known === undefined && create) {
      known = AheadVerdicts.agent(this.nextId++);
      this.known.set(agent, known);
      this.forgetting.register(agent, known.id);
    }
    return known;
  }
}
