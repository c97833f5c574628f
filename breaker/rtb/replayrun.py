"""`rtb replay` over many sessions, one at a time, each call handed to the report as it is decided.

For each session: a first, fast pass over its logs for what a call's verdict needs from later in
the log (approvals, calls never dispatched: ``replayer.lookahead``), then the replay itself, event by
event (``replayer.Replayer``), a second configuration's beside it when the page compares two. The
report (``Report``) gets every call and a ``Digest`` of each session; memory holds the calls waiting
for their results, not the session. Unreadable lines are said on stderr as each session ends.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from itertools import islice
from typing import Protocol, TextIO

from breaker.core.config import BreakerConfig
from breaker.rtb.read.events import ReadProblem
from breaker.rtb.read.sessions import SessionSource
from breaker.rtb.replay.replayer import CallReplay, Replayer, lookahead
from breaker.rtb.show import shown
from breaker.rtb.show.digest import Digest

#: Events read from a log before they are replayed: reading a run of lines, then deciding a run
#: of calls, keeps the code and data of each warm in the CPU's caches (some 5% faster than one
#: event at a time).
_BATCH = 1000
#: How often, in calls, the progress line checks the clock; and how often it is redrawn (s).
_TICK_CALLS = 4096
_TICK_SECONDS = 0.5


class Report(Protocol):
    """What a replay hands its calls to."""

    def begin(self, digest: Digest) -> None: ...

    def call(self, call: CallReplay, other: CallReplay | None) -> None: ...

    def end(self, digest: Digest) -> None: ...


class Ticker:
    """One line on a terminal (stderr) saying how far the replay is; nothing when it is piped."""

    def __init__(self, sessions: int, stream: TextIO, *, active: bool | None = None) -> None:
        self.sessions = sessions
        self.stream = stream
        self.active = stream.isatty() if active is None else active
        self.session = 0
        self.calls = 0
        self.started = time.monotonic()
        self._drawn = 0.0

    def next_session(self) -> None:
        self.session += 1
        self._draw()

    def tick(self, calls: int) -> None:
        self.calls += calls
        if self.active and self.calls % _TICK_CALLS < calls:
            now = time.monotonic()
            if now - self._drawn >= _TICK_SECONDS:
                self._draw(now)

    def _draw(self, now: float | None = None) -> None:
        if not self.active:
            return
        self._drawn = time.monotonic() if now is None else now
        self.stream.write(
            f"\r\033[Krtb: session {self.session}/{self.sessions}, {self.calls:,} calls replayed "
            f"({self._drawn - self.started:.0f} s)"
        )
        self.stream.flush()

    def clear(self) -> None:
        if self.active:
            self.stream.write("\r\033[K")
            self.stream.flush()


def run(
    sources: Sequence[SessionSource],
    config: BreakerConfig,
    report: Report,
    *,
    counts: bool,
    other: BreakerConfig | None = None,
    keep: Callable[[CallReplay], bool] | None = None,
    ticker: Ticker | None = None,
) -> tuple[list[Digest], list[ReadProblem]]:
    """Replay every session into ``report``; (each session's digest, the problems met)."""
    ticker = ticker or Ticker(len(sources), sys.stderr)
    digests: list[Digest] = []
    problems: list[ReadProblem] = []
    for source in sources:
        ticker.next_session()
        approved, not_dispatched = lookahead(source.stream(only_lookahead=True))
        mine = Replayer(config, approved=approved, not_dispatched=not_dispatched, counts=counts)
        theirs = (
            None
            if other is None
            else Replayer(other, approved=approved, not_dispatched=not_dispatched, counts=counts)
        )
        digest = Digest(source.session_id, source.path, members=source.agents)
        report.begin(digest)
        events = source.stream()
        while batch := list(islice(events, _BATCH)):  # read a batch, then replay it: each stays warm
            for event in batch:
                done = mine.feed(event)
                paired = theirs.feed(event) if theirs is not None else None
                if done:
                    _hand(report, digest, done, paired, keep)
                    ticker.tick(len(done))
        _hand(report, digest, mine.finish(), theirs.finish() if theirs is not None else None, keep)
        digest.about = source.about
        report.end(digest)
        digests.append(digest)
        if source.problems:
            ticker.clear()
            for problem in source.problems:
                print(f"rtb: {shown.inline(str(problem))}", file=sys.stderr)
            problems.extend(source.problems)
    ticker.clear()
    return digests, problems


def _hand(
    report: Report,
    digest: Digest,
    done: Sequence[CallReplay],
    paired: Sequence[CallReplay] | None,
    keep: Callable[[CallReplay], bool] | None,
) -> None:
    """Hand the calls ``done`` (and the other replay's same calls) to the digest and the report."""
    if paired is None and keep is None:
        add, hand = digest.add, report.call
        for call in done:
            add(call, None)
            hand(call, None)
        return
    for index, call in enumerate(done):
        if keep is None or keep(call):
            other = paired[index] if paired is not None else None
            digest.add(call, other)
            report.call(call, other)
