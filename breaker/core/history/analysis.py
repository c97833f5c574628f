"""A call read once: as it resolves, and its fingerprints; recent short calls are remembered by
their arguments.

A loop repeats its arguments by definition, so its repeats cost no analysis: the arguments as they
resolve (``reading.resolved_call``) and the fingerprints of the last ``ANALYSED_CALLS`` calls with
flat, short arguments are kept (shared by all agents), least recently used first. What the
fingerprinter answers is made ``distinct`` here, so every count downstream sees each key of a
call once.
"""

from __future__ import annotations

from collections.abc import Callable

from breaker.core.config import BreakerConfig
from breaker.core.reading import CallFingerprints, Fingerprint, ToolCall, distinct, resolved_call

#: How many recent short calls keep their fingerprints (shared by all agents), how many arguments
#: such a call may have, and how long its text arguments may be in all: a longer text is keyed by a
#: pass over it (its hash) on every call, and is almost never sent again word for word (12 of 972
#: calls of 1,024 to 4,096 characters on the four real sources).
ANALYSED_CALLS = 256
ANALYSED_ARGS = 16
ANALYSED_CHARS = 1024
Fingerprinter = Callable[[ToolCall, BreakerConfig], CallFingerprints]


class Analysis:
    """The fingerprinter, with the recent calls' answers kept."""

    __slots__ = ("_config", "_fingerprint", "analysed")

    def __init__(self, config: BreakerConfig, fingerprinter: Fingerprinter) -> None:
        self._config = config
        self._fingerprint = fingerprinter
        # Of recent short calls by their arguments, least recently used first: the arguments as
        # they resolve (None: as written) and the fingerprints.
        self.analysed: dict[tuple[object, ...], tuple[object, tuple[Fingerprint, ...]]] = {}

    def read(self, call: ToolCall) -> tuple[ToolCall, tuple[Fingerprint, ...]]:
        """The call as it resolves (every rule reads that one), and its fingerprints, each key once."""
        key = analysis_key(call)
        kept = self.analysed.pop(key, None) if key is not None else None
        resolved = None
        if kept is None:
            resolved = resolved_call(call)
            fingerprints = distinct(self._fingerprint(resolved, self._config).fingerprints)
            kept = (None if resolved is call else resolved.arguments, fingerprints)
        if key is not None:
            self.analysed[key] = kept
            if len(self.analysed) > ANALYSED_CALLS:
                del self.analysed[next(iter(self.analysed))]
        arguments, fingerprints = kept
        if resolved is not None:
            return resolved, fingerprints  # the call as read just now: the one made below
        if arguments is not None:
            call = ToolCall(call.name, arguments, call.call_id, call.arguments)
        return call, fingerprints

    def fingerprints(self, call: ToolCall) -> tuple[Fingerprint, ...]:
        """The call's fingerprints, each key once."""
        return self.read(call)[1]


def analysis_key(call: ToolCall) -> tuple[object, ...] | None:
    """What the fingerprints of ``call`` depend on, as a key, for flat arguments (at most
    ANALYSED_ARGS of them, their text at most ANALYSED_CHARS characters: bigger ones would cost
    more to key than most analyses); None else. Values keep their type, so ``1``, ``1.0`` and
    ``true`` never share a key."""
    arguments = call.arguments
    if not isinstance(arguments, dict) or len(arguments) > ANALYSED_ARGS:
        return None
    key: list[object] = [call.name]
    size = 0
    for name, value in arguments.items():
        if isinstance(value, str):
            size += len(value)
            if size > ANALYSED_CHARS:
                return None
        elif value is not None and not isinstance(value, (bool, int, float)):
            return None
        key.extend((name, type(value), value))
    return tuple(key)
