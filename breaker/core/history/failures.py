"""The failure track of one agent (``failWarnAt``, ``failLimit``), and the results it awaits.

An allowed call whose result matters is remembered until that result arrives: what to judge it
by (its capped fingerprints, when the failure track is on) and the notice owed to it. The result
is judged from its plain facts (``outcomes.judge``, by ``deciding.rules.returned``): a failure
grows the streaks of the call's capped fingerprints (``streaks.Streaks``), a success ends them.
A fingerprint whose streak reached ``failLimit`` stops the next call carrying it; a streak
reaching exactly ``failWarnAt`` earns a notice. A streak lives while its fingerprint is in the window.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

from breaker.core.config import BreakerConfig
from breaker.core.history.caps import cap_of
from breaker.core.history.streaks import Streak, Streaks
from breaker.core.history.window import Window, digest, split
from breaker.core.reading import Failure, Fingerprint, ToolCall
from breaker.core.reading.volatile import Answer

#: The notice owed to an allowed call, held until its result: worded by a later stage, kept here as is.
Owed = TypeVar("Owed")


@dataclass(frozen=True, slots=True)
class FailureHit:
    """One fingerprint whose calls failed ``streak.count`` times in a row, at or past ``limit``."""

    fingerprint: Fingerprint
    streak: Streak
    limit: float


class Running(Generic[Owed]):
    """An allowed call awaiting its result: what to judge it by, and the notice owed to it. Made
    for every allowed call, read once and never changed: a plain class (a frozen dataclass costs
    three times as much to make, and a generic named tuple needs Python 3.11)."""

    __slots__ = ("capped", "notice", "tool")

    def __init__(self, tool: str, capped: tuple[Fingerprint, ...], notice: Owed | None) -> None:
        self.tool = tool
        self.capped = capped  # its capped fingerprints, when the failure track is on
        self.notice = notice


class Failures(Generic[Owed]):
    """One agent's failure streaks and the allowed calls whose results it awaits."""

    __slots__ = ("running", "streaks")

    def __init__(self) -> None:
        self.streaks = Streaks()
        self.running: dict[str, Running[Owed]] = {}

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
        notice: Owed | None,
        config: BreakerConfig,
    ) -> None:
        """Remember what the result of an allowed call is needed for (nothing, by default)."""
        capped: tuple[Fingerprint, ...] = ()
        if config.tracks_failures:
            capped = tuple(fp for fp in fingerprints if cap_of(fp, config) is not None)
        if not capped and notice is None:
            return
        self.running[call.call_id] = Running(call.name, capped, notice)
        if len(self.running) > config.window:  # a result that never came
            del self.running[next(iter(self.running))]

    def returned(self, call_id: str) -> Running[Owed] | None:
        """The result of ``call_id`` arrived: what it is judged by, if it was awaited."""
        return self.running.pop(call_id, None)

    def failed(
        self,
        call_id: str,
        capped: tuple[Fingerprint, ...],
        failure: Failure,
        quote: str,
        answer: Answer | None = None,
    ) -> dict[str, int]:
        """A call failed: the streaks of its capped fingerprints grow (``quote``: its result as a
        denial quotes it; ``answer``: its answer, whose content is read only if the same call
        failed before); each key's streak now."""
        call = next((fp.key for fp in capped if fp.kind == "exact"), "")
        return self.streaks.fail((fp.key for fp in capped), failure, quote, call_id, answer, call)

    def succeeded(self, capped: tuple[Fingerprint, ...]) -> None:
        """A call succeeded: the streaks of its capped fingerprints end (most calls have none)."""
        if self.streaks:
            self.streaks.end(fp.key for fp in capped)

    def left(self, digests: bytes, window: Window) -> None:
        """An entry left the window (its key ``digests``): streaks whose key it took out end."""
        if self.streaks:
            gone = split(digests)
            self.streaks.end([key for key in self.streaks if digest(key) in gone and not window.count(key)])

    def clear(self) -> None:
        self.streaks.clear()
        self.running.clear()
