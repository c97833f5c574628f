"""Stage 2, what an agent's history holds: everything remembered between one call and the next.

The agents held (``agents``) and each agent's parts: its sliding window and the calls a cap stops
(``window``, ``repeats``), the results a denial may quote (``results``), its failure streaks and
the results awaited (``streaks``, ``failures``), what results say about progress (``progress``),
the workspace its changes made (``identity``), the turn's asks (``asks``), how each call in
its window was spelled (``spellings``); the fingerprints of
recent calls (``analysis``) and a call's stand-in for the shim's journal (``standin``). Each part
answers what it holds (a hit, a failure streak, a stall); it judges no call and words nothing.
"""

from __future__ import annotations

from breaker.core.history.agents import AgentId, Agents
from breaker.core.history.analysis import (
    ANALYSED_ARGS,
    ANALYSED_CALLS,
    ANALYSED_CHARS,
    Analysis,
    Fingerprinter,
)
from breaker.core.history.asked import CALL_KINDS, Asked, call_keys, failed_keys, target_of
from breaker.core.history.asks import Asks
from breaker.core.history.failures import FailureHit, Failures
from breaker.core.history.identity import Effect, Workspace, text_argument
from breaker.core.history.progress import Evidence, Stall, fresh_evidence_passes
from breaker.core.history.repeats import Hit, Repeats
from breaker.core.history.results import Results
from breaker.core.history.sooner import SOONEST
from breaker.core.history.spellings import Spellings, spelling
from breaker.core.history.window import Window

__all__ = [
    "ANALYSED_ARGS",
    "ANALYSED_CALLS",
    "ANALYSED_CHARS",
    "CALL_KINDS",
    "SOONEST",
    "AgentId",
    "Agents",
    "Analysis",
    "Asked",
    "Asks",
    "Effect",
    "Evidence",
    "FailureHit",
    "Failures",
    "Fingerprinter",
    "Hit",
    "Repeats",
    "Results",
    "Spellings",
    "Stall",
    "Window",
    "Workspace",
    "call_keys",
    "failed_keys",
    "fresh_evidence_passes",
    "spelling",
    "target_of",
    "text_argument",
]
