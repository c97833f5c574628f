"""Which advisory an allowed call earns below the caps (``warnAt``, ``summarizeAt``), and which
fingerprint a notice names when several cross at once (the failure notice names by that order too).

The notice is decided when the call is allowed (only then is its count known) and handed out
with its result (only then can dsh append it). ``wording.messages`` words it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from breaker.core.config import BreakerConfig
from breaker.core.history import Window, cap_of
from breaker.core.reading import Fingerprint

#: Which fingerprint a notice names when several cross at once: the most actionable first. A
#: target tells the model what to change; ``exact:`` only quotes the call back (unknown kinds last).
NAMING_ORDER = ("host", "net", "sink", "site", "family", "verb", "cmd", "exact")


class Stage(NamedTuple):
    """The advisory a call earns: ``summarize`` (the stronger, at ``summarizeAt``) or a warning (at
    ``warnAt``), for the fingerprint ``key`` at ``times`` of its ``cap``."""

    summarize: bool
    key: str
    times: int
    cap: float


def naming_rank(fp: Fingerprint) -> int:
    return NAMING_ORDER.index(fp.kind) if fp.kind in NAMING_ORDER else len(NAMING_ORDER)


def stage(
    window: Window, fingerprints: Iterable[Fingerprint], config: BreakerConfig, peak: int | None = None
) -> Stage | None:
    """The advisory an allowed call earns: a capped fingerprint at exactly ``summarizeAt`` (the
    stronger) or ``warnAt``, the most actionable one named when several cross at once. ``peak``:
    the highest count a capped fingerprint of the call reaches (``Repeats.hits``), when known: none
    reaches either stage below the lower one, and most calls are not looked at further."""
    warn_at, summarize_at = config.warnAt, config.summarizeAt
    if warn_at is None:
        if summarize_at is None:
            return None
        lowest = summarize_at
    else:
        lowest = warn_at if summarize_at is None or warn_at <= summarize_at else summarize_at
    if peak is not None and peak < lowest:
        return None
    best: tuple[int, int, Fingerprint, int, float] | None = None  # (stage, -rank, fp, count, cap)
    for fp in fingerprints:
        cap = cap_of(fp, config)
        if cap is None:
            continue
        count = window.count(fp.key) + 1
        level = 2 if count == summarize_at else 1 if count == warn_at else 0
        if level and (best is None or (level, -naming_rank(fp)) > best[:2]):
            best = (level, -naming_rank(fp), fp, count, cap)
    if best is None:
        return None
    level, _, fp, count, cap = best
    return Stage(level == 2, fp.key, count, cap)
