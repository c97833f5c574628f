#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what it needs, then runs the static
# checks, the Python tests, the Node shim's tests and the compat boots of real dsh versions.
# Every stage runs even when an earlier one failed; the exit status is non-zero if any did.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
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
stage "ruff" $py -m ruff check breaker tests compat
stage "ruff format --check" $py -m ruff format --check breaker tests compat
stage "mypy --strict" $py -m mypy --strict breaker
# compat first: it installs the pinned dsh, which pytest's own real-boot test then uses too
stage "compat: boot real dsh versions" compat/run-all.sh
stage "Python tests (pytest)" $py -m pytest --hypothesis-profile=ci
stage "Node shim tests (node --test)" env RTB_PYTHON="$root/$py" node --test node-shim/test/*.test.js

echo
((${#failed[@]})) && echo "failed stages: ${failed[*]}"
echo "stages: $passed passed, ${#failed[@]} failed"
((${#failed[@]} == 0))
