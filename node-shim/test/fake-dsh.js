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
  /**
   * @param {{approval?: keyof APPROVAL_OUTCOMES, body?: (exec) => string | Promise<string>,
   *   logs?: import('./session-logs.js').SessionLogs}} options `logs`: the session logs dsh would
   *   write, kept as it writes them
   */
  constructor({ approval = 'unavailable', body = (exec) => `ran ${exec.callId}`, logs = undefined } = {}) {
    this.approval = approval;
    this.body = body;
    this.logs = logs;
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

  /** The tools/pre-execute stage alone: the decision it resolves to (dsh logs the call first). */
  preExecute(exec) {
    this.logs?.call(exec);
    return this.waterfall('tools/pre-execute', [exec], () => Promise.resolve({ kind: 'allow' }));
  }

  /** Run one tool call through the pipeline; returns what the model would see. */
  async call(agent, name, args, { callId } = {}) {
    const exec = this.execution(agent, name, args, callId);
    return this.afterPreExecute(exec, await this.preExecute(exec));
  }

  /** The rest of the pipeline once tools/pre-execute has decided: ask, guards, body, post-execute. */
  async afterPreExecute(exec, preDecision) {
    const prepared = this.decided(exec, preDecision);
    return this.finish(prepared.denied === undefined ? await this.dispatch(prepared) : prepared);
  }

  /** dsh's prepare: tools/pre-execute (awaited), then the ask and the guards. */
  async prepare(exec) {
    return this.decided(exec, await this.preExecute(exec));
  }

  /** What tools/pre-execute decided, put to the approval service when it asks, then to the guards. */
  decided(exec, preDecision) {
    let decision = preDecision;
    let asked;
    if (decision.kind === 'ask') {
      asked = decision.reason;
      this.asks.push({ callId: exec.callId, reason: decision.reason });
      decision = APPROVAL_OUTCOMES[this.approval](exec.name);
    }
    const denied = decision.kind === 'allow' ? this.guardReason(exec) : decision.reason;
    const result = denied === undefined
      ? undefined
      : { content: [{ type: 'text', text: `Error: ${denied}` }], isError: true, error: { message: denied } };
    return { exec, denied, asked, result };
  }

  /** A call the guards let through: its body runs. */
  async dispatch(prepared) {
    this.bodyRuns++;
    const text = await this.body(prepared.exec);
    return { ...prepared, result: { content: [{ type: 'text', text }], isError: false, value: text } };
  }

  /** tools/post-execute, then the result is logged: what the model sees. */
  async finish({ exec, denied, asked, result }) {
    const post = await this.waterfall('tools/post-execute', [exec, result], () => Promise.resolve({ kind: 'accept' }));
    this.logs?.result(exec, result);
    return { denied, text: result.content[0].text, asked, post };
  }

  /** One agent step with the messages claimed from its inbox. */
  async step(agent, messages) {
    const decision = await this.waterfall(
      'agent/pre-step',
      [{ agent, messages, turn: 1, step: 1, signal: new AbortController().signal }],
      () => Promise.resolve({ kind: 'enter', messages }),
    );
    this.logs?.step(agent, messages);
    return decision;
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
