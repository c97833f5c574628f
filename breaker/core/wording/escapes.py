"""Text under backslash escapes, read as its writer meant it, and where each character came from.

A secret reaches a quote in the encodings it travelled through: a request body logged as a JSON
string (``{\\"password\\": \\"x\\"}``), a log line after an escaped newline (``\\nghp_…``), a URL
whose slashes a JSON encoder escaped (``https:\\/\\/user:pw@host``), a Python repr (``\\'``,
``\\xNN``), a call's arguments as its ``exact:`` key shows them. :class:`Unescaped` takes one level
of escapes out (JSON's and Python's: ``\\n``, ``\\t``, ``\\uXXXX``, ``\\xNN``, and a backslash before
any other character stands for that character) and maps every character of the result back to
the characters of the text it came from, so that a secret found in the result is replaced where
it stands in the text, in whatever encoding it stands there.
"""

from __future__ import annotations

import re
from bisect import bisect_right

#: One escape: ``\uXXXX``, ``\xNN``, or a backslash and the character it escapes (a line break
#: after a backslash is a line continuation, not an escape of it).
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|([^\r\n]))")
_NAMED = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


class Unescaped:
    """``text`` with one level of backslash escapes taken out (:attr:`text`), and the way back.

    The result is kept as runs: a run of plain characters stands where it stood, and each escape
    is one character that stands for the 2 to 6 it was written with.
    """

    __slots__ = ("_escape", "_original", "_source", "_starts", "text")

    def __init__(self, source: str) -> None:
        # The text at once (one pass in C); the way back only when a secret is found in it.
        self._original = source
        self.text = _ESCAPE.sub(_meant, source)
        self._starts: list[int] | None = None
        self._source: list[int] = []
        self._escape: list[int] = []

    def _runs(self) -> list[int]:
        """Where each run starts in :attr:`text` (and, kept beside, in the source and how long
        its escape is there), read on the first way back asked for."""
        if self._starts is not None:
            return self._starts
        source = self._original
        starts: list[int] = []  # where each run starts in the result
        sources: list[int] = []  # ... and in the source
        escapes: list[int] = []  # the length of an escape in the source (0: a plain run)
        done = taken = 0
        for match in _ESCAPE.finditer(source):
            if match.start() > done:
                starts.append(taken)
                sources.append(done)
                escapes.append(0)
                taken += match.start() - done
            starts.append(taken)
            sources.append(match.start())
            escapes.append(match.end() - match.start())
            taken += 1
            done = match.end()
        if done < len(source):
            starts.append(taken)
            sources.append(done)
            escapes.append(0)
        self._starts, self._source, self._escape = starts, sources, escapes
        return starts

    def start(self, index: int) -> int:
        """Where the character at ``index`` of :attr:`text` starts in the source (``len(text)``:
        the source's end)."""
        run = bisect_right(self._runs(), index) - 1
        if run < 0:
            return index
        offset = index - self._runs()[run]
        if self._escape[run]:
            return self._source[run] + (self._escape[run] if offset else 0)
        return self._source[run] + offset

    def end(self, index: int) -> int:
        """Where the characters of :attr:`text` before ``index`` end in the source."""
        if index <= 0:
            return 0
        run = bisect_right(self._runs(), index - 1) - 1
        if self._escape[run]:
            return self._source[run] + self._escape[run]
        return self._source[run] + index - self._runs()[run]


def _meant(match: re.Match[str]) -> str:
    code, byte, char = match.groups()
    if code is not None:
        return chr(int(code, 16))
    if byte is not None:
        return chr(int(byte, 16))
    return _NAMED.get(char, char)
