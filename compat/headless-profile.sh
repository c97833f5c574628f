#!/usr/bin/env bash
# Fix 2 for the profile named `headless` under ${DSH_HOME:-$HOME/.dsh}: its cordis.patch.yml
# re-enables the hmr row that dsh-headless disables, or its boot fails with "user patch-layer
# watching requires the Cordis HMR service". Run by compat/install-dsh.sh.
#
# Writes the row when the profile has no patch yet, or only the empty one dsh writes for a new
# profile (comments and `[]`); says so when the row is there; leaves a patch of the user's own
# alone and prints the lines to add. Exit status 0 in every case.
#
# Also pnpm's update notice off in the profile (its .npmrc, when it has none): `dsh plugin add`
# runs the pinned pnpm there, whose "Update available … curl | sh" banner would steer a user off it.
set -euo pipefail
profile="${DSH_HOME:-$HOME/.dsh}/profiles/headless"
patch="$profile/cordis.patch.yml"
hmr_row='- id: hmr
  disabled: false
  config: { root: [] }'
mkdir -p "$profile"
if [[ ! -e $profile/.npmrc ]]; then
  echo "update-notifier=false" >"$profile/.npmrc"
  echo "install-dsh: turned pnpm's update notice off in $profile/.npmrc (dsh plugin add runs the pinned pnpm)"
fi
dsh_empty_patch() { [[ "$(grep -v '^[[:space:]]*#' "$1" | tr -d '[:space:]')" == "[]" ]]; }
if [[ ! -e $patch ]] || dsh_empty_patch "$patch"; then
  printf '%s\n' "$hmr_row" >"$patch"
  echo "install-dsh: wrote the hmr row (fix 2) to $patch"
elif grep -q '^- id: hmr$' "$patch"; then
  echo "install-dsh: $patch already re-enables the hmr row (fix 2)"
else
  echo "install-dsh: $patch is yours; add these lines to it, or the headless boot fails (fix 2):"
  printf '%s\n' "$hmr_row"
fi
