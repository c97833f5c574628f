"""One agent's state: the parts each rule reads, and what changing them means for the others.

Every part holds one concept (``repeats``, ``results``, ``asks``, ``failures``, the run of
what results say about progress, the workspace); this is where they meet: a committed entry pushing an old
one out of the window takes its quotable result and its streaks along, a human turn resets the
turn's parts, and any change to what a verdict reads drops the plans kept ahead.
"""

from __future__ import annotations

from collections.abc import Iterable

from breaker.core.config import BreakerConfig
from breaker.core.deciding.plans import KeptPlans
from breaker.core.history import (
    Analysis,
    Asks,
    Evidence,
    Failures,
    Repeats,
    Results,
    Spellings,
    Window,
    Workspace,
)
from breaker.core.judging import Notice
from breaker.core.reading import Fingerprint, ToolCall
from breaker.core.wording import messages


class AgentState:
    """One agent's parts."""

    __slots__ = (
        "asks",
        "failures",
        "kept",
        "preflighted",
        "progress",
        "quotes",
        "repeats",
        "results",
        "spellings",
        "window",
        "workspace",
    )

    def __init__(self, window: int) -> None:
        self.repeats = Repeats(window)
        self.window: Window = self.repeats.window  # the one window its repeats count (never replaced)
        self.results = Results(messages.quotable)
        self.spellings = Spellings()  # how each entry's call was spelled, in step with the window
        self.asks = Asks()
        self.failures: Failures[Notice] = Failures()
        # What results say about progress since the last change (sameResultLimit only, else None).
        self.progress: Evidence | None = None
        # What the agent changed (identity: state-aware only, else None); a human turn keeps it.
        self.workspace: Workspace | None = None
        # The last preflighted call and its fingerprints, for the guard of that call, which
        # follows it in dsh's pipeline: a call is fingerprinted once, not twice.
        self.preflighted: tuple[ToolCall, ToolCall, tuple[Fingerprint, ...]] | None = None
        self.kept = KeptPlans()
        self.quotes = messages.InlineQuotes()  # names and keys its denials quote

    def changed(self) -> None:
        """Something a verdict reads changed: plans made ahead no longer hold (``KeptPlans.drop``,
        inlined: this runs two or three times a call)."""
        self.kept.plans = None

    def raw_fingerprints(
        self, call: ToolCall, analysis: Analysis, keep: bool
    ) -> tuple[ToolCall, tuple[Fingerprint, ...]]:
        """The call as it resolves (``Analysis.read``) and its fingerprints, reusing the
        preflight's for the same call (equal name, arguments and call id); ``keep`` holds these
        for the guard that follows."""
        kept, self.preflighted = self.preflighted, None
        if kept is not None and kept[0] == call:
            return kept[1], kept[2]
        resolved, fingerprints = analysis.read(call)
        if keep:
            self.preflighted = (call, resolved, fingerprints)
        return resolved, fingerprints

    def counted(
        self, call: ToolCall, raw: tuple[Fingerprint, ...], config: BreakerConfig
    ) -> tuple[Fingerprint, ...]:
        """The fingerprints that count: keyed by the workspace (``identity: state-aware``); local
        targets drop out under ``allow`` or an approval, and measures the operator exempted drop
        out for the rest of the turn."""
        fingerprints = raw
        if config.identity == "state-aware":
            if self.workspace is None:
                self.workspace = Workspace()
            fingerprints = self.workspace.identify(call, fingerprints)
        if config.localHosts == "allow" or self.asks.approved:
            fingerprints = tuple(fp for fp in fingerprints if not fp.local)
        exempt = self.asks.exempt
        if exempt:
            fingerprints = tuple(fp for fp in fingerprints if fp.key not in exempt)
        return fingerprints

    def commit(self, call_id: str, keys: Iterable[str], peak: int, spelling: bytes, group: int) -> None:
        """One window entry (its call spelled ``spelling``, of ``group``); what its call left
        behind leaves with the entry it pushed out."""
        evicted = self.repeats.commit(call_id, keys, peak, group)
        self.spellings.append(spelling)
        if evicted is None:
            return
        self.spellings.drop_oldest()
        evicted_id, evicted_digests = evicted
        if not self.window.holds_call(evicted_id):
            self.results.left(evicted_id)
        self.failures.left(evicted_digests, self.window)

    def new_turn(self) -> None:
        """A real user turn: a fresh window, no results to quote, no streaks, a fresh ask state
        (the workspace stays: a human turn undoes no change)."""
        self.changed()
        self.repeats.clear()
        self.spellings.clear()
        self.results.clear()
        self.asks = Asks()
        self.failures.clear()
        self.progress = None
