"""``Breaker.decide`` on the real runs, this checkout against another, taking turns.

    python bench/decide_vs.py --old /path/to/other/checkout [--rounds 7] [--repeats 3]
        [--old-config '{"identity": "state-aware"}'] [--new-config '{}'] [--only 3]

Every real source (tests/corpus/sources.py: ``../shared/real-sessions``, ``-2``, ``-3``) is read
once, here, and written to a scratch file as plain events; each checkout then replays it in a
process of its own, as ``rtb replay`` feeds a session (model turns, human turns, calls and their
recorded results, a fresh ``Breaker`` per session), with only ``decide`` on the clock: the CPU
time of the calling thread (``time.thread_time_ns``), so that waiting for the other helpers of
a shared machine is not counted. The two checkouts take turns, source by source, the first
alternating round by round; each process replays the source a few times over. Each call keeps
the least time it took in any replay of any round (the same calls in the same order each time,
so what is left is the call's own cost, not what else the machine did then), and the p50, p99
and total are read from those. Printed as Markdown; nothing is asserted (the ratio is
new / old: below 1 the new checkout is faster).

A checkout that has no ``new_step`` (before model turns were read) skips those events.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: The mode each side runs by default: the recommended mode of the old defaults, the new defaults.
OLD_CONFIG = '{"identity": "state-aware"}'
NEW_CONFIG = "{}"


def write_events(path: Path, source: Any) -> int:
    """``source``'s sessions as one JSON event a line (``session`` starts a fresh breaker);
    returns the number of calls."""
    from breaker.rtb.read.sessions import CallEvent, HumanTurn, ResultEvent, StepStart

    calls = 0
    with path.open("w", encoding="utf-8") as out:
        for session in source.sessions:
            out.write('["session"]\n')
            for event in session.events:
                if isinstance(event, CallEvent):
                    calls += 1
                    call = event.call
                    row: list[Any] = ["call", event.agent, call.name, call.arguments, call.call_id]
                elif isinstance(event, ResultEvent):
                    row = ["result", event.agent, event.call_id, event.text[:8192], event.is_error]
                elif isinstance(event, StepStart):
                    row = ["step", event.agent]
                elif isinstance(event, HumanTurn):
                    row = ["human", event.agent]
                else:
                    continue
                out.write(json.dumps(row) + "\n")
    return calls


def replay(checkout: Path, config_text: str, events: Path, repeats: int) -> dict[str, list[int]]:
    """In the child: ``events`` through ``checkout``'s breaker ``repeats`` times over (each time read
    anew, as a worker reads each request); the least CPU time (ns) of each ``decide`` and of each
    ``record_result``, in order."""
    sys.path.insert(0, str(checkout))
    import time

    import breaker
    from breaker.core.config import load_config

    # Each checkout's ``decision`` module holds the call type it takes, wherever it is defined.
    from breaker.core.decision import Breaker, ToolCall  # type: ignore[attr-defined]

    if not Path(breaker.__file__).resolve().is_relative_to(checkout.resolve()):
        raise SystemExit(f"imported {breaker.__file__}, not the checkout {checkout}")
    config = load_config(json.loads(config_text))
    clock = time.thread_time_ns
    least: dict[str, list[int]] = {"decide": [], "result": []}
    for _ in range(repeats):
        times: list[int] = []
        results: list[int] = []
        current: Any = None
        with events.open(encoding="utf-8") as lines:
            for line in lines:
                row = json.loads(line)
                kind = row[0]
                if kind == "session":
                    current = Breaker(config)
                elif kind == "call":
                    call = ToolCall(row[2], row[3], row[4])
                    started = clock()
                    current.decide(row[1], call)
                    times.append(clock() - started)
                elif kind == "result":
                    started = clock()
                    current.record_result(row[1], row[2], row[3], {"isError": row[4]})
                    results.append(clock() - started)
                elif kind == "step" and hasattr(current, "new_step"):
                    current.new_step(row[1])
                elif kind == "human":
                    current.human_message(row[1])
        least = {"decide": _least(least["decide"], times), "result": _least(least["result"], results)}
    return least


def _least(kept: list[int], times: list[int]) -> list[int]:
    """Call by call, the lower of two runs' times (``kept`` empty: ``times``)."""
    return [min(pair) for pair in zip(kept, times, strict=True)] if kept else times


def figures(times: list[int]) -> dict[str, float]:
    """p50 and p99 (µs) and the total (ms) of per-call times in ns."""
    ordered = sorted(times)
    return {
        "p50": ordered[len(ordered) // 2] / 1000,
        "p99": ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] / 1000,
        "total": sum(ordered) / 1e6,
    }


def _run(checkout: Path, config_text: str, events: Path, repeats: int) -> dict[str, list[int]]:
    command = [sys.executable, __file__, "--child", str(checkout), config_text, str(events), str(repeats)]
    times: dict[str, list[int]] = json.loads(subprocess.check_output(command, cwd=checkout))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, required=True, help="the checkout compared against")
    parser.add_argument("--new", type=Path, default=ROOT, help="default: this checkout")
    parser.add_argument("--old-config", default=OLD_CONFIG)
    parser.add_argument("--new-config", default=NEW_CONFIG)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--repeats", type=int, default=3, help="replays of a source per process")
    parser.add_argument("--only", default="", help="only the sources whose name ends so ('3')")
    args = parser.parse_args()
    sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "corpus")]
    from sources import real_sources  # type: ignore[import-not-found]

    sources, absent = real_sources()
    sources = [source for source in sources if source.name.endswith(args.only)]
    for name, folder in absent:
        print(f"({name}: {folder} is absent, skipped)")
    sides = {"old": (args.old, args.old_config), "new": (args.new, args.new_config)}
    least: dict[tuple[str, str, str], list[int]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        files = {}
        calls = {}
        for number, source in enumerate(sources):
            files[source.name] = Path(scratch) / f"source-{number}.jsonl"
            calls[source.name] = write_events(files[source.name], source)
        for turn in range(args.rounds):
            order = ["old", "new"] if turn % 2 == 0 else ["new", "old"]
            for source in sources:
                for side in order:
                    checkout, config_text = sides[side]
                    runs = _run(checkout, config_text, files[source.name], args.repeats)
                    for op, times in runs.items():
                        key = (source.name, side, op)
                        least[key] = _least(least.get(key, []), times)
            print(f"(round {turn + 1} of {args.rounds} done)", file=sys.stderr)
    print(
        f"`decide` CPU time per call (µs; each call's least over {args.rounds} rounds taking "
        f"turns, {args.repeats} replays each); total: of every call; with results: the total of "
        "every `decide` and every `record_result` (what a result reads counts there)."
    )
    print(f"old: {args.old} with {args.old_config}; new: {args.new} with {args.new_config}.")
    print()
    print(
        "| source | calls | old p50 / p99 | new p50 / p99 | p50 new/old | p99 new/old "
        "| total new/old | with results new/old |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for source in sources:
        old, new = (figures(least[(source.name, side, "decide")]) for side in ("old", "new"))
        old_all, new_all = (
            sum(least[(source.name, side, "decide")]) + sum(least[(source.name, side, "result")])
            for side in ("old", "new")
        )
        print(
            f"| {source.name} | {calls[source.name]} "
            f"| {old['p50']:.1f} / {old['p99']:.1f} | {new['p50']:.1f} / {new['p99']:.1f} "
            f"| {new['p50'] / old['p50']:.2f}x | {new['p99'] / old['p99']:.2f}x "
            f"| {new['total'] / old['total']:.2f}x | {new_all / old_all:.2f}x |"
        )


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--child":
        print(json.dumps(replay(Path(sys.argv[2]), sys.argv[3], Path(sys.argv[4]), int(sys.argv[5]))))
    else:
        main()
