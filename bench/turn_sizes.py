"""How many calls the model turns of the real agent runs hold: python bench/turn_sizes.py

For each real source present (tests/corpus/sources.py), its turns (a turn begins at each
``StepStart`` the reader marks: a new model step, or a human message) by their number of calls,
and its calls by their place in their turn: a call comes back to back after the one before it in
its turn, and a pass covers so many calls ahead of the worker (bench/turns.mjs).
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "corpus")]

from sources import real_sources  # noqa: E402

from breaker.rtb.read.events import CallEvent, StepStart  # noqa: E402

PLACES = 4  # the 1st, 2nd and 3rd call of a turn, then the 4th or later


def turn_sizes(events: Iterable[object]) -> Counter[int]:
    """The number of calls of each turn of one session's events."""
    sizes: Counter[int] = Counter()
    calls = 0
    for event in events:
        if isinstance(event, StepStart):
            if calls:
                sizes[calls] += 1
            calls = 0
        elif isinstance(event, CallEvent):
            calls += 1
    if calls:
        sizes[calls] += 1
    return sizes


def _ordinal(n: int) -> str:
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n, 'th') }"


def main() -> None:
    present, absent = real_sources()
    places = [f"{_ordinal(place)} call" for place in range(1, PLACES)] + [f"{_ordinal(PLACES)} or later"]
    print(f"| source | turns | calls | turns by calls (calls: turns) | {' | '.join(places)} |")
    print(f"|---|---|---|---|{'---|' * PLACES}")
    for source in present:
        sizes: Counter[int] = Counter()
        for session in source.sessions:
            sizes.update(turn_sizes(session.events))
        calls = sum(size * count for size, count in sizes.items())
        at = [sum(count for size, count in sizes.items() if size >= place) for place in range(1, PLACES + 1)]
        at[-1] = sum((size - PLACES + 1) * count for size, count in sizes.items() if size >= PLACES)
        shown = ", ".join(f"{size}: {count}" for size, count in sorted(sizes.items()))
        cells = " | ".join(f"{count:,} ({count / calls:.1%})" for count in at)
        print(f"| {source.name} | {sum(sizes.values()):,} | {calls:,} | {shown} | {cells} |")
    for name, folder in absent:
        print(f"| {name} | not measured: {folder} is absent |{' |' * (2 + PLACES)}")


if __name__ == "__main__":
    main()
