"""One agent's failure streaks: how many times in a row the calls carrying a fingerprint failed.

A streak grows with each failed call that carries its fingerprint and ends at the first call
carrying it that worked. A call that does not carry it leaves it alone: reading the error log
between two failing builds is neither progress on the build nor another failure of it. The
owner drops a streak once its fingerprint has left the window, so the memory held is bounded
by the window.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from breaker.core.reading import Failure
from breaker.core.reading.volatile import Answer


@dataclass(frozen=True, slots=True)
class Streak:
    """``count`` failures in a row; the latest one, what it returned, and when (``serial``)."""

    count: int
    failure: Failure
    quote: str
    serial: int
    #: The call whose failure began the streak, and when (``serial``): the agent's calls from that
    #: one on rebuild it, which the shim's journal keeps for a replacement worker.
    first: str = ""
    began: int = 0
    #: What the latest failure answered (its content read only when the same call fails again) and
    #: the call that failed (its ``exact:`` key): the same call failing with news starts a new streak.
    answer: Answer | None = None
    call: str = ""


class Streaks:
    """Failure streaks by fingerprint key."""

    __slots__ = ("_serial", "_streaks")

    def __init__(self) -> None:
        self._streaks: dict[str, Streak] = {}
        self._serial = 0

    def __len__(self) -> int:
        return len(self._streaks)

    def __iter__(self) -> Iterator[str]:
        """The keys with a streak."""
        return iter(self._streaks)

    def get(self, key: str) -> Streak | None:
        return self._streaks.get(key)

    def longest(self) -> int:
        """The count of the longest streak (0: none)."""
        if not self._streaks:
            return 0
        return max(streak.count for streak in self._streaks.values())

    def fail(
        self,
        keys: Iterable[str],
        failure: Failure,
        quote: str,
        call_id: str = "",
        answer: Answer | None = None,
        call: str = "",
    ) -> dict[str, int]:
        """One failed call (``call_id``) carrying ``keys``: each streak grows by one, a key carried
        twice too (``fingerprints.distinct``), unless the same ``call`` failed before saying
        something else (its ``answer``, in content): that failure is news, and starts a streak of one
        (a bounded wait timing out as what it waits for advances). Returns the new counts."""
        self._serial += 1
        serial = self._serial
        kept = None if answer is None else answer.keep()
        counts: dict[str, int] = {}
        for key in dict.fromkeys(keys):
            previous = self._streaks.get(key)
            if previous is None or _news(previous, answer, call):
                self._streaks[key] = Streak(1, failure, quote, serial, call_id, serial, kept, call)
            else:
                count, first, began = previous.count + 1, previous.first, previous.began
                self._streaks[key] = Streak(count, failure, quote, serial, first, began, kept, call)
            counts[key] = self._streaks[key].count
        return counts

    def first_call(self) -> str | None:
        """The call whose failure began the oldest streak: the agent's calls from it on rebuild
        every streak (None: no streak)."""
        oldest = min(self._streaks.values(), key=lambda streak: streak.began, default=None)
        return None if oldest is None else oldest.first

    def end(self, keys: Iterable[str]) -> None:
        """These streaks end: a call carrying them worked, or they left the window."""
        for key in keys:
            self._streaks.pop(key, None)

    def clear(self) -> None:
        self._streaks.clear()


def _news(previous: Streak, answer: Answer | None, call: str) -> bool:
    """Whether the same call failed before, and now answers something else in content."""
    if not call or previous.call != call or answer is None or previous.answer is None:
        return False
    return previous.answer.content() != answer.content()
