// @ts-check
// The operator's stderr, written so that no thread of the shim ever waits on it.
//
// dsh's stderr may be a pipe nobody reads (a supervisor that collects output at exit, a paused
// pager). A synchronous write to a full pipe waits until someone reads; the bridge's threads must
// never wait outside their deadlines, least of all the watchdog. So nothing here writes fd 2
// directly: lines go to `process.stderr`, which Node writes asynchronously when it is a pipe or a
// socket (what does not fit is queued) and which, in the bridge's helper thread, forwards to the
// main thread. What is bounded here is the queue: past QUEUED_BYTES a text is dropped and counted,
// and the count is reported in one line once stderr moves again.

/** About four screens of log; more than that queued means nobody is reading. */
export const QUEUED_BYTES = 256 * 1024;

/**
 * @param {{writableLength: number, write: (text: string | Uint8Array) => unknown}} [stream]
 * @returns {(text: string | Uint8Array) => void}
 */
export function boundedWriter(stream = process.stderr, limit = QUEUED_BYTES) {
  let dropped = 0;
  return (text) => {
    if (stream.writableLength > limit) {
      dropped += typeof text === 'string' ? Buffer.byteLength(text) : text.length;
      return;
    }
    if (dropped) {
      stream.write(`[repeat-tool-breaker] ${dropped} bytes of log were dropped: stderr was not being read\n`);
      dropped = 0;
    }
    stream.write(text);
  };
}

/** How much of a starting worker's stderr is kept for the error that explains its failure. */
export const STDERR_KEPT_BYTES = 16 * 1024;

/** `kept` with `chunk` (bytes of the worker's stderr) added, its last STDERR_KEPT_BYTES. */
export function keptTail(kept, chunk) {
  return (kept + chunk.toString('utf8')).slice(-STDERR_KEPT_BYTES);
}
