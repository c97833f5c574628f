// @ts-check
// Why the worker could not answer, as the error the bridge throws: it is not running (how it
// ended), or it missed its deadline.

/** The worker could not answer: it is not running, it exited, or it missed its deadline. */
export class WorkerUnavailable extends Error {
  constructor(message, details = {}) {
    super(message);
    this.name = 'WorkerUnavailable';
    Object.assign(this, details); // code, stderr, exit: what the startup error needs to explain itself
  }
}

/** The worker did not answer within `timeoutMs`. */
export function timeoutError(timeoutMs) {
  return new WorkerUnavailable(`the worker did not answer within ${timeoutMs} ms`, { code: 'TIMEOUT', timeoutMs });
}

/**
 * The worker `command` started is not running: `exited` is how it ended, as the helper thread
 * reported it (`{failed}`: it could not start; `{code, signal, stderr}`; `ended`: its output ended
 * and its status is not known yet).
 */
export function exitError(exited, command) {
  const { failed, code, signal, stderr, ended } = exited;
  const how = signal ? ` (killed by ${signal})` : ended ? ' (its output ended)' : ` (exited with code ${code})`;
  const note = failed ? ` (could not start ${command}: ${failed.message})` : how;
  return new WorkerUnavailable(`the worker is not running${note}`, {
    code: failed ? failed.code : 'EXITED',
    stderr: stderr ?? '',
  });
}
