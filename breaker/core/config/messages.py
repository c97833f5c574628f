"""What a refused configuration says: ``ConfigError``, whose message names the key and the fix,
and the wordings the checks share (a close spelling suggested, a quoted number told apart).

A profile with a typo must refuse to boot rather than silently run with weaker protection, and
its error must say which key and what to write instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from breaker.core.config.tables import FAMILIES, FINGERPRINT_KINDS


class ConfigError(ValueError):
    """A configuration the breaker refuses; the message names the key and the fix."""


def close_matches(word: str, choices: Sequence[str], cutoff: float = 0.6) -> list[str]:
    """The closest of ``choices`` to ``word`` (at most one), as ``difflib`` finds it: imported only
    for a refused configuration, so it is not on the worker's start."""
    import difflib

    return difflib.get_close_matches(word, choices, n=1, cutoff=cutoff)


def choice_message(key: str, value: object, allowed: list[str]) -> str:
    """``key`` holds ``value``, not one of ``allowed``; the closest choice suggested (or the one
    spelled in another case: ``SEED``, ``Deny``)."""
    message = f"{key} must be one of {' | '.join(allowed)}, got {shown(value)}"
    close = close_matches(value, allowed, 0.5) if isinstance(value, str) else []
    if isinstance(value, str) and not close:
        close = [choice for choice in allowed if choice.lower() == value.lower()]
    return message + (f"; did you mean {close[0]!r}?" if close else "")


def unknown_limit_message(key: object) -> str:
    """``limits`` holds ``key``, which is no fingerprint kind nor one full fingerprint."""
    message = (
        f"limits has an unknown key {key!r}: a key is a fingerprint kind "
        f"({', '.join(FINGERPRINT_KINDS)}) or one full fingerprint such as 'verb:curl'"
        f" (a family: {', '.join(FAMILIES)})"
    )
    if isinstance(key, str):
        close = close_matches(key, FAMILIES if key.startswith("family:") else FINGERPRINT_KINDS)
        if close:
            message += f"; did you mean {close[0]!r}?"
        elif key.startswith("exact:"):
            message += "; an exact: key is the tool and its arguments as JSON, as a denial shows it: "
            message += '\'exact:bash:{"command":"ls"}\''
    return message


def exact_key_message(key: str, why: str, meant: str | None = None) -> str:
    """``limits`` holds the ``exact:`` key ``key``, which no call carries for ``why``; the
    fingerprint it was meant to be when it is known."""
    message = f"limits has the key {key!r}, which no call can carry: {why}; "
    if meant is not None:
        return message + f"did you mean {meant!r}?"
    return (
        message
        + 'copy the key as a denial or `rtb explain --json` shows it, such as \'exact:bash:{"command":"ls"}\''
    )


def unknown_key_message(key: str, valid: list[str]) -> str:
    """``key`` is no key of the configuration: the closest one (or the one spelled in another
    case) suggested, then every valid key."""
    message = f"unknown config key {key!r}"
    close = close_matches(key, valid, 0.5)
    if not close:
        lowered = {name.lower(): name for name in valid}
        if key.lower() in lowered:
            close = [lowered[key.lower()]]
    if close:
        message += f"; did you mean {close[0]!r}?"
    return message + f" (valid keys: {', '.join(valid)})"


def shown(value: object) -> str:
    """``value`` as a profile's YAML or JSON writes it: ``null``, ``true``, ``false``, ``.inf``,
    ``-.inf``, ``.nan``, a whole number without a fraction (``rtb check`` and a boot name it
    alike); else its repr."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else ("-.inf" if value < 0 else ".inf")
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(
            int(value)
        )  # as JavaScript writes it: `3.0` and `1e12` reach a boot as 3 and 1000000000000
    return repr(value)


def got(value: object) -> str:
    """``got <value>``, saying so of a string: a number or a flag quoted in YAML (``window: "16"``)."""
    if not isinstance(value, str):
        return f"got {shown(value)}"
    text = value.strip().lower()
    unquoted = text in ("true", "false", "null") or text.lstrip("-").replace(".", "", 1).isdigit()
    return f"got {value!r}, a string" + (" (write it without quotes)" if unquoted else "")


def type_name(value: object) -> str:
    """What ``value`` is, as a profile's YAML author knows it: ``null``, ``true``, ``false``, ``a
    number``, ``a string``, ``a list``, ``a mapping``."""
    if value is None or isinstance(value, bool):
        return shown(value)
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "a list"
    return "a mapping" if isinstance(value, dict) else f"a {type(value).__name__}"


#: What each key that merges over the defaults maps, said when it is given something else.
MAPPING_SHAPES = {
    "ignoreArgs": "tool names ('*': every tool) to lists of argument names, such as {'*': [description]}",
    "hostAliases": "host spellings to the host each folds into, such as {www.a.org: a.org}",
    "limits": "fingerprint kinds or fingerprints to caps, such as {net: 8, 'verb:curl': null}",
}
