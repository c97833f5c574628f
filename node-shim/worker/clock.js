// @ts-check
// The clock every deadline of the bridge is on.

/** Milliseconds on a monotonic clock the helper thread shares (performance.now() is per thread). */
export function clock() {
  const [seconds, nanoseconds] = process.hrtime();
  return seconds * 1e3 + nanoseconds / 1e6;
}
