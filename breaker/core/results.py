"""The results a denial may quote: one agent's allowed calls still in its window, and its denials.

A result is kept raw, cut to what quoting it reads (its quoted prefix, and its length): a denial
quotes one now and then, and only then is it redacted and neutralised. The result of a denied
call is the denial itself and is never kept; a harness may reuse one call id for many calls, so
the allowed call's result under that id stays quotable.
"""

from __future__ import annotations

from collections.abc import Iterable

from breaker.core import messages
from breaker.core.window import Window

#: A result is quoted in a denial only in part: the shim sends the worker this many characters of
#: it at most (the configure reply tells it), and ``rtb replay`` cuts a logged result the same way.
RESULT_TEXT_CHARS = 64 * 1024


class Results:
    """Call id -> its kept result (None until it arrives), for allowed calls in the window; the
    call ids whose latest call was denied (their next result is the denial)."""

    __slots__ = ("denied", "kept")

    def __init__(self) -> None:
        self.kept: dict[str, tuple[str, int] | None] = {}
        self.denied: set[str] = set()

    def allowed(self, call_id: str) -> None:
        self.denied.discard(call_id)
        self.kept[call_id] = None

    def arrived(self, call_id: str, text: str, preview_chars: int) -> bool:
        """A result arrived: kept when its call was allowed. False when it is a denial's."""
        if call_id in self.denied:
            self.denied.discard(call_id)
            return False
        if call_id in self.kept:
            self.kept[call_id] = (messages.quoted_prefix(text, preview_chars), len(text))
        return True

    def left(self, call_id: str) -> None:
        """No entry of ``call_id`` is in the window any more."""
        self.kept.pop(call_id, None)
        self.denied.discard(call_id)

    def previous(self, window: Window, keys: Iterable[str], preview_chars: int) -> str | None:
        """The result of the latest allowed call sharing one of ``keys``, else the agent's latest
        result, made quotable."""
        latest: tuple[str, int] | None = None
        for call_id, shares_a_key in window.newest_first(keys):
            result = self.kept.get(call_id)
            if result is None:
                continue
            if shares_a_key:
                latest = result
                break
            if latest is None:
                latest = result
        return quotable(latest, preview_chars)

    def of(self, call_id: str, preview_chars: int) -> str | None:
        """The result of ``call_id``, made quotable (None: not kept)."""
        return quotable(self.kept.get(call_id), preview_chars)

    def clear(self) -> None:
        self.kept.clear()
        self.denied.clear()


def quotable(kept: tuple[str, int] | None, preview_chars: int) -> str | None:
    """A result as kept (its quoted prefix and length), made safe to quote."""
    if kept is None:
        return None
    prefix, length = kept
    return messages.quotable(prefix, preview_chars, length)
