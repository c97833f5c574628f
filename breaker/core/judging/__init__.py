"""Stage 3, judging: the verdict a call gets and the judgements that go into it.

The verdict types (``verdicts``: ``Allow``, ``Deny``, ``Ask``, the ``Notice`` an allowed call
carries, what a verdict names: ``Hit``, ``FailureHit``, ``Stall``, and each limit a stopped call
reached, ``Reached``), which calls have a settled answer (``settled``), and which advisory an
allowed call earns below its cap, named by the most actionable fingerprint (``notices``).
Nothing here is worded: ``wording`` does that.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from breaker.reexports import homes_of, loader

if TYPE_CHECKING:  # the names, for type checkers; at run time __getattr__ imports each on first use
    from breaker.core.judging import notices as notices
    from breaker.core.judging.notices import Stage as Stage
    from breaker.core.judging.settled import is_settled as is_settled
    from breaker.core.judging.verdicts import Allow as Allow
    from breaker.core.judging.verdicts import Ask as Ask
    from breaker.core.judging.verdicts import Deny as Deny
    from breaker.core.judging.verdicts import FailureHit as FailureHit
    from breaker.core.judging.verdicts import Hit as Hit
    from breaker.core.judging.verdicts import Notice as Notice
    from breaker.core.judging.verdicts import Reached as Reached
    from breaker.core.judging.verdicts import Stall as Stall

#: Each name re-exported, by its home module (the stage's submodules are imported as usual).
_HOMES = homes_of(
    {
        "breaker.core.judging.notices": ("Stage",),
        "breaker.core.judging.settled": ("is_settled",),
        "breaker.core.judging.verdicts": (
            "Allow",
            "Ask",
            "Deny",
            "FailureHit",
            "Hit",
            "Notice",
            "Reached",
            "Stall",
        ),
    }
)

__all__ = sorted([*_HOMES, "notices"])
__getattr__ = loader(globals(), _HOMES)
