"""What one call key last returned, as the evidence of results keeps it (``progress``), and what
``passes`` reads of it (``peaked`` tallies the measures)."""

from __future__ import annotations

from typing import NamedTuple

from breaker.core.history.asked import FAILED_KEYS
from breaker.core.reading.volatile import Answer


class Seen(NamedTuple):
    """What one call key last returned: the result, how many times in a row (each within the
    window of the one before), how many sooner than the limit it stops (and at worst could), and
    the call that returned it (its id to quote, its serial). A named tuple: one is made for every
    key of every result (a frozen dataclass of 14 fields costs several times as much to make)."""

    result: bytes
    times: int
    sooner: int
    worst: int
    quote: str
    serial: int
    round: int  # the model turn of the call that returned it (0: turns not told)
    apart: bool  # other calls ran between two of its runs (a rerun, not a poll)
    batched: bool  # one of its runs was sent in a turn together with other calls
    call: frozenset[str]  # the keys of the call that returned it
    content: bytes = b""  # its answer without the volatile parts (``volatile.content_of``)
    moved: bool = False  # its answer changed in content between two of its runs in the window (a poll)
    polled: bool = False  # its answer changed at all between two of its runs (a clock, if nothing else)
    context: bytes = b""  # the last possible change when it returned (``Evidence.context``)
    kept: Answer | None = None  # a first answer that worked, its content not read yet


def failed_key(key: str) -> bool:
    """A key of what a call asks that counts only when it fails (``asked.failed_keys``)."""
    return key.startswith(FAILED_KEYS)


def measures(seen: Seen) -> tuple[int, int]:
    """What ``passes`` reads of a key's record: how close it could come to its limit (times seen
    plus the most results sooner it could be stopped), and how close it is (plus how many sooner
    it is stopped now)."""
    return seen.times + seen.worst, seen.times + seen.sooner
