"""What the shim sends of a call and of its result, and what in a result it looks for: the limits
and marks the worker's answer to ``configure`` tells it. Plain values, each defined here once for
its reader (``canonical``, ``outcomes``, ``news``, ``history.results``), with none of the reading
stage's patterns or digests: the worker answers ``configure`` while dsh boots, before it imports
them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

#: A text at least this long is written by its head and a digest of the whole
#: (``canonical.condensed``); a call holding one asks for its stand-in.
CONDENSED_CHARS = 1 << 16

#: A result is quoted in a denial only in part: the shim sends the worker this many characters of
#: it at most (the configure reply tells it), and ``rtb replay`` cuts a logged result the same way.
RESULT_TEXT_CHARS = 64 * 1024

#: The scalar fields of a tool's structured value that ``outcomes.judge`` reads, and how much of a
#: text field it keeps: the shim copies exactly these (the configure reply tells it), nothing else
#: of the value crosses the pipe.
FACT_FIELDS = ("kind", "exitCode", "signal", "timedOut", "aborted", "statusCode", "status")
FACT_TEXT_CHARS = 64

#: What the conditions of passes look for (``news``): a text in which ``outcomes._from_shell_text``
#: or ``outcomes.failure_shape`` find a failure holds one of the marks, starts with one of the
#: starts, or (a JSON object with an ``error`` key) has ``JSON_START`` within its first
#: ``JSON_HEAD`` characters and one of ``JSON_ERROR_MARKS`` anywhere (the key's name, or an escape
#: that may spell it); a text ``outcomes.FETCHED`` rewrites starts with ``FETCHED_START``.
FAILURE_MARKS = (
    "curl: (",
    "Traceback (most recent call last):",
    "HTTP Error ",
    "[exit code: ",
    "[killed by signal:",
)
FAILURE_STARTS = ("Error",)
JSON_START, JSON_HEAD = "{", 64
JSON_ERROR_MARKS = ("error", "\\u")
FETCHED_START = "Fetched "

#: The statuses a web tool's result may carry and stay news (``judge``: 100-399 succeeded).
_FINE_STATUSES = tuple(range(100, 400))


class Breaks(NamedTuple):
    """What in a result breaks every condition (the configure reply's ``breaks``; ``news``)."""

    marks: tuple[str, ...]  # a text holding one anywhere
    prefixes: tuple[str, ...]  # a text starting with one
    # a text holding the string in its first N UTF-16 units and one of the marks anywhere
    heads: tuple[tuple[str, int, tuple[str, ...]], ...]
    facts: Mapping[str, tuple[object, ...]]  # field -> the values that leave it unbroken


BREAKS = Breaks(
    marks=FAILURE_MARKS,
    prefixes=(*FAILURE_STARTS, FETCHED_START),
    heads=((JSON_START, JSON_HEAD, JSON_ERROR_MARKS),),
    facts={
        "isError": (False,),
        "exitCode": (0,),
        "signal": ("",),
        "timedOut": (False,),
        "statusCode": _FINE_STATUSES,
        "status": _FINE_STATUSES,
    },
)
