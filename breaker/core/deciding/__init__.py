"""Stage 5, deciding: one call taken through the stages in order, and what deciding it commits.

``rules`` reads the call's fingerprints, looks up what the agent's history holds, judges, words
the verdict (a ``plan``), and applies it to the state (the commit); ``agent`` is one agent's
state, the parts of ``history`` and what a change to one means for the others; ``plans`` are the
verdicts kept between ``precheck`` and ``commit``; ``passes``, how many more calls of an agent
surely go through unasked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from breaker.reexports import homes_of, loader

if TYPE_CHECKING:  # the names, for type checkers; at run time __getattr__ imports each on first use
    from breaker.core.deciding import passes as passes
    from breaker.core.deciding import rules as rules
    from breaker.core.deciding.agent import AgentState as AgentState
    from breaker.core.deciding.passes import UNLIMITED_PASSES as UNLIMITED_PASSES

#: Each name re-exported, by its home module (the stage's submodules are imported as usual).
_HOMES = homes_of(
    {
        "breaker.core.deciding.agent": ("AgentState",),
        "breaker.core.deciding.passes": ("UNLIMITED_PASSES",),
    }
)

__all__ = sorted([*_HOMES, "passes", "rules"])
__getattr__ = loader(globals(), _HOMES)
