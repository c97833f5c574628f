"""How many results sooner than ``sameResultLimit`` a repeated call is stopped, by what it returned.

Some answers say all a repeat could bring after fewer of them: a file tool's error (an edit the
linter rejected, resent word for word, gets the same rejection), a line the shell could not parse,
an answer settled by the call alone, a change made again with the same report (it changed nothing
the second time). Others (a failure, a complaint of the shell, no output, the same data asked
again right after itself, ``answers_data``) leave the agent nothing new to read. Pure: an answer
in, a number out.
"""

from __future__ import annotations

import functools
import re

from breaker.core.reading import FETCH_MARKERS, READ_ONLY_TOOLS, SHELL_TOOLS, lists_items, says_nothing

#: How many results sooner than the limit a call is stopped at most: a file tool's error.
SOONEST = 2

#: A line the shell itself printed about the command (bash, dash, zsh): ``bash: line 1: pwd: -p:
#: invalid option``, ``/bin/bash: -c: line 1: syntax error ...``, ``sh: 1: foo: not found``.
_SHELL_COMPLAINT = re.compile(r"^[\w/.-]{0,64}sh: (?:-c: )?(?:line \d{1,9}: |\d{1,9}: )?\S", re.MULTILINE)

#: The shell could not parse the command line (bash's ``-c: line N: syntax error ...`` and
#: ``unexpected EOF while looking for matching``, whatever it names itself; dash's ``Syntax error``):
#: the same line fails the same way whatever the workspace holds.
_PARSE_ERROR = re.compile(
    r"^[^\n]{0,256}?: (?:-c: )?line \d{1,9}: (?:syntax error|unexpected EOF while looking for matching)"
    r"|^[\w/.-]{0,64}sh: \d{1,9}: Syntax error",
    re.MULTILINE,
)


#: How much of a shell's output is read for its complaints.
_SHELL_HEAD_CHARS = 4096
#: A literal part of every match of each pattern above: a text without one is not searched (a
#: substring test costs a fraction of a multiline search over a long output).
_SHELL_COMPLAINT_PART = "sh: "
_PARSE_ERROR_PARTS = ("syntax error", "unexpected EOF while looking for matching", "Syntax error")


def stops_sooner(
    failure: str | None, tool: str, text: str, settled: bool = False, silent: bool | None = None
) -> int:
    """How many results sooner than ``limit`` the same call is stopped, by what it returned: 2 for
    a file tool's error (an edit the linter rejected), a command line the shell could not parse
    and a ``settled`` call's answer (each comes back the same every time), 1 for any other
    failure, a complaint of the shell or no output at all (nothing the agent can read anything new
    from), else 0. ``silent``: ``says_nothing(text)``, when the caller read it already."""
    if failure == "tool" or settled:
        return SOONEST
    shell = tool.lower() in SHELL_TOOLS
    head = text[:_SHELL_HEAD_CHARS] if shell else ""
    if shell and any(part in head for part in _PARSE_ERROR_PARTS) and _PARSE_ERROR.search(head) is not None:
        return SOONEST
    if failure is not None or (says_nothing(text) if silent is None else silent):
        return 1
    if shell and _SHELL_COMPLAINT_PART in head and _SHELL_COMPLAINT.search(head) is not None:
        return 1
    return 0


def worst_sooner(sooner: int) -> int:
    """How many results sooner than the limit a key could yet be stopped: a rerun after other
    calls, or a file tool's error, is stopped ``SOONEST``."""
    return sooner if sooner > SOONEST else SOONEST


def answers_data(tool: str, failure: str | None, text: str) -> bool:
    """Whether a call answered with data its repeat right after itself cannot change: it did not
    fail, it is neither a shell command nor a fetch (either may wait on what changes outside the
    agent: a build, a server), and it is one of dsh's tools that only read (a file, a search of the
    files) or its answer is a listing (``reading.lists_items``: the items there are, judged by the
    answer and not by the tool's name). Asked again right after itself with the same answer 3
    times, it is not asked a 4th: a poll whose answer moves (in content or only in a time) is left
    to the caps, and a status or a line of text keeps the full ``sameResultLimit``."""
    if failure is not None:
        return False
    by_name = _answers_data_by_name(tool)
    return lists_items(text) if by_name is None else by_name


@functools.lru_cache(maxsize=256)
def _answers_data_by_name(tool: str) -> bool | None:
    """``answers_data`` as the tool's name alone tells it (None: its answer tells). Cached by name:
    it is asked of every result, of a handful of tools."""
    name = tool.lower()
    if name in SHELL_TOOLS or any(marker in name for marker in FETCH_MARKERS):
        return False
    return True if name in READ_ONLY_TOOLS else None
