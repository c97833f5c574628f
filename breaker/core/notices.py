"""Which advisory an allowed call earns below the caps (``warnAt``, ``summarizeAt``), and which
fingerprint a notice names when several cross at once (the failure notice names by that order too).

The notice is decided when the call is allowed (only then is its count known) and handed out
with its result (only then can dsh append it). ``messages`` words it.
"""

from __future__ import annotations

from collections.abc import Iterable

from breaker.core import messages
from breaker.core.config import BreakerConfig
from breaker.core.fingerprints import Fingerprint
from breaker.core.verdicts import Notice
from breaker.core.window import Window

#: Which fingerprint a notice names when several cross at once: the most actionable first. A
#: target tells the model what to change; ``exact:`` only quotes the call back (unknown kinds last).
NAMING_ORDER = ("host", "net", "sink", "site", "family", "verb", "cmd", "exact")


def naming_rank(fp: Fingerprint) -> int:
    return NAMING_ORDER.index(fp.kind) if fp.kind in NAMING_ORDER else len(NAMING_ORDER)


def stage_notice(window: Window, fingerprints: Iterable[Fingerprint], config: BreakerConfig) -> Notice | None:
    """The advisory an allowed call earns: a capped fingerprint at exactly ``summarizeAt`` (the
    stronger) or ``warnAt``, the most actionable one named when several cross at once."""
    warn_at, summarize_at = config.warnAt, config.summarizeAt
    if warn_at is None and summarize_at is None:
        return None
    best: tuple[int, int, Fingerprint, int, float] | None = None  # (stage, -rank, fp, count, cap)
    for fp in fingerprints:
        cap = config.limit_for(fp.kind, fp.key)
        if cap is None:
            continue
        count = window.count(fp.key) + 1
        stage = 2 if count == summarize_at else 1 if count == warn_at else 0
        if stage and (best is None or (stage, -naming_rank(fp)) > best[:2]):
            best = (stage, -naming_rank(fp), fp, count, cap)
    if best is None:
        return None
    stage, _, fp, count, cap = best
    notice = messages.summarize_notice if stage == 2 else messages.warn_notice
    return notice(fp.key, count, cap, config)
