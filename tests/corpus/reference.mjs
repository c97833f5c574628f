// The reference plugin's own guard over recorded call sequences, for the decision-quality table:
//   node tests/corpus/reference.mjs <reference index.js>  < sessions.json  > first-stops.json
//
// compare.py writes the sessions ({id, steps: [{agent, number, tool, arguments, text, facts,
// afterHuman}]}) and reads back each session's first stop ({agent, number, rule} or null). The
// plugin (dsh-repeat-tool-breaker@0.5.2, installed into a temporary folder by quality.sh, never
// into this checkout) is mounted with its own defaults on the fake dsh pipeline of the shim tests,
// one fresh mount per session. A call goes through pre-execute (an ask goes unanswered, as in a
// headless run, and stops the call), the guard, then post-execute with the recorded result shaped
// as dsh hands it to plugins: the text, isError, and the facts as the structured value.
import { pathToFileURL } from 'node:url';

import { FakeDsh, makeAgent, userMessage } from '../../node-shim/test/fake-dsh.js';

const [referencePath] = process.argv.slice(2);
if (!referencePath) throw new Error('usage: node tests/corpus/reference.mjs <reference index.js> < sessions.json');
const reference = await import(pathToFileURL(referencePath).href);

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

function deepFreeze(value) {
  if (value !== null && typeof value === 'object') {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}

/** The first lines of a denial or an ask, which name the measure that fired. */
function ruleOf(text) {
  const named = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('- '))
    .map((line) => line.slice(2));
  return (named.length > 0 ? named.join('; ') : text.split('\n')[0]).slice(0, 200);
}

/** One recorded call through the pipeline; returns the reason it was stopped, or undefined. */
async function replayCall(fake, agent, step, index) {
  const callId = `call-${index}`;
  const exec = {
    token: Symbol('execution'),
    callId,
    rootCallId: callId,
    name: step.tool,
    signal: new AbortController().signal,
    agent,
    arguments: deepFreeze(structuredClone(step.arguments)),
  };
  const decision = await fake.waterfall('tools/pre-execute', [exec], () => Promise.resolve({ kind: 'allow' }));
  const stopped = decision.kind === 'ask' ? decision.reason : fake.guardReason(exec);
  const { isError = false, ...value } = step.facts;
  const result =
    stopped === undefined
      ? { content: [{ type: 'text', text: step.text }], isError, value: { kind: 'foreground', ...value } }
      : { content: [{ type: 'text', text: `Error: ${stopped}` }], isError: true, error: { message: stopped } };
  await fake.waterfall('tools/post-execute', [exec, result], () => Promise.resolve({ kind: 'accept' }));
  return stopped;
}

async function firstStop(session) {
  const fake = new FakeDsh();
  const dispose = reference.apply(fake.ctx, {});
  const agents = new Map();
  try {
    for (const [index, step] of session.steps.entries()) {
      if (!agents.has(step.agent)) agents.set(step.agent, makeAgent(step.agent));
      const agent = agents.get(step.agent);
      if (step.afterHuman) await fake.step(agent, [userMessage(`turn before call ${step.number}`)]);
      const stopped = await replayCall(fake, agent, step, index);
      if (stopped !== undefined) return { agent: step.agent, number: step.number, rule: ruleOf(stopped) };
    }
    return null;
  } finally {
    if (typeof dispose === 'function') dispose();
  }
}

const { sessions } = await readStdin();
const stops = {};
for (const session of sessions) stops[session.id] = await firstStop(session);
process.stdout.write(JSON.stringify(stops));
