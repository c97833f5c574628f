// @ts-check
// Whether the profile dsh booted has a frontend that will take a task, and one line when it has
// none.
//
// dsh runs a task through a frontend its profile mounts: `@deepseek-ai/dsh-headless` (one-shot,
// `dsh --profile P "task"`) provides the `headlessStartup` service, `@deepseek-ai/dsh-web-app`
// provides `webStartup`. A profile made under any other name than `headless` or `web` has neither
// (`dsh plugin --profile NAME add …` lists only `@deepseek-ai/dsh-base`), and dsh then waits
// forever without a word. The plugin sees the tree dsh composed: once dsh has had time to mount
// every row, a tree with neither service gets one line saying what is missing and the fix.

/** The services a frontend of dsh provides (its one-shot runner, its web app). */
export const FRONTEND_SERVICES = Object.freeze(['headlessStartup', 'webStartup']);
/** How long after `apply` the tree is looked at: dsh mounts the rows after ours meanwhile. */
export const FRONTEND_CHECK_MS = 2_000;

/** The line for a profile with no frontend. */
export const NO_FRONTEND =
  'this dsh profile has no frontend to run a task (neither @deepseek-ai/dsh-headless nor @deepseek-ai/dsh-web-app ' +
  'is among its bundles), so dsh waits without a word. Fix: add "@deepseek-ai/dsh-headless" to dsh.profile.bundles ' +
  "in the profile's package.json (a profile made as `dsh plugin --profile headless add …` has it), and re-enable " +
  "the hmr row in the profile's cordis.patch.yml (`- id: hmr` / `disabled: false` / `config: { root: [] }`)";

/** Whether `ctx` has one of dsh's frontends. */
export function hasFrontend(ctx) {
  return FRONTEND_SERVICES.some((service) => {
    try {
      return ctx.get?.(service) !== undefined;
    } catch {
      return false;
    }
  });
}

/**
 * Look at the tree `delayMs` after now and `log` NO_FRONTEND when it has no frontend and nothing
 * has run (`ran()`: an agent step or a tool call was seen; a finished task's frontend may already
 * be gone while dsh exits); the timer never keeps dsh up. Returns what cancels the look.
 */
export function watchFrontend(ctx, log, ran = () => false, delayMs = FRONTEND_CHECK_MS) {
  if (typeof ctx?.get !== 'function') return () => {};
  const timer = setTimeout(() => {
    if (!ran() && !hasFrontend(ctx)) log(NO_FRONTEND);
  }, delayMs);
  timer.unref();
  return () => clearTimeout(timer);
}
