#!/usr/bin/env bash
# The main job on a built-in example: boot a real dsh (the pinned 0.1.0-rc.8, installed from
# its lock on first use) with this plugin as a profile bundle, let a scripted model run the
# README's loops A, B and C, and tell what ran and what was stopped, and why.
#
# Nothing outside the clone: what the demo keeps (its DSH_HOME with the session log, the plugin's
# worker environment, the setup log) is in .demo/ and the pinned dsh in compat/dsh-0.1.0-rc.8/
# node_modules, both reused by the next run; what it only needs while it runs (temporary files,
# npm's, pip's and pnpm's downloads) goes into a folder removed when it ends.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
kept="$(dirname "$here")/.demo"
home="$kept/dsh-home"
log="$kept/setup.log"
mkdir -p "$kept"
scratch="$(mktemp -d "${TMPDIR:-/tmp}/rtb-demo.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
export TMPDIR="$scratch" PIP_CACHE_DIR="$scratch/pip" npm_config_cache="$scratch/npm" \
  XDG_DATA_HOME="$scratch/data" XDG_STATE_HOME="$scratch/state"

echo "Setting up dsh 0.1.0-rc.8 with the plugin as a profile bundle in $home (first run: about a minute)"
# The demo's dsh prepares the plugin's worker environment in .demo/cache on its first run; the
# session-log reader runs where rtb does, in it with what only rtb uses (zstandard).
unset RTB_PYTHON
export COMPAT_CACHE="$kept/cache"
"$here/setup.sh" 0.1.0-rc.8 dir "$home" >"$log" 2>&1 || { tail -20 "$log"; exit 1; }
found="$(XDG_CACHE_HOME="$COMPAT_CACHE" node "$here/rtb-python.mjs")"
PYTHONPATH="$(sed -n 2p <<<"$found")" "$(sed -n 1p <<<"$found")" "$here/demo.py" --home "$home"
