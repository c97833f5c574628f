#!/usr/bin/env bash
# The main job on a built-in example: boot a real dsh (the pinned 0.1.0-rc.8, installed from
# its lock on first use) with this plugin as a profile bundle, let a scripted model run the
# README's loops A, B and C, and tell what ran and what was stopped, and why.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
home="${DEMO_HOME:-${TMPDIR:-/tmp}/dsh-repeat-tool-breaker-demo}"
log="$home.setup.log"
mkdir -p "$(dirname "$home")"

echo "Setting up dsh 0.1.0-rc.8 with the plugin as a profile bundle in $home (first run: about a minute)"
# The demo's dsh uses the worker environment of the user's own cache, prepared here if it is not
# yet; the session-log reader runs in it too (zstandard is one of the package's dependencies).
unset RTB_PYTHON
export COMPAT_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}"
"$here/setup.sh" 0.1.0-rc.8 dir "$home" > "$log" 2>&1 || { tail -20 "$log"; exit 1; }
python="$(XDG_CACHE_HOME="$COMPAT_CACHE" node "$here/../node-shim/setup.js")"
"$python" "$here/demo.py" --home "$home"
