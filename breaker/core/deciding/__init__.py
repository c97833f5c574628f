"""Stage 5, deciding: one call taken through the stages in order, and what deciding it commits.

``rules`` reads the call's fingerprints, looks up what the agent's history holds, judges, words
the verdict (a ``plan``), and applies it to the state (the commit); ``agent`` is one agent's
state, the parts of ``history`` and what a change to one means for the others; ``plans`` are the
verdicts kept between ``precheck`` and ``commit``; ``passes``, how many more calls of an agent
surely go through unasked.
"""

from __future__ import annotations

from breaker.core.deciding import passes, rules
from breaker.core.deciding.agent import AgentState
from breaker.core.deciding.passes import UNLIMITED_PASSES

__all__ = ["UNLIMITED_PASSES", "AgentState", "passes", "rules"]
