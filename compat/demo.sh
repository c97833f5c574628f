#!/usr/bin/env bash
# The main job on a built-in example: boot a real dsh (the pinned 0.1.0-rc.8, installed from
# its lock on first use) with this plugin as a profile bundle, let a scripted model run the seed
# README's loops A, B and C, and print what ran and what was stopped.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
home="${DEMO_HOME:-${TMPDIR:-/tmp}/dsh-repeat-tool-breaker-demo}"
log="$home.setup.log"
mkdir -p "$(dirname "$home")"

echo "Setting up dsh 0.1.0-rc.8 with the plugin as a profile bundle in $home (first run: about a minute)"
"$here/setup.sh" 0.1.0-rc.8 dir "$home" > "$log" 2>&1 || { tail -20 "$log"; exit 1; }

# The plugin's install step made the checkout's .venv; the log reader also needs zstandard.
python="$here/../.venv/bin/python"
"$python" -c 'import zstandard' 2>/dev/null || "$python" -m pip install --quiet --disable-pip-version-check zstandard
"$python" "$here/run.py" --home "$home" --scenario demo
