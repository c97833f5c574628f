#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what it needs, then runs
# the Python tests, the Node shim's tests and the compat boots of real dsh versions.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

step() { printf '\n=== %s\n' "$*"; }

step "worker environment (.venv) and test tools"
node node-shim/setup.js
.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-input -e ".[test]"
py=.venv/bin/python

step "static checks: ruff, mypy --strict"
$py -m ruff check breaker tests compat
$py -m mypy --strict breaker

step "Python tests (pytest)"
$py -m pytest

step "Node shim tests (node --test)"
RTB_PYTHON="$root/$py" node --test node-shim/test/*.test.js

if [ -x compat/run-all.sh ]; then
  step "compat: boot real dsh versions"
  RTB_PYTHON="$root/$py" compat/run-all.sh
fi
