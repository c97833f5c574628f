#!/usr/bin/env bash
# Every compat target in one go: each pinned dsh version x each way of mounting the plugin, then
# each way of installing it (on the newest pinned dsh), from an empty cache.
#
#   compat/run-all.sh
#
# Environment:
#   COMPAT_VERSIONS  default: every compat/dsh-*/ with a committed lock
#   COMPAT_MODES     default: "dir pack overlay" (see compat/setup.sh)
#   COMPAT_INSTALLS  default: "plugin-dir plugin-git pnpm9 pnpm10 pnpm-latest npm-ignore-scripts upgrade
#                    overlay" (plugin-dir, plugin-git and pnpm10 are the README's three routes); each is
#                    a setup.sh mode with its own empty cache, judged by compat/install_paths.py
#                    ("" skips them)
#   COMPAT_README    1 (default): also run compat/readme_install.py, the README's commands verbatim
#   COMPAT_WORK      where the throwaway DSH_HOMEs go (default: ${TMPDIR:-/tmp}/dsh-compat)
#   PYTHON           the interpreter for run.py, which needs `zstandard` (default: python3, or
#                    the checkout's .venv/bin/python when python3 lacks it)
#   PLUGIN_DIR       the plugin to test (default: this checkout)
#
# The mount matrix shares one worker environment (COMPAT_WORK/cache), prepared by its first boot.
# Needs npm and Python 3.10+ with zstandard; Node 22 and pnpm come from the npm registry.
# Exit status: 0 only when every scenario of every target passed.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${PYTHON:-python3}"
if [[ -z "${PYTHON:-}" ]] && ! python3 -c 'import zstandard' 2>/dev/null && [[ -x "$here/../.venv/bin/python" ]]; then
  python="$here/../.venv/bin/python"
fi
work="${COMPAT_WORK:-${TMPDIR:-/tmp}/dsh-compat}"
modes="${COMPAT_MODES:-dir pack overlay}"
installs="${COMPAT_INSTALLS-plugin-dir plugin-git pnpm9 pnpm10 pnpm-latest npm-ignore-scripts upgrade overlay}"
versions="${COMPAT_VERSIONS:-$(for lock in "$here"/dsh-*/package-lock.json; do
  basename "$(dirname "$lock")" | sed 's/^dsh-//'
done | sort -rV | tr '\n' ' ')}"

"$python" -c 'import zstandard' 2>/dev/null || {
  echo "run-all: $python cannot import zstandard (pip install zstandard)" >&2
  exit 2
}

failed=()
summary=()
for version in $versions; do
  version_started=$SECONDS
  for mode in $modes; do
    home="$work/$version-$mode"
    started=$SECONDS
    if COMPAT_CACHE="$work/cache" "$here/setup.sh" "$version" "$mode" "$home" &&
      "$python" "$here/run.py" --home "$home"; then
      outcome=PASS
    else
      outcome=FAIL
      failed+=("$version/$mode")
    fi
    summary+=("$outcome  dsh $version  $mode  $((SECONDS - started)) s")
  done
  summary+=("      dsh $version: $((SECONDS - version_started)) s in all")
done

# What compat/install_paths.py checks after each install; an empty cache is where each starts.
install_checks() {
  case "$1" in
    npm-ignore-scripts) echo "--check first-boot --check pip-rtb --check shared-environment" ;;
    upgrade) echo "--check upgrade" ;;
    overlay) echo "--check offline-boot --check no-python --check old-python --check first-boot" ;;
    *) echo "--check first-boot" ;;
  esac
}

newest="${versions%% *}"
for mode in $installs; do
  home="$work/install-$mode"
  started=$SECONDS
  # shellcheck disable=SC2046 # the checks are words on purpose
  if "$here/setup.sh" "$newest" "$mode" "$home" &&
    "$python" "$here/install_paths.py" --home "$home" $(install_checks "$mode"); then
    outcome=PASS
  else
    outcome=FAIL
    failed+=("install/$mode")
  fi
  summary+=("$outcome  dsh $newest  install: $mode  $((SECONDS - started)) s")
done

# The README's Install, Where a denial shows up and Uninstall blocks, run verbatim by a new user
# (scratch HOME, DSH_HOME elsewhere): dsh from nothing to a denial, rtb replay, the uninstall.
if [[ ${COMPAT_README-1} == 1 ]]; then
  started=$SECONDS
  if "$python" "$here/readme_install.py"; then
    outcome=PASS
  else
    outcome=FAIL
    failed+=("readme-install")
  fi
  summary+=("$outcome  dsh 0.1.0-rc.8  the README's install, as written  $((SECONDS - started)) s")
fi

echo
echo "===== compat summary"
printf '%s\n' "${summary[@]}"
if ((${#failed[@]})); then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "ALL PASS"
