"""Whole-turn overhead in a real dsh: python3 bench/whole_turn.py --home DSH_HOME [--calls 200] [--runs 3]

Reuses the compat harness (compat/run.py, compat/mock_model.py): the scripted model issues
``--calls`` distinct bash calls (``echo N``: nothing is denied) in one headless turn, once with the
plugin mounted and once from a copy of the profile without the bundle listed. The difference of the
turn's wall time, divided by the calls, is the plugin's cost per call (its one-off worker start is
shown apart). ``--home`` is a DSH_HOME made by ``compat/setup.sh VERSION dir HOME``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "compat"))

from dsh_run import Target, attempts_of, find_session, read_events, run_dsh  # noqa: E402
from mock_model import MockModel, Script  # noqa: E402
from scenarios import bash  # noqa: E402

BUNDLE = "dsh-repeat-tool-breaker"


def without_plugin(home: Path) -> Path:
    """A copy of ``home`` whose profile lists every bundle but this plugin's."""
    bare = home.with_name(home.name + "-without-plugin")
    shutil.rmtree(bare, ignore_errors=True)
    shutil.copytree(home, bare, symlinks=True, ignore=shutil.ignore_patterns("work", "sessions"))
    manifest_path = bare / "profiles" / "compat" / "package.json"
    manifest = json.loads(manifest_path.read_text())
    bundles = manifest["dsh"]["profile"]["bundles"]
    manifest["dsh"]["profile"]["bundles"] = [name for name in bundles if name != BUNDLE]
    manifest_path.write_text(json.dumps(manifest, indent=2))
    return bare


def one_turn(home: Path, calls: int, label: str) -> float:
    """Seconds of one headless turn of ``calls`` tool calls; checks every call ran."""
    target = Target.load(home)
    work = home / "work" / f"bench-{label}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    script = Script(tuple(bash(f"echo {n}", "print a number") for n in range(calls)), final="done")
    model = MockModel(script, port=target.mock_port).start()
    started = time.time()
    try:
        run = run_dsh(target, [f"bench whole turn {label}"], work, {}, timeout=600)
    finally:
        model.stop()
    session = find_session(target.home, work, started - 1)
    attempts = attempts_of(read_events(session)) if session else []
    executed = sum(1 for attempt in attempts if attempt.is_error is False)
    if run.returncode != 0 or executed != calls:
        failure = f"{label}: dsh exited {run.returncode}, {executed}/{calls} calls ran"
        raise SystemExit(f"{failure}\n{run.stderr[-2000:]}")
    return run.seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    homes = {"with plugin": options.home, "without plugin": without_plugin(options.home)}
    seconds: dict[str, list[float]] = {label: [] for label in homes}
    for run in range(options.runs):  # interleaved, so load drifts hit both alike
        for label, home in homes.items():
            seconds[label].append(one_turn(home, options.calls, f"{label.split()[0]}-{run}"))
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"| dsh turn, {options.calls} bash calls | median | runs |")
    print("|---|---|---|")
    for label, values in seconds.items():
        print(f"| {label} | {statistics.median(values):.2f} s | {', '.join(f'{v:.2f}' for v in values)} |")
    difference = statistics.median(seconds["with plugin"]) - statistics.median(seconds["without plugin"])
    print(f"| difference per call (worker start included) | {difference / options.calls * 1000:.2f} ms | |")


if __name__ == "__main__":
    main()
