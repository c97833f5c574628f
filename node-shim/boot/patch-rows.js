// @ts-check
// The rows of the patches dsh composed, gathered for the worker, which names those meant for this
// plugin under another id (breaker/strayrows.py decides; nothing is decided here).
//
// dsh ignores a flat `- id:` row that names no row of the tree without a word, so a profile whose
// row reads `repeat-tool-braker` boots on the defaults. The include that mounted this plugin holds
// every patch row in its config (`patches`: the bundles', the profile's, dsh's home's and the
// `--patch` overlays', in order, as read in @deepseek-ai/cordis-plugin-include rc.8). Only each
// row's id, the keys of its `config:` and the module it names are sent; where dsh keeps them
// elsewhere, nothing is. The row's own keys go too (`beside`): a config key written beside
// `config:` instead of under it is passed to no one. A row of an `insert:` list is marked
// (`inserted`): each such row mounts a module anew, so two that name this plugin run it twice.

/** At most this many rows, keys a row and characters an id or a key are sent. */
export const MAX_ROWS = 2000;
export const MAX_KEYS = 64;
export const MAX_CHARS = 200;

/** `{id, keys, beside, name, inserted}` of each row of the patches that mounted the plugin of `ctx`, inserted rows too. */
export function patchRows(ctx) {
  const rows = [];
  function visit(list, depth, inserted) {
    if (!Array.isArray(list) || depth > 8) return;
    for (const row of list) {
      if (rows.length >= MAX_ROWS) return;
      if (row === null || typeof row !== 'object') continue;
      const { id, config, insert, name } = row;
      if (typeof id === 'string' && id.length <= MAX_CHARS) {
        const mapping = config !== null && typeof config === 'object' && !Array.isArray(config);
        const keys = mapping ? Object.keys(config).slice(0, MAX_KEYS).map((key) => key.slice(0, MAX_CHARS)) : [];
        const beside = Object.keys(row).slice(0, MAX_KEYS).map((key) => key.slice(0, MAX_CHARS));
        const sent = typeof name === 'string' && name.length <= 4 * MAX_CHARS ? { id, keys, beside, name } : { id, keys, beside };
        rows.push(inserted ? { ...sent, inserted } : sent);
      }
      visit(insert, depth + 1, true);
    }
  }
  try {
    visit(ctx?.fiber?.entry?.parent?.tree?.config?.patches, 0, false);
  } catch {
    return []; // a tree shaped otherwise: the boot goes on, unchecked
  }
  return rows;
}
