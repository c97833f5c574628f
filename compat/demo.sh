#!/usr/bin/env bash
# The main job on a built-in example: boot a real dsh with this plugin, let a scripted model (a
# small server on 127.0.0.1, compat/mock_model.py: no key, no network) run the README's loops A, B
# and C, and tell what ran and what was stopped, and why. Its last line is the `rtb replay`
# command that shows the same stops from dsh's session log.
#
# Where it runs:
# * after the README's install (dsh 0.1.0-rc.8 first on PATH, the plugin in the `headless`
#   profile of ${DSH_HOME:-$HOME/.dsh}): in that profile, under its configuration, on that dsh.
#   The scripted model is declared in a settings file of the demo's own (a `--patch` overlay
#   points dsh's `settings` row at it): your settings.yaml is not read or changed. The session is
#   written to your dsh home's sessions, where the README's `rtb replay` finds it;
# * else in a dsh home of its own, .demo/dsh-home, on the dsh on PATH when it is 0.1.0-rc.8 (the
#   README's install), else on the pinned dsh installed from its lock into
#   compat/dsh-0.1.0-rc.8/node_modules on first use.
#
# In your profile the demo keeps nothing in the clone: its settings file and the scenario's work
# folder are in a temporary folder removed when it ends (the session stays in your dsh home). In a
# home of its own it keeps .demo/ (that home, its worker environment, its settings file, the setup
# log) for the replay command it prints and its next run, and says so; what it needs only while it
# runs (temporary files, pip's downloads) goes into the temporary folder.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
version=0.1.0-rc.8
kept="$(dirname "$here")/.demo"
scratch="$(mktemp -d "${TMPDIR:-/tmp}/rtb-demo.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
export TMPDIR="$scratch" PIP_CACHE_DIR="$scratch/pip"
unset RTB_PYTHON # the plugin's own worker environment, as a boot finds it

# The README's install: PREFIX/node_modules/.bin/dsh, first on PATH, at the pinned version.
prefix=""
if dsh_path="$(command -v dsh)" && [[ "$(dsh --version 2>/dev/null)" == *"$version"* ]] &&
  [[ -f "$(dirname "$dsh_path")/../../package-lock.json" ]]; then
  prefix="$(cd "$(dirname "$dsh_path")/../.." && pwd)"
fi
profile="${DSH_HOME:-$HOME/.dsh}/profiles/headless"

# The Python rtb runs in (the plugin's environment and what only rtb uses): demo.py reads the
# session log with it.
demo_py() {
  local found
  found="$(node "$here/rtb-python.mjs")"
  PYTHONPATH="$(sed -n 2p <<<"$found")" "$(sed -n 1p <<<"$found")" "$here/demo.py" "$@"
}

if [[ -n $prefix ]] && grep -qs '"dsh-repeat-tool-breaker"' "$profile/package.json"; then
  echo "Running in your headless profile ($profile) on dsh $version in $prefix"
  mkdir "$scratch/demo"
  demo_py --profile "$profile" --dsh "$prefix" --kept "$scratch/demo"
  exit
fi
mkdir -p "$kept"

home="$kept/dsh-home"
log="$kept/setup.log"
export npm_config_cache="$scratch/npm" XDG_DATA_HOME="$scratch/data" XDG_STATE_HOME="$scratch/state"
export COMPAT_CACHE="$kept/cache" XDG_CACHE_HOME="$kept/cache" DSH_PREFIX="$prefix"
echo "Setting up dsh $version with the plugin as a profile bundle in $home" \
  "(${prefix:+the dsh in $prefix; }first run: about a minute)"
dsh_kept=""
[[ -n $prefix ]] || dsh_kept="; dsh itself in $here/dsh-$version/node_modules (~500 MB)"
echo "Kept for the replay and the next run: $kept (that dsh home and its worker environment)$dsh_kept;" \
  "rm -rf to remove. After the README's install the demo runs in your headless profile instead."
"$here/setup.sh" "$version" dir "$home" >"$log" 2>&1 || { tail -20 "$log"; exit 1; }
demo_py --home "$home" --kept "$kept"
