"""Repeat Tool Breaker: a pure, deterministic decision core that stops agents looping on a tool call.

``Breaker(config)`` holds per-agent state; feed it calls (``preflight``, ``decide``), results,
and human turns, and it answers ``Allow``, ``Ask`` or ``Deny``. Nothing here does I/O.
"""

from breaker.core.config import BreakerConfig, ConfigError, default_config, load_config
from breaker.core.decision import Breaker
from breaker.core.fingerprints import Fingerprint, ToolCall
from breaker.core.verdicts import Allow, Ask, Deny, FailureHit, Hit, Notice

__all__ = [
    "Allow",
    "Ask",
    "Breaker",
    "BreakerConfig",
    "ConfigError",
    "Deny",
    "FailureHit",
    "Fingerprint",
    "Hit",
    "Notice",
    "ToolCall",
    "default_config",
    "load_config",
]
