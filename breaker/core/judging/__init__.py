"""Stage 3, judging: the verdict a call gets and the judgements that go into it.

The verdict types (``verdicts``: ``Allow``, ``Deny``, ``Ask``, the ``Notice`` an allowed call
carries, what a verdict names: ``Hit``, ``FailureHit``, ``Stall``, and each limit a stopped call
reached, ``Reached``), which calls have a settled answer (``settled``), and which advisory an
allowed call earns below its cap, named by the most actionable fingerprint (``notices``).
Nothing here is worded: ``wording`` does that.
"""

from __future__ import annotations

from breaker.core.judging import notices
from breaker.core.judging.notices import Stage
from breaker.core.judging.settled import is_settled
from breaker.core.judging.verdicts import Allow, Ask, Deny, FailureHit, Hit, Notice, Reached, Stall

__all__ = [
    "Allow",
    "Ask",
    "Deny",
    "FailureHit",
    "Hit",
    "Notice",
    "Reached",
    "Stage",
    "Stall",
    "is_settled",
    "notices",
]
