// @ts-check
// The request a call makes of the worker (a preflight or a guard) and what it weighs in the
// journal; and what the journal keeps of a call once the worker answered it.
import { boundedCopy } from './arguments.js';

/**
 * The maker of a call's request: `(op, exec, agent) => {message, weight, large}`. The copy of a
 * call's arguments is made once per call (its pre-execute and its guard send the same). A call
 * heavy enough to hold a text that counts by its digest (`condensedChars`, the worker's) asks for
 * its stand-in, which the journal keeps instead.
 */
export function callRequests(condensedChars) {
  const copies = new WeakMap();
  return (op, exec, agent) => {
    let copy = copies.get(exec);
    if (copy === undefined) {
      const { value: args, weight, textUnits } = boundedCopy(exec.arguments);
      copy = { call: String(exec.callId ?? ''), name: String(exec.name), args, weight, textUnits };
      copies.set(exec, copy);
    }
    const { call, name, args, weight, textUnits } = copy;
    const message = { op, agent, call, name, args };
    const large = textUnits >= condensedChars; // only then can it hold a text that long
    if (large) message.standIn = true;
    return { message, weight: weight + call.length + name.length, large };
  };
}

/** What the journal keeps of a call the worker answered: the stand-in it gave (the call with its
 * long texts by digest, breaker/core/history/standin.py), else the call as sent. */
export function journaled(message, weight, answer) {
  if (answer.standIn === undefined || answer.standIn === null) return { message, weight };
  const { standIn: _, ...sent } = message;
  const { value: args, weight: argsWeight } = boundedCopy(answer.standIn);
  return { message: { ...sent, args }, weight: argsWeight + sent.call.length + sent.name.length };
}
