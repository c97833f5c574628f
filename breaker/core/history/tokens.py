"""The tokens of state-aware identity (``identity``): what a changed place holds, and its digest.

A token is a digest of what made it (a text written, an edit's pairs on top of what the place
held, an answer): equal parts, equal tokens. The workspace state is the XOR of a digest of each
changed place with its token, so a change made and undone leaves the state as it was.
"""

from __future__ import annotations

import hashlib
from json.encoder import encode_basestring

from breaker.core.reading import condensed

#: What a token is made of: texts, a count, None (a place as the agent found it) and an edit's pairs.
_Part = str | int | None | tuple["_Part", ...]


def token_of(*parts: _Part) -> str:
    """A token: a digest of ``parts`` as ``canonical_json`` writes the list of them, written here
    (its total encoder walks an edit's tuples one item at a time, for every edit that lands), so
    every token is the one it always was."""
    written = _json_list(parts).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(written, digest_size=16).hexdigest()


def _json_list(parts: tuple[_Part, ...]) -> str:
    return "[" + ",".join([_json_part(part) for part in parts]) + "]"


def _json_part(part: _Part) -> str:
    """One part as ``canonical_json`` writes it: a text condensed (``condensed``) and escaped as
    its encoder escapes (non-ASCII kept), a count in decimal, a tuple as a list."""
    if type(part) is str:
        return encode_basestring(condensed(part))
    if part is None:
        return "null"
    if isinstance(part, tuple):
        return _json_list(part)
    return str(part)


def place_digest(place: str, token: str) -> int:
    """``token`` held by ``place``, as one number the workspace state XORs in and out."""
    pair = f"{place}\0{token}".encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(pair, digest_size=8).digest(), "big")
