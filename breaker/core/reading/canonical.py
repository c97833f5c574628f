"""Canonical JSON and bounded keys: one spelling of any argument value, and keys that stay short.

Two calls whose arguments differ only in key order or whitespace are the same call, so arguments
are compared as compact JSON with keys deep-sorted. The encoder is total (any depth, cycles,
non-JSON types) and never recurses on input depth; a key too long to keep verbatim keeps a head
plus a digest, so it stays unique without growing the window. A text of CONDENSED_CHARS or
more counts by its digest (``condensed``): canonical JSON writes it condensed, so a stand-in that
holds the condensed text in its place is the same call (``breaker.core.history.standin``).
"""

from __future__ import annotations

import hashlib
import json
from json.encoder import encode_basestring
from typing import Literal

from breaker.core.config.tables import SHORTENED_KEY_MARK
from breaker.core.reading.sent import CONDENSED_CHARS as CONDENSED_CHARS

try:
    from _json import make_encoder
except ImportError:  # an interpreter without json's C accelerator
    make_encoder = None  # type: ignore[assignment,misc]

#: The longest fingerprint key kept verbatim; longer keys keep a head plus a digest of the whole.
MAX_KEY_CHARS = 512
_DIGEST_BYTES = 16
_DIGEST_MARK = SHORTENED_KEY_MARK
_KEY_HEAD_CHARS = MAX_KEY_CHARS - len(_DIGEST_MARK) - 2 * _DIGEST_BYTES
_CONDENSED_HEAD_CHARS = 64

#: Values nested deeper than this take the iterative encoder instead of the C one.
_PLAIN_DEPTH = 64
#: Integers wider than this are written in hex: str() refuses very long ints.
_MAX_DECIMAL_BITS = 4096
_REPEATED_CONTAINER = '"<cycle>"'
_SCALAR_TYPES = (str, int, float, bool, type(None))
_FLAT_SCALAR_TYPES = (str, float, bool, type(None))
#: Strings at least this long are checked for characters to escape in one bytes pass.
_LONG_TEXT = 1024
#: Every byte that JSON writes as it is (all but control characters, ``"`` and ``\\``).
_JSON_VERBATIM_BYTES = bytes(byte for byte in range(256) if byte >= 0x20 and byte not in b'"\\')
#: The escapes JSON writes as a backslash and one letter, backslash first so none is doubled.
_JSON_SHORT_ESCAPES = tuple(
    (character, ord(character), "\\" + letter)
    for character, letter in zip('\\"\n\r\t', '\\"nrt', strict=True)
)
_JSON_SHORT_ESCAPED_BYTES = b'\\"\n\r\t'


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
#: The C encoder ``_ENCODER.encode`` builds anew for every value (a microsecond a call), built
#: once; without cycle markers, as it only takes values checked to hold no container twice.
_C_ENCODER = (
    None
    if make_encoder is None
    else make_encoder(None, _ENCODER.default, encode_basestring, None, ":", ",", True, False, True)
)


def canonical_json(value: object) -> str:
    """Compact JSON with keys deep-sorted; never raises, whatever the depth, cycles or types."""
    if type(value) is dict:
        texts = _flat_texts(value)
        if texts == "long":
            return _encode_flat_with_long_text(value)
        if texts == "short":
            return _encode_plain(value)
    if _is_plain(value):
        return _encode_plain(value)
    return _encode_iteratively(value)


def _encode_plain(value: object) -> str:
    """What ``_ENCODER.encode`` writes for a value the C encoder takes as is (``_is_plain``)."""
    if _C_ENCODER is None:
        return _ENCODER.encode(value)
    return "".join(_C_ENCODER(value, 0))


def _flat_texts(value: dict[object, object]) -> Literal["short", "long"] | None:
    """For the usual arguments, one object of strings, flags and numbers (integers short enough
    for decimal: a ``read``'s offset and limit) keyed by strings: whether a string in it is long
    (one pass, as this runs for every call). None for any other object."""
    texts: Literal["short", "long"] = "short"
    for key, child in value.items():
        if type(key) is not str:
            return None
        if type(child) is str:
            if len(child) >= _LONG_TEXT:
                texts = "long"
        elif type(child) is int:
            if child.bit_length() > _MAX_DECIMAL_BITS:
                return None
        elif type(child) not in _FLAT_SCALAR_TYPES:
            return None
    return texts


def _encode_flat_with_long_text(value: dict[object, object]) -> str:
    """What the C encoder writes for a flat object, without its per-character pass over long text."""
    fields = sorted(value.items(), key=_first_of_pair)
    return "{" + ",".join(_ENCODER.encode(key) + ":" + _json_scalar(child) for key, child in fields) + "}"


def _json_scalar(value: object) -> str:
    if type(value) is str and len(value) >= _LONG_TEXT:
        kept = _long_texts.get(id(value))
        if kept is not None and kept[0] is value:
            return kept[1]
        written = _long_text_json(value)
        _long_texts[id(value)] = (value, written)
        if len(_long_texts) > _KEPT_LONG_TEXTS:
            del _long_texts[next(iter(_long_texts))]
        return written
    return _ENCODER.encode(value)


def _long_text_json(value: str) -> str:
    """A text of _LONG_TEXT characters or more as JSON: escaped in one bytes pass, or condensed."""
    if len(value) >= CONDENSED_CHARS:
        return _ENCODER.encode(condensed(value))
    encoded = value.encode("utf-8", "surrogatepass")
    # UTF-8 spells every non-ASCII character with bytes >= 0x80, so these bytes are exactly
    # the characters JSON must escape: control characters, the quote and the backslash.
    escaped = encoded.translate(None, _JSON_VERBATIM_BYTES)
    if not escaped:
        return '"' + value + '"'
    if not escaped.translate(None, _JSON_SHORT_ESCAPED_BYTES):  # text with newlines, mostly
        for character, byte, escape in _JSON_SHORT_ESCAPES:
            if byte in escaped:
                value = value.replace(character, escape)
        return '"' + value + '"'
    return _ENCODER.encode(value)


#: The long texts written last (the very objects, by id) and their JSON: one call's texts are
#: written for its key, its target and what it asks (``history.asked``), each a pass over the
#: text; the texts of one call are written once (it holds the last few until the next).
_KEPT_LONG_TEXTS = 4
_long_texts: dict[int, tuple[str, str]] = {}


def _first_of_pair(pair: tuple[object, object]) -> str:
    key = pair[0]
    assert isinstance(key, str)
    return key


def condensed(text: str) -> str:
    """``text``, or when it is CONDENSED_CHARS long or more, its head, its length and a digest of
    the whole: unique to the text, short, and condensed again to itself."""
    if len(text) < CONDENSED_CHARS:
        return text
    last = _last_condensed[0]
    if last is not None and last[0] is text:  # one call's text is read several times over
        return last[1]
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    short = f"{text[:_CONDENSED_HEAD_CHARS]}…[{len(text)} characters, sha256 {digest[: 2 * _DIGEST_BYTES]}]"
    _last_condensed[0] = (text, short)
    return short


#: The text condensed last (the very object) and its condensed form: fingerprints, the workspace
#: and a stand-in all read one call's long text, and a digest of megabytes is worth one pass (it
#: holds that one text until the next).
_last_condensed: list[tuple[str, str] | None] = [None]


def bounded_key(key: str) -> str:
    """``key`` at most MAX_KEY_CHARS long and valid UTF-8, still unique to the whole text."""
    if len(key) > MAX_KEY_CHARS:
        # SHA-256 (hardware-accelerated on common CPUs) is the fastest digest hashlib offers here.
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
        key = key[:_KEY_HEAD_CHARS] + _DIGEST_MARK + digest[: 2 * _DIGEST_BYTES]
    return _valid(key)


def json_key(prefix: str, value: object) -> str:
    """A key for ``prefix`` and ``value``, as ``bounded_key(prefix + canonical_json(value))`` is one:
    the same head, and the same key for the same value only. The texts of a flat object that are
    long (``_LONG_TEXT`` or more) are digested as they are, without writing them as JSON first
    (escaping one is a pass or more over it, at every call), behind a head written as JSON."""
    if type(value) is not dict:
        return bounded_key(prefix + canonical_json(value))
    flat = _flat_texts(value)
    if flat != "long":  # read once: ``canonical_json`` would read a flat object's texts again
        return bounded_key(prefix + (_encode_plain(value) if flat == "short" else canonical_json(value)))
    fields: list[str] = []
    texts: list[str] = []
    for name, child in sorted(value.items(), key=_first_of_pair):
        if type(child) is str and _LONG_TEXT <= len(child) < CONDENSED_CHARS:
            # Its head as JSON writes it (each character on its own), then a character no JSON
            # text holds as it is: where the text goes, digested apart below.
            fields.append(
                _ENCODER.encode(name) + ":" + _long_text_json(child[:_KEY_HEAD_CHARS])[:-1] + "\x01"
            )
            texts.append(child)
        else:
            fields.append(_ENCODER.encode(name) + ":" + _json_scalar(child))
    line = prefix + "{" + ",".join(fields) + "}"
    if not texts:
        return bounded_key(line)
    digest = hashlib.sha256(line.encode("utf-8", "surrogatepass"))
    for text in texts:
        digest.update(f"\0{len(text)}\0".encode())
        digest.update(text.encode("utf-8", "surrogatepass"))
    return _valid(line[:_KEY_HEAD_CHARS] + _DIGEST_MARK + digest.hexdigest()[: 2 * _DIGEST_BYTES])


def _valid(key: str) -> str:
    """``key`` as valid UTF-8: a lone surrogate spelled out."""
    if key.isascii():
        return key
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: spell them out so the key can travel
        return key.encode("utf-8", "backslashreplace").decode("utf-8")
    return key


def _is_plain(value: object) -> bool:
    """Whether the C encoder can take ``value`` as is: JSON types and tuples, str keys, shallow, no
    list or object shared, no text to condense."""
    seen: set[int] = set()
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if type(item) is list:
            if depth >= _PLAIN_DEPTH or id(item) in seen:
                return False
            seen.add(id(item))
            stack.extend((child, depth + 1) for child in item)
        elif type(item) is tuple:
            # Written as a list, by either encoder, and written again where it is met again
            # (immutable: only the lists and objects in it can close a cycle, and they are seen).
            if depth >= _PLAIN_DEPTH:
                return False
            stack.extend((child, depth + 1) for child in item)
        elif type(item) is dict:
            if depth >= _PLAIN_DEPTH or id(item) in seen:
                return False
            seen.add(id(item))
            for key, child in item.items():
                if type(key) is not str:
                    return False
                stack.append((child, depth + 1))
        elif type(item) is int:
            if item.bit_length() > _MAX_DECIMAL_BITS:
                return False
        elif type(item) is str:
            if len(item) >= CONDENSED_CHARS:
                return False
        elif type(item) not in _SCALAR_TYPES:
            return False
    return True


_DONE = object()
#: One open container of the iterative encoder: its items, the next index, its closing bracket.
_Frame = tuple[list[tuple[str, object]] | list[object], int, str]


def _encode_iteratively(value: object) -> str:
    """The slow, total encoder: an explicit stack, so depth costs memory and never recursion."""
    out: list[str] = []
    seen: set[int] = set()
    stack: list[_Frame] = []
    pending = value
    while pending is not _DONE:
        _emit(pending, stack, out, seen)
        pending = _advance(stack, out)
    return "".join(out)


def _emit(value: object, stack: list[_Frame], out: list[str], seen: set[int]) -> None:
    """Write a scalar, or open a container and push its items."""
    if not isinstance(value, (dict, list, tuple)):
        out.append(_scalar_json(value))
        return
    if not isinstance(value, tuple):  # only mutable containers can be revisited (cycles)
        if id(value) in seen:
            out.append(_REPEATED_CONTAINER)
            return
        seen.add(id(value))
    if isinstance(value, dict):
        out.append("{")
        stack.append((sorted(((_key_text(k), v) for k, v in value.items()), key=_first), 0, "}"))
    else:
        out.append("[")
        stack.append((list(value), 0, "]"))


def _advance(stack: list[_Frame], out: list[str]) -> object:
    """The next value to encode, closing finished containers on the way; _DONE at the end."""
    while stack:
        items, index, closer = stack[-1]
        if index >= len(items):
            out.append(closer)
            stack.pop()
            continue
        stack[-1] = (items, index + 1, closer)
        if index:
            out.append(",")
        item = items[index]
        if closer == "}":
            assert isinstance(item, tuple)
            out.append(_ENCODER.encode(item[0]) + ":")
            return item[1]
        return item
    return _DONE


def _first(pair: tuple[str, object]) -> str:
    return pair[0]


def _key_text(key: object) -> str:
    """A dict key as JSON spells it (``True`` → ``"true"``, ``1`` → ``"1"``)."""
    if isinstance(key, str):
        return key
    text = _scalar_json(key)
    return text[1:-1] if text.startswith('"') else text


def _scalar_json(value: object) -> str:
    if value is None or isinstance(value, (bool, float)):
        return json.dumps(value)
    if isinstance(value, int):
        return str(value) if value.bit_length() <= _MAX_DECIMAL_BITS else json.dumps(hex(value))
    if isinstance(value, str):
        return _ENCODER.encode(condensed(value))
    if isinstance(value, (bytes, bytearray)):
        return _ENCODER.encode(bytes(value).decode("utf-8", "backslashreplace"))
    return json.dumps(f"<{type(value).__name__}>")
