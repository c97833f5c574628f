"""One tool call → the set of fingerprints that identify the action it performs.

Fingerprints are built after decoy arguments and volatile flags are stripped and host spellings
are folded, so that two calls doing the same thing to the same resource look the same.
"""

from __future__ import annotations

from dataclasses import dataclass

from breaker.config import BreakerConfig


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call as the harness dispatches it: the tool's name and its parsed JSON arguments."""

    name: str
    arguments: object
    call_id: str = ""


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """One identity of an action; ``key`` is the full text (``net:open.canada.ca/``)."""

    kind: str
    key: str
    local: bool = False


@dataclass(frozen=True, slots=True)
class CallFingerprints:
    """Every fingerprint of one call, plus what normalisation removed (for ``rtb explain``)."""

    fingerprints: tuple[Fingerprint, ...]
    is_local: bool
    stripped_args: tuple[str, ...] = ()
    volatile_removed: tuple[str, ...] = ()
    aliases_folded: tuple[tuple[str, str], ...] = ()


def fingerprint_call(call: ToolCall, config: BreakerConfig) -> CallFingerprints:
    """Fingerprint ``call`` under ``config`` (decoy lists, host aliases)."""
    raise NotImplementedError("filled in by the fingerprints work")
