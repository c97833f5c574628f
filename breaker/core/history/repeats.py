"""The repetition track of one agent: its window, the calls a cap stops, and the peak per entry.

A call is stopped when one of its capped fingerprints already appears ``cap - 1`` times or more
in the window (the seed README's counting rules). Each window entry also keeps its *peak*: the
highest count a capped key of its call reached when it was committed. No capped key in the
window counts more than the highest peak, which is what ``passes`` reads.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import dataclass

from breaker.core.config import BreakerConfig
from breaker.core.history.caps import read_key
from breaker.core.history.window import Window, digest
from breaker.core.reading import Fingerprint


@dataclass(frozen=True, slots=True)
class Hit:
    """One fingerprint at its cap: ``count`` occurrences including this call (== cap for a whole cap)."""

    fingerprint: Fingerprint
    count: int
    cap: float


class Repeats:
    """One agent's window of committed entries and each entry's peak, oldest first."""

    __slots__ = ("groups", "peaks", "window")

    def __init__(self, size: int) -> None:
        self.window = Window(size)
        self.peaks = array("I")
        self.groups = array("q")

    def hits(self, fingerprints: Iterable[Fingerprint], config: BreakerConfig) -> tuple[tuple[Hit, ...], int]:
        """The capped fingerprints this call would take to their cap (prior count >= cap - 1),
        and the highest count any of its capped fingerprints would reach (its ``peak``)."""
        hits: list[Hit] = []
        peak = 0
        # Window.count inlined: the window's digests, each key's counted in C.
        digests = self.window.digests
        limits, one_by_one = config.limits, config.capped_one_by_one
        for fp in fingerprints:
            key = fp.key
            # caps.cap_of inlined: this runs for every fingerprint of every call.
            if key in limits:
                cap = limits[key]
            elif fp.kind in one_by_one and (read := read_key(fp)) in limits:
                cap = limits[read]
            else:
                cap = limits.get(fp.kind)
            if cap is None:
                continue
            prior = digests.count(digest(key)) if digests else 0
            if prior >= peak:
                peak = prior + 1
            if prior >= cap - 1:
                hits.append(Hit(fp, prior + 1, cap))
        return tuple(hits), peak

    def commit(self, call_id: str, keys: Iterable[str], peak: int, group: int) -> tuple[str, bytes] | None:
        """Commit one entry; the call id and key digests of the entry it pushed out, if any."""
        evicted = self.window.append(call_id, keys)
        self.peaks.append(peak)
        self.groups.append(group)
        if evicted is not None:
            self.peaks.pop(0)
            self.groups.pop(0)
        return evicted

    def highest_peak(self) -> int:
        return max(self.peaks) if self.peaks else 0  # no keyword: ``default=`` costs max a parse

    def clear(self) -> None:
        self.window.clear()
        del self.peaks[:]
        del self.groups[:]
