#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what it needs, then runs the static
# checks, the Python tests, the Node shim's tests and the compat boots of real dsh versions.
# Every stage runs even when an earlier one failed; the exit status is non-zero if any did.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# Nothing is left behind. Every temporary file of the run (pytest's and Node's temp folders, the
# compat DSH_HOMEs with their worker environments, pip's build folders) goes into one private
# folder, removed at the end; what the run makes in the clone (.venv, the pinned dsh installs
# under compat/dsh-*/node_modules, pnpm under compat/.tools, tool caches, __pycache__) is removed
# too, unless it was there before. RTB_TEST_KEEP=1 keeps the clone's part for a faster next run.
# Caches too: pip's, npm's, and those of every tool that follows XDG (the plugin's worker
# environments, pnpm's store, chromium's) are kept in that folder while the run lasts.
# What appeared outside the clone all the same (in ~, ~/.cache, ~/.local/share, ~/.config and the
# temporary folder) is listed at the very end.
outside=("$HOME" "$HOME/.cache" "$HOME/.local/share" "$HOME/.config" "${TMPDIR:-/tmp}")
outside_before="$(for dir in "${outside[@]}"; do [[ -d $dir ]] && find "$dir" -mindepth 1 -maxdepth 1; done | sort)"
scratch="$(mktemp -d "${TMPDIR:-/tmp}/rtb-npm-test.XXXXXX")"
# dsh's home too: the demo runs in the headless profile of DSH_HOME when it finds one (the README's
# install), and the tests' must never be a user's ~/.dsh.
export TMPDIR="$scratch" COMPAT_WORK="$scratch/dsh-compat" PIP_CACHE_DIR="$scratch/cache/pip" \
  npm_config_cache="$scratch/cache/npm" XDG_CACHE_HOME="$scratch/cache" XDG_DATA_HOME="$scratch/data" \
  XDG_STATE_HOME="$scratch/state" XDG_CONFIG_HOME="$scratch/config" DSH_HOME="$scratch/dsh-home"
skipped_line="$scratch/pytest-skipped.txt"
made_here=()
candidates=(.venv .demo compat/.tools .pytest_cache .hypothesis .mypy_cache .ruff_cache tests/js-types/node_modules tests/corpus/.mypy_cache)
for dir in compat/dsh-*/; do candidates+=("${dir}node_modules"); done
for path in "${candidates[@]}"; do [[ -e $path ]] || made_here+=("$path"); done
compgen -G './*.egg-info' >/dev/null || made_here+=(./*.egg-info)
pycache_before="$scratch/pycache-before"
find . -name __pycache__ -not -path './.venv/*' -not -path '*/node_modules/*' | sort >"$pycache_before"
clean_up() {
  local made=() path
  if [[ ${RTB_TEST_KEEP:-} != 1 ]]; then
    for path in "${made_here[@]}"; do
      while IFS= read -r path; do made+=("$path"); done < <(compgen -G "$path")
    done
    while IFS= read -r path; do made+=("$path"); done < <(
      find . -name __pycache__ -not -path './.venv/*' -not -path '*/node_modules/*' | sort |
        comm -13 "$pycache_before" -
    )
  fi
  rm -rf "$scratch" "${made[@]}"
  echo "removed the run's temporary folder and ${#made[@]} things it made in the clone" \
    "(${made[*]:0:6}${made[6]:+ …})"
  local appeared
  appeared="$(comm -13 <(echo "$outside_before") <(for dir in "${outside[@]}"; do
    [[ -d $dir ]] && find "$dir" -mindepth 1 -maxdepth 1; done | sort))"
  if [[ -n $appeared ]]; then
    echo "new outside the clone since the run began (this run's, or another program's):" $appeared
  else
    echo "nothing new outside the clone (looked in ${outside[*]})"
  fi
}
trap clean_up EXIT
py=.venv/bin/python
passed=0
failed=()

stage() {
  local name="$1"
  shift
  printf '\n=== %s\n' "$name"
  if "$@"; then
    passed=$((passed + 1))
  else
    failed+=("$name")
  fi
}

# The development environment: the package (editable) and its test tools. The plugin's own worker
# environment is not made here: the compat boots prepare it the way a user's first boot does.
install() {
  { [[ -x $py ]] || python3 -m venv .venv; } &&
    $py -m pip install --quiet --disable-pip-version-check --no-input -e ".[test]"
}

stage "development environment (.venv) and test tools" install
if ((${#failed[@]})); then
  echo "cannot go on without the environment"
  exit 1
fi
# The page tests (tests/test_timeline_browser.py) open rtb's HTML timeline in a real browser:
# Debian's chromium, installed here when it is missing and apt-get can (as root, or sudo without a
# password). Where it cannot be, those tests skip and say why; this stage never fails the run.
browser() {
  if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    local apt=()
    if [[ $(id -u) == 0 ]]; then
      apt=(apt-get)
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      apt=(sudo -n apt-get)
    fi
    if ((${#apt[@]})); then
      local log
      log="$(mktemp)"
      DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y --no-install-recommends chromium >"$log" 2>&1 ||
        { "${apt[@]}" update -qq >>"$log" 2>&1 &&
          DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y --no-install-recommends chromium >>"$log" 2>&1; } ||
        tail -5 "$log"
      rm -f "$log"
    fi
  fi
  if command -v chromium >/dev/null 2>&1; then
    echo "chromium: $(chromium --version 2>/dev/null | head -1)"
  else
    echo "no chromium (apt-get could not install it here): the page tests will be skipped"
  fi
}

stage "browser for the page tests (chromium)" browser
# node-shim's Python too: what prepares the worker's environment (prepare_environment.py and the
# modules it runs) and the shim tests' helpers
stage "ruff" $py -m ruff check breaker tests compat node-shim
stage "ruff format --check" $py -m ruff format --check breaker tests compat node-shim
stage "mypy --strict" $py -m mypy --strict breaker tests node-shim/boot/*.py
# the corpus scripts import each other as siblings, so they are checked from their folder
stage "mypy --strict (tests/corpus)" bash -c \
  'cd tests/corpus && MYPYPATH="$0" "$0/$1" -m mypy --strict --config-file "$0/pyproject.toml" --cache-dir "$0/.mypy_cache" ./*.py' "$root" "$py"
# The shim's JavaScript, type-checked from its JSDoc by tsc (pinned in tests/js-types/package.json,
# installed there: never a dependency of the plugin, which stays dependency-free).
js_types() {
  npm install --prefix tests/js-types --no-audit --no-fund --no-package-lock --silent &&
    tests/js-types/node_modules/.bin/tsc -p tests/js-types
}
stage "JS type check (tsc --noEmit over node-shim)" js_types
# compat first: it installs the pinned dsh, which pytest's own real-boot test then uses too
stage "compat: boot real dsh versions" compat/run-all.sh
# the README's first command, on the dsh compat installed; it keeps .demo/ (removed at the end)
stage "demo (npm run demo)" npm run --silent demo
# pytest writes its "did not run: N tests (why)" line there too, printed again at the very end
stage "Python tests (pytest)" env RTB_SKIPPED_FILE="$skipped_line" $py -m pytest --hypothesis-profile=ci
stage "Node shim tests (node --test)" env RTB_PYTHON="$root/$py" node --test node-shim/test/*.test.js

echo
[[ -s $skipped_line ]] && echo "pytest $(cat "$skipped_line")"
((${#failed[@]})) && echo "failed stages: ${failed[*]}"
echo "stages: $passed passed, ${#failed[@]} failed"
((${#failed[@]} == 0))
