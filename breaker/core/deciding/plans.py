"""A call's plan: the verdict it gets and what it commits, made from the state before it is applied.

``Breaker.decide`` makes a plan and applies it at once. ``Breaker.precheck`` makes it ahead of
the guard and keeps it; ``Breaker.commit`` applies the kept plan. Every change to what a
verdict reads (a commit, a result, a human turn, an ask, an approval) drops the agent's kept
plans, so a kept plan applied is exactly what ``decide`` would have done then.
"""

from __future__ import annotations

from typing import NamedTuple

from breaker.core.history import Asked, Effect
from breaker.core.judging import Allow, Deny
from breaker.core.reading import Fingerprint, ToolCall


class Plan(NamedTuple):
    """What deciding a call does to the state: its verdict and the keys it commits (a tuple: made
    for every call, and five times quicker to make than a frozen dataclass of as many fields)."""

    call: ToolCall
    verdict: Allow | Deny
    fingerprints: tuple[Fingerprint, ...]  # those that count; an allowed call commits them all
    raw: tuple[Fingerprint, ...]  # before the workspace rewrote them (identity: state-aware)
    commits: tuple[str, ...]  # the keys a denial commits (what stopped it)
    peak: int  # the highest count a capped key of the call reaches once committed (0: none capped)
    spelling: bytes  # how the call was spelled (``history.spellings``), kept with its entry
    asked: Asked | None = None  # what it asks for, for the evidence of results (sameResultLimit only)
    effect: Effect | None = None  # what it changes when it works (identity: state-aware only)


class KeptPlans:
    """Call id -> the plan its precheck made since the agent's last change (None: none kept)."""

    __slots__ = ("plans",)

    def __init__(self) -> None:
        self.plans: dict[str, Plan] | None = None

    def keep(self, plan: Plan, bound: int) -> None:
        """Keep ``plan`` for its call id; past ``bound`` plans, the oldest (whose guard never
        came) goes."""
        if self.plans is None:
            self.plans = {}
        elif len(self.plans) >= bound:
            del self.plans[next(iter(self.plans))]
        self.plans[plan.call.call_id] = plan

    def take(self, call_id: str) -> Plan | None:
        return self.plans.pop(call_id, None) if self.plans else None

    def drop(self) -> None:
        self.plans = None
