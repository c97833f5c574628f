#!/usr/bin/env bash
# Decision quality in one table (npm run quality [-- --write-readme]): this project's modes, the reference plugin 0.5.2
# and the published loop detectors, on the corpus, the evasions and ../shared/real-sessions.
#
# The reference plugin (dsh-repeat-tool-breaker@0.5.2 from npm) is installed into a temporary
# folder, never into this checkout; when npm cannot install it, its row says it was not measured.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
python="${RTB_PYTHON:-python3}"
if [ -z "${RTB_PYTHON:-}" ] && [ -x .venv/bin/python ]; then python="$root/.venv/bin/python"; fi

echo "# Decision quality"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- breaker tests/corpus || echo ' (with local changes)')"
if npm install --silent --no-audit --no-fund --prefix "$scratch/reference" dsh-repeat-tool-breaker@0.5.2 >/dev/null 2>&1; then
  echo "- reference: dsh-repeat-tool-breaker@0.5.2 from npm, its real guard with its own defaults"
  echo
  "$python" tests/corpus/compare.py --reference "$scratch/reference/node_modules/dsh-repeat-tool-breaker/index.js" "$@"
else
  echo "- reference: dsh-repeat-tool-breaker@0.5.2 could not be installed from npm; its row is not measured"
  echo
  "$python" tests/corpus/compare.py "$@"
fi
