"""Repeat Tool Breaker: a pure, deterministic decision core that stops agents looping on a tool call.

``Breaker(config)`` holds per-agent state; feed it calls (``preflight``, ``decide``), results,
and human turns, and it answers ``Allow``, ``Ask`` or ``Deny``. Nothing here does I/O.

The names below are loaded on first use, so that importing one submodule (the worker's
configuration check, say) does not import them all.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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

_HOMES = {
    "Allow": "breaker.core.judging.verdicts",
    "Ask": "breaker.core.judging.verdicts",
    "Breaker": "breaker.core.decision",
    "BreakerConfig": "breaker.core.config",
    "ConfigError": "breaker.core.config",
    "Deny": "breaker.core.judging.verdicts",
    "FailureHit": "breaker.core.judging.verdicts",
    "Fingerprint": "breaker.core.reading.fingerprints",
    "Hit": "breaker.core.judging.verdicts",
    "Notice": "breaker.core.judging.verdicts",
    "Reached": "breaker.core.judging.verdicts",
    "ToolCall": "breaker.core.reading.fingerprints",
    "default_config": "breaker.core.config",
    "load_config": "breaker.core.config",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'breaker' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
