"""The verdict types: what the core answers for a call (``Allow``, ``Deny``, ``Ask``), what
they name (``Hit``, ``FailureHit``, ``Stall``) and the advice an allowed call carries (``Notice``).

Plain frozen records with one home, so that ``decision`` (which makes them) and ``messages``
(which words them) both import them and neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass

from breaker.core.fingerprints import Fingerprint
from breaker.core.progress import Stall
from breaker.core.streaks import Streak

__all__ = ["Allow", "Ask", "Deny", "FailureHit", "Hit", "Notice", "Stall"]


@dataclass(frozen=True, slots=True)
class Notice:
    """Advice appended to an allowed call's result: ``text`` for the model, ``summary`` for a log."""

    text: str
    summary: str


@dataclass(frozen=True, slots=True)
class Hit:
    """One fingerprint at its cap: ``count`` occurrences including this call (== cap for a whole cap)."""

    fingerprint: Fingerprint
    count: int
    cap: float


@dataclass(frozen=True, slots=True)
class FailureHit:
    """One fingerprint whose calls failed ``streak.count`` times in a row, at or past ``limit``."""

    fingerprint: Fingerprint
    streak: Streak
    limit: float


@dataclass(frozen=True, slots=True)
class Allow:
    """Run the call; ``notice`` is the advice owed to it (also returned with its result)."""

    notice: Notice | None = None


@dataclass(frozen=True, slots=True)
class Deny:
    """Do not run the call; ``message`` (starting ``REPEAT_TOOL_BLOCKED:``) is its result."""

    message: str
    hits: tuple[Hit, ...]
    failures: tuple[FailureHit, ...] = ()
    stall: Stall | None = None


@dataclass(frozen=True, slots=True)
class Ask:
    """Ask the operator before the guard runs; ``reason`` says what repeated or kept failing."""

    reason: str
    hits: tuple[Hit, ...]
    failures: tuple[FailureHit, ...] = ()
