// A stand-in for the parts of dsh the plugin touches, imitating the real pipeline as read in
// @deepseek-ai/dsh-tools 0.1.0-rc.8 (lib/index.js, ToolRuntime.prepareExecution/serviceAsk/
// postExecute) and cordis' waterfall (listeners outermost-first, `next()` runs the rest):
//   tools/pre-execute waterfall (default allow) → an ask goes to the approval service →
//   guards (only when the decision is allow; the first string denies) → the tool body →
//   tools/post-execute waterfall (default accept), which also runs for denied calls.
// Arguments reach every stage as one deep-frozen JSON snapshot.

function deepFreeze(value) {
  if (value !== null && typeof value === 'object') {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}

// Outcomes of the approval service, worded as dsh words them.
const APPROVAL_OUTCOMES = {
  'allowed-once': () => ({ kind: 'allow' }),
  rejected: (name) => ({ kind: 'deny', reason: `the user rejected tool "${name}"` }),
  unavailable: (name) => ({ kind: 'deny', reason: `tool "${name}" requires approval, but no approval channel is available` }),
};

export class FakeDsh {
  /** @param {{approval?: keyof APPROVAL_OUTCOMES, body?: (exec) => string | Promise<string>}} options */
  constructor({ approval = 'unavailable', body = (exec) => `ran ${exec.callId}` } = {}) {
    this.approval = approval;
    this.body = body;
    this.guards = [];
    this.listeners = new Map();
    this.asks = [];
    this.bodyRuns = 0;
    this.nextCall = 1;
    this.ctx = {
      tools: {
        guard: (guard) => {
          this.guards.push(guard);
          return () => this.guards.splice(this.guards.indexOf(guard), 1);
        },
      },
      on: (event, listener) => {
        const list = this.listeners.get(event) ?? [];
        list.push(listener);
        this.listeners.set(event, list);
        return () => list.splice(list.indexOf(listener), 1);
      },
    };
  }

  get listenerCount() {
    return this.guards.length + [...this.listeners.values()].reduce((total, list) => total + list.length, 0);
  }

  waterfall(event, args, inner) {
    const callbacks = [...(this.listeners.get(event) ?? [])];
    const next = () => (callbacks.shift() ?? inner)(...args);
    args.push(next);
    return next();
  }

  guardReason(exec) {
    for (const guard of this.guards) {
      const reason = guard(exec);
      if (typeof reason !== 'string' && reason !== undefined) {
        throw new TypeError(`a guard returned ${typeof reason}, not string | undefined`);
      }
      if (reason !== undefined) return reason;
    }
    return undefined;
  }

  /** The execution object dsh makes for one call (the same object reaches every stage). */
  execution(agent, name, args, callId = `call-${this.nextCall++}`) {
    return {
      token: Symbol('execution'),
      callId,
      rootCallId: callId,
      name,
      signal: new AbortController().signal,
      ...(agent !== undefined ? { agent } : {}),
      arguments: deepFreeze(structuredClone(args)),
    };
  }

  /** The tools/pre-execute stage alone: the decision it resolves to. */
  preExecute(exec) {
    return this.waterfall('tools/pre-execute', [exec], () => Promise.resolve({ kind: 'allow' }));
  }

  /** Run one tool call through the pipeline; returns what the model would see. */
  async call(agent, name, args, { callId } = {}) {
    const exec = this.execution(agent, name, args, callId);
    return this.afterPreExecute(exec, await this.preExecute(exec));
  }

  /** The rest of the pipeline once tools/pre-execute has decided: ask, guards, body, post-execute. */
  async afterPreExecute(exec, preDecision) {
    let decision = preDecision;
    let asked;
    if (decision.kind === 'ask') {
      asked = decision.reason;
      this.asks.push({ callId: exec.callId, reason: decision.reason });
      decision = APPROVAL_OUTCOMES[this.approval](exec.name);
    }
    const denial = decision.kind === 'allow' ? this.guardReason(exec) : decision.reason;
    let result;
    if (denial !== undefined) {
      result = { content: [{ type: 'text', text: `Error: ${denial}` }], isError: true, error: { message: denial } };
    } else {
      this.bodyRuns++;
      const text = await this.body(exec);
      result = { content: [{ type: 'text', text }], isError: false, value: text };
    }
    const post = await this.waterfall('tools/post-execute', [exec, result], () => Promise.resolve({ kind: 'accept' }));
    return { denied: denial, text: result.content[0].text, asked, post };
  }

  /** One agent step with the messages claimed from its inbox. */
  step(agent, messages) {
    return this.waterfall(
      'agent/pre-step',
      [{ agent, messages, turn: 1, step: 1, signal: new AbortController().signal }],
      () => Promise.resolve({ kind: 'enter', messages }),
    );
  }
}

export function userMessage(text) {
  return { id: `u-${text}`, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } };
}

export function pluginNotice(text) {
  return {
    id: `p-${text}`,
    role: 'user',
    content: [{ type: 'text', text }],
    source: { kind: 'plugin', plugin: 'dsh-repeat-tool-reminder', form: 'notice', summary: text },
  };
}

/** An Agent-like object: the plugin only uses its identity. */
export function makeAgent(id) {
  return { id: `session-${id}` };
}
