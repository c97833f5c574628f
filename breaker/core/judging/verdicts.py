"""The verdict types: what the core answers for a call (``Allow``, ``Deny``, ``Ask``), what
they name (``Hit``, ``FailureHit``, ``Stall``) and the advice an allowed call carries (``Notice``).

Plain frozen records with one home, so that ``deciding.rules`` (which makes them) and
``wording.messages`` (which words them) both import them and neither imports the other. What a
verdict names is found by a part of the history, and defined there (``repeats.Hit``,
``failures.FailureHit``, ``progress.Stall``): re-exported here as the verdict's vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

from breaker.core.history import FailureHit, Hit, Stall

__all__ = ["Allow", "Ask", "Deny", "FailureHit", "Hit", "Notice", "Stall"]


@dataclass(frozen=True, slots=True)
class Notice:
    """Advice appended to an allowed call's result: ``text`` for the model, ``summary`` for a log."""

    text: str
    summary: str


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
