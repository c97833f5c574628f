"""One JSON text from a log (an event, or a call's arguments logged as a string), read with limits.

* Nesting: no JSON value deeper than ``MAX_NESTING`` levels is read (``Unreadable``); deeper ones
  would exhaust Python's stack in the parser, in ``json.dumps`` and in every report. No real tool
  call or event comes near it.
* Numbers: no integer of more than ``sys.get_int_max_str_digits()`` digits (4,300 unless set)
  is read (``Unreadable``); Python refuses to convert one.
* Lone surrogates: a ``\\ud800`` escape with no partner is valid JSON but not text any output can
  encode. Live, the shim sends the worker UTF-8 made by ``TextEncoder``, which puts U+FFFD in its
  place; so does this, so the replay sees what the gate saw.

The checks cost nothing on an ordinary line: the tree is walked only when the text holds more
brackets than the limit, or a ``\\uD...`` escape.
"""

from __future__ import annotations

import json
import json.scanner
import re
import sys

#: The deepest JSON value read from a log.
MAX_NESTING = 128
#: What takes a lone surrogate's place (what ``TextEncoder`` writes for one).
REPLACEMENT = "\ufffd"

_SURROGATE = re.compile("[\ud800-\udfff]")
_scan = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]  # typeshed: a context


class Unreadable(ValueError):
    """A JSON text that is valid but past a limit; the message says which."""


def load_json(text: str) -> object:
    """``json.loads`` with the limits above; ``json.JSONDecodeError`` for text that is not JSON."""
    too_deep = f"nested deeper than {MAX_NESTING} levels"
    try:
        try:
            value, end = _scan(text, 0)  # json.loads without its checks around the scanner
        except (StopIteration, json.JSONDecodeError):
            value = json.loads(text)  # not JSON, or space before it: as json.loads says
        else:
            if end != len(text) and text[end:].strip():
                json.loads(text)  # raises "Extra data" as json.loads does
    except RecursionError:
        raise Unreadable(too_deep) from None
    except json.JSONDecodeError:
        raise
    except ValueError:  # an integer longer than Python converts
        raise Unreadable(number_too_long()) from None
    # A text shorter than twice the limit cannot be deeper; else it takes that many brackets.
    brackets = len(text) > 2 * MAX_NESTING and text.count("[") + text.count("{") > MAX_NESTING
    if brackets and _deeper_than(value, MAX_NESTING):
        raise Unreadable(too_deep)
    if "\\u" in text and ("\\ud" in text or "\\uD" in text):
        return _mended(value)
    return value


def number_too_long() -> str:
    """What is said of a text holding an integer longer than Python converts."""
    return f"holds a number of more than {sys.get_int_max_str_digits():,} digits"


def _deeper_than(value: object, limit: int) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: list[object] = list(item.values())
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def _mended(value: object) -> object:
    """``value`` with every lone surrogate in its texts and keys replaced (its depth is bounded)."""
    if isinstance(value, str):
        return _SURROGATE.sub(REPLACEMENT, value)
    if isinstance(value, list):
        return [_mended(item) for item in value]
    if isinstance(value, dict):
        return {_SURROGATE.sub(REPLACEMENT, key): _mended(item) for key, item in value.items()}
    return value
