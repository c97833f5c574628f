"""How long the decision takes on real runs: ``Breaker.decide`` timed call by call (p50, p99).

Each session is fed to a fresh ``Breaker`` as ``rtb replay`` feeds it (model turns, human turns,
calls and their recorded results); only ``decide`` is on the clock. The figures are wall time on
this machine, printed beside the quality tables for comparing modes in one run, never asserted.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from sources import Source

from breaker.core.config import BreakerConfig
from breaker.core.decision import Breaker
from breaker.rtb.read.sessions import CallEvent, HumanTurn, ResultEvent, StepStart


def decide_times(source: Source, config: BreakerConfig) -> list[float]:
    """Microseconds each ``decide`` of every session of ``source`` took under ``config``."""
    times: list[float] = []
    clock = time.perf_counter_ns
    for session in source.sessions:
        breaker = Breaker(config)
        for event in session.events:
            if isinstance(event, CallEvent):
                started = clock()
                breaker.decide(event.agent, event.call)
                times.append((clock() - started) / 1000)
            elif isinstance(event, ResultEvent):
                breaker.record_result(
                    event.agent, event.call_id, event.text[:8192], {"isError": event.is_error}
                )
            elif isinstance(event, StepStart):
                breaker.new_step(event.agent)
            elif isinstance(event, HumanTurn):
                breaker.human_message(event.agent)
    return times


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def timing_table(rows: Sequence[tuple[str, BreakerConfig]], sources: Sequence[Source]) -> list[str]:
    """One row per mode: decide's p50 and p99 in µs on each real source."""
    real = [source for source in sources if source.real]
    lines = [
        "Time of one `decide` on the real runs (µs, this machine; p50 / p99), each mode in one run.",
        "",
        "| mode | " + " | ".join(source.name for source in real) + " |",
        "| --- |" + " --- |" * len(real),
    ]
    for name, config in rows:
        cells = []
        for source in real:
            times = decide_times(source, config)
            cells.append(f"{percentile(times, 0.5):.0f} / {percentile(times, 0.99):.0f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines
