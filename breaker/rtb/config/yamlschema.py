"""YAML read as dsh reads a profile's patch: js-yaml 4 with its JSON schema, not PyYAML's YAML 1.1.

dsh parses ``cordis.patch.yml`` with js-yaml 4 and its JSON schema, so ``rtb check`` resolves
plain (unquoted) scalars the same way; with PyYAML's own rules it passed values the boot refuses
(``logDenials: yes``, ``window: 1_000``) and refused values the boot takes (``window: 2e1``,
``window: 0o20``). The rules, as js-yaml 4 has them:

* null: ``~``, ``null``, ``Null``, ``NULL`` and nothing at all;
* booleans: ``true``, ``True``, ``TRUE``, ``false``, ``False``, ``FALSE`` (``yes``, ``on`` are text);
* integers: decimal digits (``020`` is twenty), ``0b…``, ``0x…``, ``0o…``, each with an optional sign,
  and no ``_`` or ``1:30``; one too large for a double is not an integer (one of more digits
  than Python converts is refused, as a JSON text's is);
* floats: ``1.5``, ``2e1``, ``.5``, ``.inf``, ``.nan``;
* no dates, no ``<<`` merge keys, and a key given twice in one mapping is an error;
* a key is text, as a JavaScript object's keys are (``1:`` is the key ``'1'``).
"""

from __future__ import annotations

import math
import re
from typing import Any

from breaker.core.config import ConfigError

_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT = re.compile(r"^[-+]?(?:0b[01]+|0x[0-9a-fA-F]+|0o[0-7]+|[0-9]+)$")
_FLOAT = re.compile(
    r"^(?:[-+]?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?"
    r"|\.[0-9]+(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
_SPECIAL_FLOAT = re.compile(r"^(?:[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$")
_TAG = "tag:yaml.org,2002:"
_BASES = {"0b": 2, "0x": 16, "0o": 8}


def _integer(text: str) -> int:
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    base = _BASES.get(digits[:2], 10)
    return sign * int(digits[2:] if base != 10 else digits, base)


def _float(text: str) -> float:
    lowered = text.lower()
    if lowered.lstrip("+-") == ".inf":
        return -math.inf if lowered.startswith("-") else math.inf
    if lowered == ".nan":
        return math.nan
    return float(lowered)


def _finite_integer(text: str) -> bool:
    try:
        return math.isfinite(float(_integer(text)))
    except OverflowError:  # past a double; past the digits Python converts is ValueError, refused
        return False


def scalar_tag(text: str) -> str:
    """The tag js-yaml's JSON schema gives the plain scalar ``text``: null, bool, int, float or str."""
    if _NULL.match(text):
        return _TAG + "null"
    if _BOOL.match(text):
        return _TAG + "bool"
    if _INT.match(text) and _finite_integer(text):
        return _TAG + "int"
    if _FLOAT.match(text) and (_SPECIAL_FLOAT.match(text) or math.isfinite(float(text))):
        return _TAG + "float"
    return _TAG + "str"


def key_text(key: object) -> str:
    """A mapping key as js-yaml stores it, as a JavaScript object's key, ``String(key)``: ``1`` and
    ``0x1`` are ``'1'``, ``2.0`` is ``'2'``, ``true`` is ``'true'``, ``null`` is ``'null'``, a list
    its items joined by commas, a mapping ``'[object Object]'``."""
    if key is None or isinstance(key, bool):
        return "null" if key is None else ("true" if key else "false")
    if isinstance(key, float) and not math.isfinite(key):
        return "NaN" if math.isnan(key) else ("-Infinity" if key < 0 else "Infinity")
    if isinstance(key, float) and key.is_integer() and abs(key) < 1e21:
        return str(int(key))
    if isinstance(key, list):
        return ",".join("" if item is None else key_text(item) for item in key)
    return "[object Object]" if isinstance(key, dict) else str(key)


def dsh_loader(yaml: Any) -> Any:
    """A PyYAML loader class (``yaml`` is the module) that reads a text as dsh's js-yaml does."""

    class DshLoader(yaml.SafeLoader):  # type: ignore[misc]
        def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
            if kind is yaml.ScalarNode and implicit[0]:
                return scalar_tag(value)
            return super().resolve(kind, value, implicit)

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            mapping: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                key = key_text(self.construct_object(key_node, deep=True))
                if key in mapping:
                    line = key_node.start_mark.line + 1
                    raise ConfigError(
                        f"the key {key!r} is given twice in one mapping (line {line}), which "
                        "dsh refuses to load: keep one of them"
                    )
                mapping[key] = self.construct_object(value_node, deep=deep)
            return mapping

    DshLoader.add_constructor(_TAG + "int", lambda loader, node: _integer(node.value))
    DshLoader.add_constructor(_TAG + "float", lambda loader, node: _float(node.value))
    return DshLoader
