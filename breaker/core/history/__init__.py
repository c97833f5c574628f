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

from typing import TYPE_CHECKING

from breaker.reexports import homes_of, loader

if TYPE_CHECKING:  # the names, for type checkers; at run time __getattr__ imports each on first use
    from breaker.core.history.agents import AgentId as AgentId
    from breaker.core.history.agents import Agents as Agents
    from breaker.core.history.analysis import ANALYSED_ARGS as ANALYSED_ARGS
    from breaker.core.history.analysis import ANALYSED_CALLS as ANALYSED_CALLS
    from breaker.core.history.analysis import ANALYSED_CHARS as ANALYSED_CHARS
    from breaker.core.history.analysis import Analysis as Analysis
    from breaker.core.history.analysis import Fingerprinter as Fingerprinter
    from breaker.core.history.asked import CALL_KINDS as CALL_KINDS
    from breaker.core.history.asked import Asked as Asked
    from breaker.core.history.asked import call_keys as call_keys
    from breaker.core.history.asked import failed_keys as failed_keys
    from breaker.core.history.asked import target_of as target_of
    from breaker.core.history.asks import Asks as Asks
    from breaker.core.history.caps import cap_of as cap_of
    from breaker.core.history.failures import FailureHit as FailureHit
    from breaker.core.history.failures import Failures as Failures
    from breaker.core.history.identity import Effect as Effect
    from breaker.core.history.identity import Workspace as Workspace
    from breaker.core.history.identity import text_argument as text_argument
    from breaker.core.history.progress import Evidence as Evidence
    from breaker.core.history.progress import Stall as Stall
    from breaker.core.history.progress import fresh_evidence_passes as fresh_evidence_passes
    from breaker.core.history.repeats import Hit as Hit
    from breaker.core.history.repeats import Repeats as Repeats
    from breaker.core.history.results import Results as Results
    from breaker.core.history.sooner import SOONEST as SOONEST
    from breaker.core.history.spellings import Spellings as Spellings
    from breaker.core.history.spellings import spelling as spelling
    from breaker.core.history.window import Window as Window

#: Each name re-exported, by its home module (the stage's submodules are imported as usual).
_HOMES = homes_of(
    {
        "breaker.core.history.agents": (
            "AgentId",
            "Agents",
        ),
        "breaker.core.history.analysis": (
            "ANALYSED_ARGS",
            "ANALYSED_CALLS",
            "ANALYSED_CHARS",
            "Analysis",
            "Fingerprinter",
        ),
        "breaker.core.history.asked": (
            "CALL_KINDS",
            "Asked",
            "call_keys",
            "failed_keys",
            "target_of",
        ),
        "breaker.core.history.asks": ("Asks",),
        "breaker.core.history.caps": ("cap_of",),
        "breaker.core.history.failures": (
            "FailureHit",
            "Failures",
        ),
        "breaker.core.history.identity": (
            "Effect",
            "Workspace",
            "text_argument",
        ),
        "breaker.core.history.progress": (
            "Evidence",
            "Stall",
            "fresh_evidence_passes",
        ),
        "breaker.core.history.repeats": (
            "Hit",
            "Repeats",
        ),
        "breaker.core.history.results": ("Results",),
        "breaker.core.history.sooner": ("SOONEST",),
        "breaker.core.history.spellings": (
            "Spellings",
            "spelling",
        ),
        "breaker.core.history.window": ("Window",),
    }
)

__all__ = sorted(_HOMES)
__getattr__ = loader(globals(), _HOMES)
