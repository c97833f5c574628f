// Session logs as dsh writes them (@deepseek-ai/dsh-agent-loop 0.1.0-rc.8), for a fake dsh
// (fake-dsh.js) to keep: one `.jsonl` file per agent, a header naming its session and the root
// session it belongs to (subagents' logs are folded into their root's by rtb: one replay, one
// worker's state, as live), then one event a line: `step/start` once the pre-step hook has
// returned, then the step's human messages (`user/message`), a `tool/call` just before the call's
// pre-execute, a `tool/result` once its post-execute has returned. Every event has a time of its
// own, a millisecond after the last event of any agent: rtb interleaves the agents' logs by it
// (breaker/rtb/read/sessions.py interleaved), as dsh's clock would order them were it fine enough.
import { mkdirSync, writeFileSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';

const START_MS = 1_796_000_000_000;

export class SessionLogs {
  /** @param {string} folder where the logs go (made if missing); @param {string} root the root session's id */
  constructor(folder, root) {
    this.folder = folder;
    this.root = root;
    this.clock = 0;
    this.files = new Map(); // session id → its log's path
    mkdirSync(folder, { recursive: true });
    this.header(root, undefined);
  }

  header(session, parent) {
    const path = join(this.folder, `${session}.jsonl`);
    const header = { type: 'session', id: session, createdAt: START_MS + this.clock, ...(parent ? { parentSession: parent } : {}) };
    writeFileSync(path, `${JSON.stringify(header)}\n`);
    this.files.set(session, path);
  }

  append(agent, type, data) {
    const session = String(agent?.id);
    if (!this.files.has(session)) this.header(session, this.root);
    this.clock++;
    appendFileSync(this.files.get(session), `${JSON.stringify({ type, time: START_MS + this.clock, data })}\n`);
  }

  /** The step began (its pre-step hook returned): its start, then the messages it claimed. */
  step(agent, messages) {
    this.append(agent, 'step/start', {});
    for (const message of messages) this.append(agent, 'user/message', message);
  }

  /** A call is about to go through pre-execute. */
  call(exec) {
    this.append(exec.agent, 'tool/call', { callId: exec.callId, name: exec.name, arguments: JSON.stringify(exec.arguments) });
  }

  /** A call's result, once its post-execute returned. */
  result(exec, result) {
    const part = { type: 'tool-result', toolCallId: exec.callId, isError: result.isError, content: result.content };
    this.append(exec.agent, 'tool/result', { message: { role: 'tool', content: [part] } });
  }
}
