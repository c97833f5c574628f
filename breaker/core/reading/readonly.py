"""Which tools only read: a call of any other tool may change what later calls read.

The breaker knows dsh's tools. Those that only read (a file, a listing, a search, the web) change
nothing; a shell line is read command by command (``history.identity``): a command that runs code
it is given (``runs_code``: a script, a ``-c`` text, a heredoc) or a build may write anything, and
what it wrote is told by its answer. Any other tool, one the
breaker does not know (a function of an API, a tool of an MCP server), may change the state later
calls read: whether it did is told by its answer (``history.identity``, ``history.progress``),
which may report a state (``reports_state``) or list items (``lists_items``).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence

from breaker.core.reading.findings import is_file
from breaker.core.reading.shell import SHELL_TOOLS, ShellScript

#: dsh's tools that only read.
READ_ONLY_TOOLS = frozenset({"read", "grep", "glob", "web_fetch", "web_search", "notebook_read"})
#: Name fragments of tools that fetch from the network: what they read is remote, never changed here.
FETCH_MARKERS = ("fetch", "browse", "web_")


@functools.lru_cache(maxsize=256)
def may_change(tool: str) -> bool:
    """Whether a call of ``tool`` (not a shell: its command line says) may change what later calls
    read. Cached by name: it is asked two or three times a call, of a handful of tools."""
    name = tool.lower()
    if name in READ_ONLY_TOOLS or name in SHELL_TOOLS:
        return False
    return not any(marker in name for marker in FETCH_MARKERS)


#: Programs that run code they are given (a script, a ``-c`` or ``-e`` text, a heredoc or a pipe on
#: their input), named without a version (``python3.11`` is ``python``), and programs that build
#: or edit as their inputs tell them: what they write cannot be read from the command line.
CODE_RUNNERS = frozenset(
    {"python", "pypy", "node", "deno", "bun", "ruby", "perl", "php", "lua", "julia", "rscript", "tclsh"}
)
SHELL_RUNNERS = frozenset({"sh", "bash", "dash", "zsh", "ksh"})
BUILDERS = frozenset({"make", "gmake", "ninja", "ex", "ed"})
#: Package tools that run a project's code or build it with a subcommand (empty: any use of them).
RUNNING_SUBCOMMANDS: dict[str, frozenset[str]] = {
    tool: frozenset(subcommands.split())
    for tool, subcommands in {
        "npm": "run run-script exec start",
        "pnpm": "run exec start",
        "yarn": "run exec start",
        "npx": "",
        "pnpx": "",
        "bunx": "",
        "cargo": "run build",
        "go": "run build generate",
    }.items()
}
#: Options that only ask a program about itself: with nothing else it runs no code.
_ONLY_ASKS = frozenset({"--version", "-V", "--help", "-h"})


def may_run(program: str) -> bool:
    """Whether ``program`` (a command's verb) is one that may run code or a build (``runs_code``)."""
    name = program.lower().rstrip("0123456789.")
    return name in CODE_RUNNERS or name in SHELL_RUNNERS or name in BUILDERS or name in RUNNING_SUBCOMMANDS


def runs_code(words: Sequence[str]) -> bool:
    """Whether one simple command (its program first, wrappers removed) runs code it is given, or
    a build: a script or module (``python x.py``, ``python -m build``), a text (``python3 -c``,
    ``node -e``), its input (``python3 - <<EOF``), ``make``, a project's script or build
    (``npm run build``, ``npx tsc``, ``cargo run``, ``go generate``). A shell given a ``-c`` text runs what
    the text says: it is read as a command line of its own (``shell_text``), not as code."""
    if not words:
        return False
    program = words[0].rsplit("/", 1)[-1].lower().rstrip("0123456789.")
    if program in BUILDERS:
        return True
    subcommands = RUNNING_SUBCOMMANDS.get(program)
    if subcommands is not None:
        return not subcommands or (len(words) > 1 and words[1] in subcommands)
    if program in SHELL_RUNNERS:
        return shell_text(words) is None and not _only_asks(words[1:])
    return program in CODE_RUNNERS and not _only_asks(words[1:])


def shell_text(words: Sequence[str]) -> str | None:
    """The command line a shell is given to run (``bash -c TEXT``, ``sh -lc TEXT``), else None."""
    if not words or words[0].rsplit("/", 1)[-1] not in SHELL_RUNNERS:
        return None
    for at, word in enumerate(words[1:-1], start=1):
        if not word.startswith("-") or word.startswith("--"):
            return None
        if "c" in word:
            return words[at + 1]
    return None


#: Redirections that write a file (an output, an error stream, both), not a descriptor's copy.
_FILE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "1>", "1>>", "1>|", "2>", "2>>", "2>|"})


def redirects_into_a_file(script: ShellScript) -> bool:
    """Whether a command line writes a file through a redirection (``> out``, ``2>> log``)."""
    return any(
        operator in _FILE_REDIRECTS and is_file(target)
        for part in script.parts
        if not isinstance(part, str)
        for operator, target in part.redirects
    )


def _only_asks(arguments: Sequence[str]) -> bool:
    return bool(arguments) and all(word in _ONLY_ASKS for word in arguments)


#: An answer this long or longer is data, not a report of a state.
_STATE_CHARS = 512
_NOTHING = frozenset({"", "None", "null", "{}", "true", "ok", "OK"})


def reports_state(text: str) -> bool:
    """Whether an answer reads as a report of what a call did, not data it found: nothing at all
    (``None``, ``{}``: the call was made for its effect) or a short object of plain values (a
    status, the state it set). A list of matches, a file's text or a long answer is data."""
    stripped = text.strip()
    if stripped in _NOTHING:
        return True
    if len(stripped) >= _STATE_CHARS or not stripped.startswith("{"):
        return False
    try:
        value = json.loads(stripped)
    except ValueError:
        return False
    return isinstance(value, dict) and all(
        item is None or isinstance(item, (bool, int, float)) or (isinstance(item, str) and "\n" not in item)
        for item in value.values()
    )


#: An answer longer than this is not parsed to tell whether it is a listing.
_LISTING_CHARS = 16384


def lists_items(text: str) -> bool:
    """Whether an answer is a listing: a JSON array, or a JSON object one of whose values is an
    array (the items there are: files, matches, rows), not a report of what a call did."""
    stripped = text.strip()
    if len(stripped) > _LISTING_CHARS or stripped[:1] not in ("{", "["):
        return False
    try:
        value = json.loads(stripped)
    except ValueError:
        return False
    if isinstance(value, dict):
        return any(isinstance(item, list) for item in value.values())
    return isinstance(value, list)
