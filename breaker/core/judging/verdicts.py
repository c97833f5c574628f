"""The verdict types: what the core answers for a call (``Allow``, ``Deny``, ``Ask``), what
they name (``Hit``, ``FailureHit``, ``Stall``), the advice an allowed call carries (``Notice``),
and each limit a stopped call reached, the one way a report shows what stopped it (``Reached``).

Plain frozen records with one home, so that ``deciding.rules`` (which makes them) and
``wording.messages`` (which words them) both import them and neither imports the other. What a
verdict names is found by a part of the history, and defined there (``repeats.Hit``,
``failures.FailureHit``, ``progress.Stall``): re-exported here as the verdict's vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from breaker.reexports import loader

if TYPE_CHECKING:  # the vocabulary, for type checkers; at run time __getattr__ imports it when read
    from breaker.core.history import FailureHit as FailureHit
    from breaker.core.history import Hit as Hit
    from breaker.core.history import Stall as Stall

#: The history's names re-exported, imported when first read: a verdict's annotations name them,
#: and importing the verdicts (as the worker's start does) need not import the history's parts.
__getattr__ = loader(globals(), {name: "breaker.core.history" for name in ("FailureHit", "Hit", "Stall")})

__all__ = ["Allow", "Ask", "Deny", "FailureHit", "Hit", "Notice", "Reached", "Stall", "limits_reached"]

#: The configuration keys whose limits stop a call, in the order a denial names them.
Rule = Literal["limits", "failLimit", "sameResultLimit"]


@dataclass(frozen=True, slots=True)
class Reached:
    """One limit a stopped call reached: the ``rule`` (the configuration key that set it), what it
    counted (``key``: a fingerprint's key; under ``sameResultLimit`` the stall's rule, ``same``,
    ``failed``, ``cycle`` or ``reworded``), the count that reached it and the limit: a cap's
    count of this call's fingerprint in the window, this call included (5/5); ``failLimit``'s
    failures in a row (3/3); ``sameResultLimit``'s count of its rule (``Stall.reached``).
    ``rtb`` shows an allowed call's window counts against the caps the same way (``limits``)."""

    rule: Rule
    key: str
    count: int
    limit: float

    @property
    def kind(self) -> str:
        """The fingerprint's kind (``cmd``), or the no-progress rule (``same``)."""
        return self.key.partition(":")[0]


def limits_reached(
    hits: tuple[Hit, ...], failures: tuple[FailureHit, ...], stall: Stall | None = None
) -> tuple[Reached, ...]:
    """Every limit a verdict names, in the order its text names them: caps, failures, no progress."""
    found = [Reached("limits", hit.fingerprint.key, hit.count, hit.cap) for hit in hits]
    found.extend(Reached("failLimit", one.fingerprint.key, one.streak.count, one.limit) for one in failures)
    if stall is not None:
        count, limit = stall.reached
        found.append(Reached("sameResultLimit", stall.rule, count, limit))
    return tuple(found)


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

    @property
    def reached(self) -> tuple[Reached, ...]:
        """The limits that stopped the call, each with its own count (``limits_reached``)."""
        return limits_reached(self.hits, self.failures, self.stall)


@dataclass(frozen=True, slots=True)
class Ask:
    """Ask the operator before the guard runs; ``reason`` says what repeated or kept failing."""

    reason: str
    hits: tuple[Hit, ...]
    failures: tuple[FailureHit, ...] = ()

    @property
    def reached(self) -> tuple[Reached, ...]:
        """The limits the call reached, each with its own count (``limits_reached``)."""
        return limits_reached(self.hits, self.failures)
