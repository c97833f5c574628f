#!/usr/bin/env bash
# Every benchmark in one run, printed as Markdown: bash bench/run.sh  (or: npm run bench)
#
# The reference plugin (dsh-repeat-tool-breaker@0.5.2 from npm, pure in-process JS) is installed
# into a temporary folder, never into this checkout. The whole-turn step needs the pinned dsh
# (compat/setup.sh installs it) and is skipped when it is not there; so are the boot figures.
# BENCH_CALLS scales the guard and decision runs (default 10000); BENCH_RUNS is the number of
# interleaved pipeline runs (default 5), BENCH_BOOTS of interleaved dsh boots (default 7),
# BENCH_FIRST_BOOTS of first-boot preparations each way (default 2; each fetches every package
# from the index); BENCH_SESSION_CALLS the longest session of the scaling table (default 1000000);
# BENCH_RTB_CALLS the session `rtb replay` and `--html` are timed on (default 1000000) and
# BENCH_RTB_RUNS how many times the replay and the decisions alone take turns on it (default 3:
# about 20 minutes of the run on a loaded 2-core machine); BENCH_RTB_FAILING_CALLS the session of
# test runs failing alike they are timed on too (default 100000).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
calls="${BENCH_CALLS:-10000}"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
if [ -z "${RTB_PYTHON:-}" ] && [ -x .venv/bin/python ]; then export RTB_PYTHON="$root/.venv/bin/python"; fi
python="${RTB_PYTHON:-python3}"

echo "# Benchmarks"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- breaker node-shim || echo ' (with local changes)')"
echo "- machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); Node $(node --version); $("$python" --version)"
echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

npm install --silent --no-audit --no-fund --prefix "$scratch/reference" dsh-repeat-tool-breaker@0.5.2 >/dev/null
reference="$scratch/reference/node_modules/dsh-repeat-tool-breaker/index.js"

# A real dsh for the boot and whole-turn figures, when the pinned one is installed.
dsh_home=""
compat_python=python3  # compat/run.py reads dsh's session logs, which needs zstandard
python3 -c 'import zstandard' 2>/dev/null || compat_python="$python"
if [ -x compat/dsh-0.1.0-rc.8/node_modules/.bin/dsh ]; then
  dsh_home="$scratch/dsh-home"
  COMPAT_CACHE="$scratch/dsh-cache" bash compat/setup.sh 0.1.0-rc.8 dir "$dsh_home" >/dev/null
fi
skipped="(skipped: run compat/setup.sh 0.1.0-rc.8 dir <home> once to install the pinned dsh)"

echo; echo "## Starting: dsh boot with and without the plugin, and the first boot"; echo
if [ -n "$dsh_home" ]; then
  "$compat_python" bench/boot.py --home "$dsh_home" --runs "${BENCH_BOOTS:-7}" \
    --reference "$scratch/reference/node_modules/dsh-repeat-tool-breaker" --first-boot "${BENCH_FIRST_BOOTS:-2}"
else
  echo "$skipped"
fi

echo; echo "## Through the pipeline: ours vs reference 0.5.2 vs no plugin"; echo
node bench/pipeline.mjs "$reference" "${BENCH_RUNS:-5}"
echo; node bench/fifo_floor.mjs

echo; echo "## Calls of one model turn"; echo
node bench/turns.mjs "$reference" "${BENCH_RUNS:-5}"
echo; "$python" bench/turn_sizes.py
echo; "$python" bench/lagging_passes.py --lag 2
echo; "$python" bench/lagging_passes.py --lag 4

echo; echo "## Decision cost in Python alone (no pipe)"; echo; echo '```'
"$python" bench/decision.py --calls "$calls"
echo '```'

echo; echo "## The worker's own time per call, back to back (no pipe)"; echo; echo '```'
"$python" bench/worker_time.py
echo '```'

echo; echo "## Guard round trip, ours vs reference 0.5.2"; echo
node bench/guard.mjs "$reference" "$calls"

echo; echo "## Worker memory per hostile frame"; echo
"$python" bench/frame_memory.py --mb 16

echo; echo "## Cold start, restart, memory"; echo
node bench/worker.mjs 5

echo; echo "## A worker's start with the shared temporary folder crowded by another user"; echo
node bench/crowded_tmp.mjs 200000 5

echo; echo "## Scaling: agents, window, argument size, session length"; echo
"$python" bench/scaling.py --session-calls "${BENCH_SESSION_CALLS:-1000000}"

echo; echo "## rtb replay and --html over one long session"; echo
"$python" bench/rtb_scale.py --calls "${BENCH_RTB_CALLS:-1000000}" --runs "${BENCH_RTB_RUNS:-3}"
echo; echo "## rtb replay over a session of test runs failing alike"; echo
"$python" bench/rtb_scale.py --shape failing-tests --calls "${BENCH_RTB_FAILING_CALLS:-100000}" --runs "${BENCH_RTB_RUNS:-3}"

echo; echo "## Worst guard latency under each fault"; echo
node --expose-gc bench/faults.mjs

echo; echo "## Whole turn in a real dsh"; echo
if [ -n "$dsh_home" ]; then
  "$compat_python" bench/whole_turn.py --home "$dsh_home" --calls 200 --runs 3
else
  echo "$skipped"
fi
echo; echo "- load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
