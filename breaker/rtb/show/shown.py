"""How rtb shows what came from a log: every text a report prints that a model, a tool or a user
wrote (arguments, commands, fingerprint keys, denial texts, prompts, paths) goes through here, and
from here through the denial's own redaction (``breaker.core.wording.redaction``): a report in any format
(table, markdown, JSON, HTML) never prints a secret the denial would not quote, nor a control or
invisible character.

Also the small renderings every format shares: a call's arguments in a few words, a session's
short id, a start time, a count against its limit and what it counted.
"""

from __future__ import annotations

import functools
import json
from datetime import datetime, timezone

from breaker.core.judging.verdicts import Reached
from breaker.core.reading.shell import SHELL_TOOLS
from breaker.core.wording.messages import format_number
from breaker.core.wording.redaction import quotable, quotable_inline

#: The most of one text any report examines and prints whole (a command, a denial); past it the
#: text is cut and says so.
BLOCK_LIMIT = 20_000
#: The most of a one-line text examined before it is cut to a cell's width.
INLINE_LIMIT = 2_000
#: The argument a tool's call is best named by, in order of preference.
_NAMING_ARGUMENTS = ("command", "cmd", "file_path", "path", "url", "pattern", "query", "glob", "prompt")


def inline(text: str, width: int | None = None) -> str:
    """``text`` redacted and on one line, cut to ``width`` characters with "…" when longer."""
    shown = _inline(text)
    if width is not None and len(shown) > width:
        return shown[: max(width - 1, 0)] + "\u2026"
    return shown


@functools.lru_cache(maxsize=8192)
def _inline(text: str) -> str:
    # Cached: a report shows the same keys, tools and commands again and again (a loop repeats).
    return quotable_inline(text, INLINE_LIMIT)


@functools.lru_cache(maxsize=1024)
def block(text: str) -> str:
    """``text`` redacted, its lines kept (only ``\\n`` between them), cut at ``BLOCK_LIMIT``."""
    return quotable(text, BLOCK_LIMIT)


def command(tool: str, arguments: object) -> str | None:
    """The shell command a shell tool's call ran, redacted; None for any other call."""
    if tool.lower() in SHELL_TOOLS and isinstance(arguments, dict):
        text = arguments.get("command")
        if isinstance(text, str):
            return block(text)
    return None


def arguments_text(arguments: object) -> str:
    """A call's arguments as compact JSON, redacted (bounded: long ones are cut and say so)."""
    try:
        text = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        text = repr(arguments)
    return block(text)


def short_arguments(arguments: object, width: int | None = None) -> str:
    """A call's arguments in a few words: the one that names it (``command``, ``file_path``,
    ``url`` …) when there is one, else the compact JSON; redacted, on one line."""
    if isinstance(arguments, dict):
        for name in _NAMING_ARGUMENTS:
            value = arguments.get(name)
            if isinstance(value, str) and value:
                return inline(value, width)
    try:
        text = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        text = repr(arguments)
    return inline(text[: INLINE_LIMIT * 2], width)


def short_id(session_id: str) -> str:
    """``session-<uuid>`` as the uuid's first 8 characters; any other id as it is (redacted)."""
    bare = session_id.removeprefix("session-")
    if len(bare) == 36 and bare.count("-") == 4:
        return bare[:8]
    return inline(bare, 24)


def matches(session_id: str, wanted: str) -> bool:
    """Whether ``wanted`` names ``session_id``: the id, or the start of it, with or without
    ``session-``."""
    bare = session_id.removeprefix("session-")
    want = wanted.removeprefix("session-")
    return bool(want) and (bare.startswith(want) or session_id == wanted)


def started(milliseconds: float | None) -> str:
    """A start time as ``2026-12-03 14:05`` (UTC), or ``-`` when the log does not say."""
    if milliseconds is None:
        return "-"
    try:
        moment = datetime.fromtimestamp(milliseconds / 1000, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return "-"
    return moment.strftime("%Y-%m-%d %H:%M")


def started_iso(milliseconds: float | None) -> str | None:
    """A start time in ISO 8601 (UTC, to the second), or None."""
    if milliseconds is None:
        return None
    try:
        moment = datetime.fromtimestamp(milliseconds / 1000, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def number(value: float) -> int | float:
    """A cap or count for JSON: an integer when it is one."""
    return int(value) if float(value).is_integer() else value


def figure(count: Reached) -> str:
    """A count against its limit, as every format prints it: ``3/5``."""
    return f"{count.count}/{format_number(count.limit)}"


def counted(count: Reached, width: int | None = None) -> str:
    """What a count was of, redacted: a cap's fingerprint key, any other rule's key after the
    rule's name (``failLimit: cmd:curl:…``, ``sameResultLimit: cycle``)."""
    return inline(count.key if count.rule == "limits" else f"{count.rule}: {count.key}", width)
