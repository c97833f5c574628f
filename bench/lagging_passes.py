"""How many calls of the real sessions go on without waiting for the worker when the shim is ahead
of it: ``python bench/lagging_passes.py [--lag 4]``.

The calls of one model turn, or of an agent calling back to back, reach the shim before the
worker has answered the results before them. This replays every session of the real corpora
(``../shared/real-sessions*``, read where they are, under the defaults) with the shim ``lag`` calls
ahead: the promise in hand for a call is the answer given once every result before the first call
of its run of ``lag`` calls was in, and the results of the run's earlier calls have been sent since
(they may break its condition, ``reading.news``). For each later call of a run it counts whether
the call goes on by the plain passes, by the conditional ones while the condition holds, or by its
group (``reading.groups``): a call that does none of these waits for the worker. What it prints are
counts of calls; a verdict never changes with them (tests/test_conditions.py, tests/test_groups.py).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "corpus")]

from breaker import Breaker, load_config  # noqa: E402
from breaker.core.deciding.passes import Conditional, by_group  # noqa: E402
from breaker.core.reading.groups import call_group  # noqa: E402
from breaker.core.reading.news import breaks, digest  # noqa: E402
from breaker.rtb.read.events import CallEvent, HumanTurn, ResultEvent, StepStart  # noqa: E402
from breaker.rtb.read.sessions import Session  # noqa: E402


@dataclass
class Run:
    """The promise in hand for a run of calls, and what was sent since its answer."""

    passes: int
    more: Conditional | None
    size: int  # the window's
    calls: int = 0
    groups: list[int] = field(default_factory=list)
    forbidden: set[int] = field(default_factory=set)
    holds: bool = True

    def goes_on(self, tool: str, group: int) -> str:
        """How the next call goes on: ``plain``, ``conditional``, ``group``, or ``waits``."""
        if self.calls < self.passes:
            return "plain"
        more = self.more
        if more is None or not self.holds:
            return "waits"
        if self.calls < more.passes:
            return "conditional"
        return "group" if by_group(more, tool, group, self.groups, self.size) else "waits"


def replay(session: Session, lag: int, tally: Counter[str]) -> None:
    """One session's calls, ``lag`` a run, into ``tally``."""
    breaker = Breaker(load_config({}))
    runs: dict[str, Run] = {}
    tools: dict[str, str] = {}
    for event in session.events:
        agent = event.agent
        if isinstance(event, CallEvent):
            call = event.call
            run = runs.get(agent)
            if run is None or run.calls >= lag:
                now = breaker.passes(agent)
                more = breaker.conditional(agent, now)
                forbidden = set(more.digests) if more else set()
                run = runs[agent] = Run(now, more, breaker.config.window, forbidden=forbidden)
            group = call_group(
                call.name, call.arguments, breaker.config.ignoreArgs, breaker.config.url_calls_grouped
            )
            if run.calls > 0:
                tally["later calls"] += 1
                tally[run.goes_on(call.name, group)] += 1
            tools[call.call_id] = call.name
            breaker.preflight(agent, call)
            breaker.decide(agent, call)
            run.calls += 1
            run.groups.append(group)
        elif isinstance(event, ResultEvent):
            facts = {"isError": event.is_error}
            tool = tools.get(event.call_id, "")
            run = runs.get(agent)
            if run is not None and run.holds:
                run.holds = not breaks(tool, event.text, facts, run.forbidden)
                run.forbidden.add(digest(tool, event.text))
            breaker.record_result(agent, event.call_id, event.text, facts)
        elif isinstance(event, HumanTurn):
            breaker.human_message(agent)
            runs.pop(agent, None)
        elif isinstance(event, StepStart):
            breaker.new_step(agent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--lag", type=int, default=4, help="calls a run: the shim this far ahead (default 4)")
    options = parser.parse_args()
    from sources import real_sources  # the corpora's reader (tests/corpus), read at run time

    present, absent = real_sources()
    for name, folder in absent:
        print(f"{name}: {folder} is not there")
    if not present:
        print("no corpus of real sessions is there: nothing to count")
        return
    print(f"runs of {options.lag} calls; how the later calls of a run go on, or wait for the worker\n")
    print("| sessions | later calls | plain passes | conditional | by group | wait |")
    print("|---|---|---|---|---|---|")
    for source in present:
        tally: Counter[str] = Counter()
        for session in source.sessions:
            replay(session, options.lag, tally)
        later = tally["later calls"]
        kinds = ("plain", "conditional", "group", "waits")
        shares = [f"{tally[kind]:,} ({100 * tally[kind] / max(later, 1):.0f} %)" for kind in kinds]
        print(f"| {source.name} | {later:,} | {' | '.join(shares)} |")


if __name__ == "__main__":
    main()
