"""What in an answer is volatile: the fields that change on every call, whatever the call brought.

Two answers are the same answer when they differ only in these (a poll whose only change is its
clock has not moved); any other difference is content, and an answer that differs in it moved:

* a date or a time of day (``2026-12-06T02:41:26Z``, ``02:41:26.123``);
* a duration with its unit (``12ms``, ``3.2 s``, ``45 sec``);
* an id: a UUID, a run of 12 or more hex digits, and the value of a field named for an id, a time
  or a duration (``id``, ``request_id``, ``messageId``, ``timestamp``, ``created_at``,
  ``elapsed``, ``took``), and the call's own id quoted back.

An answer that quotes the call's own arguments (a path as the call spelled it) is read without
them: a respelling of the same call is not news. A percentage, a count, a state, a list of items
is content. Only the first and the last ``ENDS_CHARS`` of a long answer are read (a poll's news is
at its top, or at the end of output that grows). Every pattern runs in linear time.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from breaker.core.reading.fingerprints import ToolCall
from breaker.core.reading.outcomes import result_digest

#: How much of each end of a long answer is read.
ENDS_CHARS = 2048
#: Arguments shorter than this are not looked for in the answer (a ``1`` would be found everywhere).
_SAID_CHARS = 3

#: The volatile parts of an answer (the module docstring's list), each replaced by one mark.
_VOLATILE = re.compile(
    r"(?=[\d\"'A-Fa-f])(?:"  # where none can start, one test and on
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d{1,9})?\b"
    r"|\b\d{1,12}(?:\.\d{1,9})?\s?(?:ms|us|µs|ns|s|sec|secs|seconds)\b"
    r"|\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
    r"|\b(?=[0-9a-fA-F]{0,63}\d)[0-9a-fA-F]{12,64}\b"
    r"|[\"'](?:[A-Za-z_]{0,32}?(?:_id|Id|ID|_at|At)|id|time|timestamp|date|elapsed|duration|took|"
    r"uptime|latency|etag|nonce)[\"']\s{0,4}[:=]\s{0,4}(?:\"[^\"\n]{0,128}\"|'[^'\n]{0,128}'|[\w.+-]{1,64})"
    r")"
)


def content_of(text: str, said: Iterable[str] = ()) -> str:
    """``text`` (its two ends) with its volatile parts and what the call ``said`` (its string
    arguments) masked: what two answers are compared by for news."""
    return _content_of_ends(ends_of(text), said)


def ends_of(text: str) -> str:
    """The part of ``text`` its content is read from: its two ends (and its length) when it is long."""
    if len(text) > 2 * ENDS_CHARS:
        return f"{text[:ENDS_CHARS]}\x01{len(text)}\x01{text[-ENDS_CHARS:]}"
    return text


def _content_of_ends(text: str, said: Iterable[str]) -> str:
    for argument in said:
        if len(argument) >= _SAID_CHARS:
            text = text.replace(argument, "\x02")
    return _VOLATILE.sub("\x00", text)


def said(call: ToolCall) -> list[str]:
    """The string arguments a call said at its top level, as written and as read, and its call id
    (an answer may quote them), the longest first."""
    said = {call.call_id} if call.call_id else set()
    said |= {
        value
        for arguments in (call.written, call.arguments)
        if isinstance(arguments, dict)
        for value in arguments.values()
        if isinstance(value, str)
    }
    return sorted(said, key=len, reverse=True)


class Answer:
    """One answer of a call: its content (``content_of``, as a digest) read once and only when a
    record needs it, even after it is kept (``keep``) for a later answer to be compared with."""

    __slots__ = ("_call", "_content", "_ends", "_text", "_tool")

    def __init__(self, tool: str, text: str, call: ToolCall | None) -> None:
        self._tool, self._text, self._call, self._content, self._ends = tool, text, call, b"", ""

    def keep(self) -> Answer:
        """This answer, holding only what its content is read from from now on."""
        if self._text:
            self._ends, self._text = ends_of(self._text), ""
        return self

    def content(self) -> bytes:
        if not self._content:
            said_now = said(self._call) if self._call is not None else []
            ends = self._ends or ends_of(self._text)
            self._content = result_digest(self._tool, _content_of_ends(ends, said_now))
        return self._content
