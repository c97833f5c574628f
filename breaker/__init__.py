"""Repeat Tool Breaker: a pure, deterministic decision core that stops agents looping on a tool call.

``Breaker(config)`` holds per-agent state; feed it calls (``preflight``, ``decide``), results,
and human turns, and it answers ``Allow``, ``Ask`` or ``Deny``. Nothing here does I/O.

The names below are loaded on first use, so that importing one submodule (the worker's
configuration check, say) does not import them all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from breaker.reexports import homes_of, loader

if TYPE_CHECKING:  # the names, for type checkers; at run time __getattr__ loads them
    from breaker.core.config import BreakerConfig as BreakerConfig
    from breaker.core.config import ConfigError as ConfigError
    from breaker.core.config import default_config as default_config
    from breaker.core.config import load_config as load_config
    from breaker.core.decision import Breaker as Breaker
    from breaker.core.judging.verdicts import Allow as Allow
    from breaker.core.judging.verdicts import Ask as Ask
    from breaker.core.judging.verdicts import Deny as Deny
    from breaker.core.judging.verdicts import FailureHit as FailureHit
    from breaker.core.judging.verdicts import Hit as Hit
    from breaker.core.judging.verdicts import Notice as Notice
    from breaker.core.judging.verdicts import Reached as Reached
    from breaker.core.reading.fingerprints import Fingerprint as Fingerprint
    from breaker.core.reading.fingerprints import ToolCall as ToolCall

#: Each name, by its home module.
_HOMES = homes_of(
    {
        "breaker.core.config": ("BreakerConfig", "ConfigError", "default_config", "load_config"),
        "breaker.core.decision": ("Breaker",),
        "breaker.core.judging.verdicts": ("Allow", "Ask", "Deny", "FailureHit", "Hit", "Notice", "Reached"),
        "breaker.core.reading.fingerprints": ("Fingerprint", "ToolCall"),
    }
)

__all__ = sorted(_HOMES)
__getattr__ = loader(globals(), _HOMES)
