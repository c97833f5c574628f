"""The failure track of one agent (``failWarnAt``, ``failLimit``), and the results it awaits.

An allowed call whose result matters is remembered until that result arrives: what to judge it
by (its capped fingerprints, when the failure track is on) and the notice owed to it. The result
is judged from its plain facts (``outcomes.judge``): a failure grows the streaks of the call's
capped fingerprints (``streaks.Streaks``), a success ends them. A fingerprint whose streak
reached ``failLimit`` stops the next call carrying it; a streak reaching exactly ``failWarnAt``
earns a notice. A streak lives while its fingerprint is in the window.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from breaker.core import messages
from breaker.core.config import BreakerConfig
from breaker.core.fingerprints import Fingerprint, ToolCall
from breaker.core.notices import naming_rank
from breaker.core.outcomes import Failure, Settled, judge
from breaker.core.streaks import Streaks
from breaker.core.verdicts import FailureHit, Notice
from breaker.core.window import Window, digest, split


@dataclass(frozen=True, slots=True)
class Running:
    """An allowed call awaiting its result: what to judge it by, and the notice owed to it."""

    tool: str
    capped: tuple[Fingerprint, ...]  # its capped fingerprints, when the failure track is on
    notice: Notice | None


class Failures:
    """One agent's failure streaks and the allowed calls whose results it awaits."""

    __slots__ = ("running", "streaks")

    def __init__(self) -> None:
        self.streaks = Streaks()
        self.running: dict[str, Running] = {}

    def hits(self, fingerprints: Iterable[Fingerprint], limit: float | None) -> tuple[FailureHit, ...]:
        """The fingerprints whose calls already failed ``limit`` times in a row."""
        if limit is None or not self.streaks:
            return ()
        found: list[FailureHit] = []
        for fp in fingerprints:
            streak = self.streaks.get(fp.key)
            if streak is not None and streak.count >= limit:
                found.append(FailureHit(fp, streak, limit))
        return tuple(found)

    def longest(self) -> int:
        """The longest streak, counting every result still awaited as one more failure."""
        return self.streaks.longest() + len(self.running)

    def await_result(
        self,
        call: ToolCall,
        fingerprints: Iterable[Fingerprint],
        notice: Notice | None,
        config: BreakerConfig,
    ) -> None:
        """Remember what the result of an allowed call is needed for (nothing, by default)."""
        capped: tuple[Fingerprint, ...] = ()
        if config.tracks_failures:
            capped = tuple(fp for fp in fingerprints if config.limit_for(fp.kind, fp.key) is not None)
        if not capped and notice is None:
            return
        self.running[call.call_id] = Running(call.name, capped, notice)
        if len(self.running) > config.window:  # a result that never came
            del self.running[next(iter(self.running))]

    def result(
        self, call_id: str, text: str, outcome: Mapping[str, object] | None, config: BreakerConfig
    ) -> tuple[Notice, ...]:
        """The result of an allowed call arrived: judge it; the notices owed to the call (a
        failure notice first, then the one decided when it was allowed)."""
        running = self.running.pop(call_id, None)
        if running is None:
            return ()
        notices: list[Notice] = []
        if running.capped:
            judged = judge(running.tool, outcome, text)
            if isinstance(judged, Failure):
                quote = messages.quotable(text, config.resultPreviewChars)
                warning = self._failed(call_id, running.capped, judged, quote, config)
                if warning is not None:
                    notices.append(warning)
            elif judged is Settled.SUCCEEDED:
                self.streaks.end(fp.key for fp in running.capped)
        if running.notice is not None:
            notices.append(running.notice)
        return tuple(notices)

    def left(self, digests: bytes, window: Window) -> None:
        """An entry left the window (its key ``digests``): streaks whose key it took out end."""
        if self.streaks:
            gone = split(digests)
            self.streaks.end([key for key in self.streaks if digest(key) in gone and not window.count(key)])

    def clear(self) -> None:
        self.streaks.clear()
        self.running.clear()

    def _failed(
        self,
        call_id: str,
        capped: tuple[Fingerprint, ...],
        failure: Failure,
        quote: str,
        config: BreakerConfig,
    ) -> Notice | None:
        """Grow the streaks of a failed call; a notice when one reaches exactly ``failWarnAt``."""
        counts = self.streaks.fail((fp.key for fp in capped), failure, quote, call_id)
        crossed = [fp for fp in capped if counts[fp.key] == config.failWarnAt]
        if not crossed:
            return None
        named = min(crossed, key=naming_rank)
        return messages.failure_notice(named.key, counts[named.key], failure, config)
