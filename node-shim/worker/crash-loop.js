// @ts-check
// How the loss of workers is contained: the first lost worker is replaced at once, the next ones
// after a doubling backoff, and past `crashLimit` losses within `crashSpanMs` restarts pause
// until the oldest of them is that old. An answered call ends the loop.

/** How a crash loop is contained; tests shorten these. */
export const RESTART_POLICY = Object.freeze({
  crashLimit: 5, // at most this many lost workers within crashSpanMs, then give up for a while
  crashSpanMs: 60_000,
  backoffMs: 200, // no delay after the first loss, then 200 ms, 400 ms, 800 ms, ...
});

export class CrashLoop {
  /** @param {Partial<typeof RESTART_POLICY>} policy */
  constructor(policy = {}) {
    this.policy = { ...RESTART_POLICY, ...policy };
    this.losses = []; // when workers were lost since the last answered call, oldest first
    this.restartAt = 0; // no new worker before this time (performance.now()) while backing off
    this.gaveUp = false;
  }

  /** How long until a new worker may start, in ms (0 or less: now). */
  wait(now = performance.now()) {
    return this.restartAt - now;
  }

  /**
   * A worker was lost at `now`: `{paused: true, newly}` when restarts pause (`newly`: they did not
   * already), else `{paused: false, delay}`, the ms before its successor starts.
   */
  lost(now) {
    const { crashLimit, crashSpanMs, backoffMs } = this.policy;
    this.losses = [...this.losses.filter((time) => now - time < crashSpanMs), now];
    if (this.losses.length >= crashLimit) {
      this.restartAt = this.losses[0] + crashSpanMs;
      const newly = !this.gaveUp;
      this.gaveUp = true;
      return { paused: true, newly, delay: this.restartAt - now };
    }
    const delay = this.losses.length === 1 ? 0 : backoffMs * 2 ** (this.losses.length - 2);
    this.restartAt = now + delay;
    return { paused: false, newly: false, delay };
  }

  /** A call was answered: the loop, if any, is over; true when restarts had paused. */
  answered() {
    const paused = this.gaveUp;
    this.gaveUp = false;
    this.losses = [];
    return paused;
  }
}
