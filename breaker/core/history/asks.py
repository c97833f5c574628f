"""What happened about asking the operator since the last human message (one agent's turn).

Two kinds of ask (docs/escalation.md, the seed README's "Local addresses"):

* the local ask (``localHosts: ask``): at most one per turn, about a call whose only hits are
  local targets. Its states and the transitions between them are the table ``LOCAL_ASK``: the
  asked call reaching the guard approves it (local targets stop counting for the turn), its
  result arriving without it is a refusal (local repeats are denied, nothing more is asked).
* the limit ask (``onLimit: ask``): once per measure per turn; reaching the guard exempts the
  measures it named for the rest of the turn, a refusal needs nothing more (they are never asked
  about again this turn).

A human message starts a fresh ``Asks``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class LocalAsk(Enum):
    """Where the turn's one local ask stands."""

    OPEN = "not asked this turn"
    ASKED = "asked, no answer yet"
    APPROVED = "the asked call reached the guard"
    REFUSED = "the asked call ended without reaching the guard"


class AskEvent(Enum):
    ASK = "the preflight asks"
    REACHED_GUARD = "the asked call reached the guard"
    ENDED = "the asked call's result arrived, and it never reached the guard"


#: Every transition of the local ask; any other (state, event) never happens.
LOCAL_ASK: dict[tuple[LocalAsk, AskEvent], LocalAsk] = {
    (LocalAsk.OPEN, AskEvent.ASK): LocalAsk.ASKED,
    (LocalAsk.ASKED, AskEvent.REACHED_GUARD): LocalAsk.APPROVED,
    (LocalAsk.ASKED, AskEvent.ENDED): LocalAsk.REFUSED,
}

#: What ``pending`` holds for the local ask (a limit ask holds the measures it names).
_LOCAL = frozenset[str]()


@dataclass(slots=True)
class Asks:
    """One turn's asks: the local ask's state, the asks not answered yet, the measures asked about
    and those the operator exempted."""

    local: LocalAsk = LocalAsk.OPEN
    # Asks not answered yet: call id -> the measures a limit ask names (empty: the local ask).
    pending: dict[str, frozenset[str]] = field(default_factory=dict)
    # Every measure named in a limit ask this turn (never asked twice), and those approved. Frozen
    # and replaced when they grow: most turns never ask, and the shared empty set costs nothing.
    asked_measures: frozenset[str] = frozenset()
    exempt: frozenset[str] = frozenset()

    @property
    def local_spent(self) -> bool:
        """The turn's one local ask was made (answered or not)."""
        return self.local is not LocalAsk.OPEN

    @property
    def approved(self) -> bool:
        """The local ask was approved: local targets no longer count this turn."""
        return self.local is LocalAsk.APPROVED

    def ask_local(self, call_id: str) -> None:
        self._local(AskEvent.ASK)
        self.pending[call_id] = _LOCAL

    def ask_measures(self, call_id: str, measures: frozenset[str]) -> None:
        self.asked_measures |= measures
        self.pending[call_id] = measures

    def reached_guard(self, call_id: str) -> bool:
        """``call_id`` reached the guard: an ask pending for it was approved. Whether one was."""
        measures = self.pending.pop(call_id, None)
        if measures is None:
            return False
        if measures:
            self.exempt |= measures
        else:
            self._local(AskEvent.REACHED_GUARD)
        return True

    def ended(self, call_id: str) -> frozenset[str] | None:
        """The result of ``call_id`` arrived: an ask still pending for it was declined (its result
        is the refusal, and says nothing else). The ask it was: the measures a limit ask named,
        empty for the local ask, None when none was pending."""
        declined = self.pending.pop(call_id, None)
        if declined == _LOCAL:
            self._local(AskEvent.ENDED)
        return declined

    def _local(self, event: AskEvent) -> None:
        self.local = LOCAL_ASK[self.local, event]
