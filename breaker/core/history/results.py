"""The results a denial may quote: one agent's allowed calls still in its window, and its denials.

A result is kept raw, cut to what quoting it reads (its quoted prefix, and its length): a denial
quotes one now and then, and only then is it redacted and neutralised, by the quoting rule the
wording stage hands in (``wording.redaction.quotable``). The result of a denied
call is the denial itself and is never kept; a harness may reuse one call id for many calls, so
the allowed call's result under that id stays quotable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from breaker.core.history.window import Window
from breaker.core.reading.sent import RESULT_TEXT_CHARS as RESULT_TEXT_CHARS

#: A result as kept: the prefix of it that quoting reads, and its whole length.
Kept = tuple[str, int]
#: How a kept result is made safe to quote: (prefix, limit, length) -> the quote.
Quote = Callable[[str, int, int], str]


class Results:
    """Call id -> its kept result (None until it arrives), for allowed calls in the window; the
    call ids whose latest call was denied (their next result is the denial)."""

    __slots__ = ("_quote", "_quoted_last", "denied", "kept")

    def __init__(self, quote: Quote) -> None:
        self._quote = quote
        self.kept: dict[str, Kept | None] = {}
        self.denied: set[str] = set()
        # The last result quoted (the very kept tuple), at what limit, and its quote: a loop's
        # denials quote one result again and again, and redacting it is most of a denial's cost.
        self._quoted_last: tuple[Kept, int, str] | None = None

    def allowed(self, call_id: str) -> None:
        self.denied.discard(call_id)
        self.kept[call_id] = None

    def arrived(self, call_id: str) -> bool:
        """A result arrived. False when it is a denial's (nothing to keep)."""
        if call_id in self.denied:
            self.denied.discard(call_id)
            return False
        return True

    def awaits(self, call_id: str) -> bool:
        """Whether the result of ``call_id`` is kept when it arrives (an allowed call in the window)."""
        return call_id in self.kept

    def keep(self, call_id: str, prefix: str, length: int) -> None:
        self.kept[call_id] = (prefix, length)

    def left(self, call_id: str) -> None:
        """No entry of ``call_id`` is in the window any more."""
        self.kept.pop(call_id, None)
        self.denied.discard(call_id)

    def previous(self, window: Window, keys: Iterable[str], preview_chars: int) -> str | None:
        """The result of the latest allowed call sharing one of ``keys``, else the agent's latest
        result, made quotable."""
        latest: Kept | None = None
        for call_id, shares_a_key in window.newest_first(keys):
            result = self.kept.get(call_id)
            if result is None:
                continue
            if shares_a_key:
                latest = result
                break
            if latest is None:
                latest = result
        return self._quoted(latest, preview_chars)

    def of(self, call_id: str, preview_chars: int) -> str | None:
        """The result of ``call_id``, made quotable (None: not kept)."""
        return self._quoted(self.kept.get(call_id), preview_chars)

    def clear(self) -> None:
        self.kept.clear()
        self.denied.clear()
        self._quoted_last = None

    def _quoted(self, kept: Kept | None, preview_chars: int) -> str | None:
        if kept is None:
            return None
        last = self._quoted_last
        if last is not None and last[0] is kept and last[1] == preview_chars:
            return last[2]
        quote = self._quote(kept[0], preview_chars, kept[1])
        self._quoted_last = (kept, preview_chars, quote)
        return quote
