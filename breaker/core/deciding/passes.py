"""Passes: how many more calls of an agent, whatever they are, surely go through unasked.

The guard allows them and the preflight never asks about them, whatever results or human turns
come between. The shim lets that many calls through without waiting for an answer
(node-shim/call/ahead.js) and sends them after; they are decided in order all the same (a notice they
earn still comes with their result). Why it holds: each rule stops a call once a count reaches
its limit, and no call adds more than one to any count (a key a call carries twice counts once,
``fingerprints.distinct``): to a capped key in the window (none counts more than the agent's
highest peak), to a failure streak, or to the evidence of results (``progress.Evidence.passes``:
a result still awaited counts as if it added one). Notices stop nothing, so they leave passes alone.
"""

from __future__ import annotations

import math

from breaker.core.config import BreakerConfig
from breaker.core.deciding.agent import AgentState
from breaker.core.history import fresh_evidence_passes

#: ``passes`` when no fingerprint is capped at all: nothing can ever be denied.
UNLIMITED_PASSES = 1 << 30


def tightest_cap(config: BreakerConfig) -> float | None:
    """The lowest cap (None: nothing is capped)."""
    return min((cap for cap in config.limits.values() if cap is not None), default=None)


def passes(state: AgentState, config: BreakerConfig, tightest: float | None) -> int:
    """The least distance from ``state`` to any limit (``tightest``: ``tightest_cap(config)``)."""
    left: float = UNLIMITED_PASSES
    if tightest is not None:
        left = tightest - 1 - state.repeats.highest_peak()
    if config.failLimit is not None:
        left = min(left, config.failLimit - state.failures.longest())
    same_limit, evidence = config.sameResultLimit, state.progress
    if same_limit is not None:
        room = fresh_evidence_passes(same_limit) if evidence is None else evidence.passes(same_limit)
        left = min(left, room)
    return max(0, math.ceil(left))
