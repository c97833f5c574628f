"""Whether a result is news to a conditional pass: what a condition means, read from a result.

With each answer that carries ``passes`` the worker may give a second promise (a conditional pass,
``deciding.passes.conditional``): how many calls surely go through while every result the shim
sends after the answered request is *news*, and the digests news must not have. The shim
evaluates the condition on what it sends anyway (node-shim/call/ahead.js); it names no rule.
A result *breaks* it when (``breaks``, the statement of what a condition means, which
node-shim/test/conditions.test.js pins against the shim's own evaluation):

* its digest (``digest``: SHA-256 of the tool's name, a NUL and the text as sent, its first
  ``DIGEST_BYTES`` bytes as a big-endian integer) is among the answer's ``digests``, or is that of
  a result before it since the request;
* its text holds one of ``BREAKS.marks`` anywhere, starts with one of ``BREAKS.prefixes`` or
  holds the string of one of ``BREAKS.heads`` within its first so many UTF-16 code units and one of
  that head's marks anywhere: what says a result failed (``outcomes.FAILURE_MARKS``,
  ``FAILURE_STARTS``, a JSON object's start with an ``error`` key's name or an escape) and a
  fetched page's first line, compared without the URL it names (``outcomes.FETCHED``);
* its outcome holds a field of ``BREAKS.facts`` with a value not listed there (another type or
  another value; a field absent never breaks it).

A result that breaks none is news to the evidence of results: ``outcomes.judge`` finds no failure
in it, and its digest (``outcomes.result_digest``, whose first bytes ``digest`` is for any text
``FETCHED`` leaves alone) differs from every one a comparison could meet. ``BREAKS`` goes to the
shim once, in the configure reply; each answer's ``conditional`` carries the passes and digests.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Set

from breaker.core.reading.sent import BREAKS as BREAKS
from breaker.core.reading.sent import Breaks as Breaks

#: How many bytes of a digest a condition compares: an integer JavaScript holds exactly.
DIGEST_BYTES = 6


def digest(tool: str, text: str) -> int:
    """A result's digest as a condition compares it."""
    return head(f"{tool}\0{text}")


def head(text: str) -> int:
    """The first ``DIGEST_BYTES`` of SHA-256 of ``text`` in UTF-8, as a number (a result's digest,
    a call's group: ``groups``)."""
    whole = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(whole[:DIGEST_BYTES], "big")


def _listed(value: object, allowed: tuple[object, ...]) -> bool:
    """Whether ``value`` is one of ``allowed``, of the same type (``False`` is not ``0``)."""
    return any(type(value) is type(one) and value == one for one in allowed)


def breaks(tool: str, text: str, outcome: Mapping[str, object] | None, forbidden: Set[int]) -> bool:
    """Whether a result breaks a condition whose digests, with those of the results before it
    since the request, are ``forbidden`` (the statement of what a condition means)."""
    if any(mark in text for mark in BREAKS.marks) or text.startswith(BREAKS.prefixes):
        return True
    for head, units, marks in BREAKS.heads:
        if any(mark in text for mark in marks) and head in text[:units].encode("utf-16-le", "surrogatepass")[
            : 2 * units
        ].decode("utf-16-le", "replace"):
            return True
    if outcome is not None:
        for field, allowed in BREAKS.facts.items():
            if field in outcome and not _listed(outcome[field], allowed):
                return True
    return digest(tool, text) in forbidden
