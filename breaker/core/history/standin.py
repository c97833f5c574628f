"""A call's stand-in: the same call with its long texts condensed, for the shim's journal.

The shim journals each agent's recent calls to rebuild a replacement worker (node-shim/call/journal.js),
within a byte budget that one 48 MB ``write`` would fill alone. A long text counts only by its
digest (``canonical.condensed``: canonical JSON, an edit's strings and a write's content token all
read it condensed), so the call with each long text replaced by its condensed form is the same
call to ``Breaker``: same fingerprints, same workspace effect. That is checked, not assumed: a
text the fingerprints read as it is (a shell command, a URL) would change them, and then there is
no stand-in.

Pure: a call in, arguments (or None) out.
"""

from __future__ import annotations

from breaker.core.config import BreakerConfig
from breaker.core.history.identity import effect_of
from breaker.core.reading import CONDENSED_CHARS, ToolCall, condensed, fingerprint_call


def stand_in(call: ToolCall, config: BreakerConfig) -> object | None:
    """Arguments that ``Breaker`` counts exactly as ``call``'s, with every long text condensed;
    None when there is none to condense or condensing would change what the call counts as."""
    arguments = _condensed_values(call.arguments)
    if arguments is call.arguments:
        return None
    substitute = ToolCall(call.name, arguments, call.call_id)
    original = fingerprint_call(call, config).fingerprints
    if fingerprint_call(substitute, config).fingerprints != original:
        return None
    if effect_of(substitute, original) != effect_of(call, original):
        return None
    return arguments


def _condensed_values(value: object) -> object:
    """``value`` with every long text in it condensed; ``value`` itself when none is long.

    Iterative, over the plain JSON shapes the shim sends (maps and arrays): no recursion on depth.
    """
    if isinstance(value, str):
        return condensed(value)
    if not isinstance(value, (dict, list)):
        return value
    copies: dict[int, dict[object, object] | list[object]] = {}
    changed = False
    stack: list[dict[object, object] | list[object]] = [value]
    order: list[dict[object, object] | list[object]] = []
    while stack:
        container = stack.pop()
        if id(container) in copies:
            continue
        copies[id(container)] = container
        order.append(container)
        children = container.values() if isinstance(container, dict) else container
        for child in children:
            if isinstance(child, (dict, list)):
                stack.append(child)
            elif isinstance(child, str) and len(child) >= CONDENSED_CHARS:
                changed = True
    if not changed:
        return value
    # Rebuild bottom-up: children were reached after their parents, so go in reverse.
    for container in reversed(order):
        if isinstance(container, dict):
            rebuilt: dict[object, object] | list[object] = {
                key: _swap(child, copies) for key, child in container.items()
            }
        else:
            rebuilt = [_swap(child, copies) for child in container]
        copies[id(container)] = rebuilt
    return copies[id(value)]


def _swap(child: object, copies: dict[int, dict[object, object] | list[object]]) -> object:
    if isinstance(child, (dict, list)):
        return copies[id(child)]
    if isinstance(child, str):
        return condensed(child)
    return child
