"""Calls whose answer is settled: a command line that only transforms text written in it.

``echo "hello world" | sed -e 's/^ *//'`` answers the same every time it runs, whatever the
workspace, the clock or the network hold: its output depends on nothing but its own text. Such a
call brings nothing new once its answer has come back the same a few times, so the no-progress
rules (``progress``) stop it one result sooner than a call whose answer could change, as a status
query's can.

Settled, read conservatively: a pipeline whose first stage prints text computed from its own
arguments alone (``echo``, ``printf``, ``seq``, ``expr``; ``cal`` given its month and year as
numbers), alone or into text filters only (``sed`` not in place, ``awk``, ``tr``, ``cut``,
``grep``, ``sort``, ..., none given a file of its own to read or write), with no redirection, no
other operator, and nothing the shell would expand outside single quotes (no ``$``, backquote,
glob or ``~``; a ``$`` that closes double quotes, as in ``grep -v "^$"``, is only a dollar sign).
Pure: text in, a yes or no out.
"""

from __future__ import annotations

from breaker.core.history import text_argument
from breaker.core.reading import COMMAND_ARGS, SHELL_TOOLS, SimpleCommand, ToolCall, lex_shell

#: Longer command lines are not examined: they are not settled.
MAX_CHARS = 1024
#: What a settled pipeline starts with: programs that print what their arguments alone make.
LITERAL_SOURCES = frozenset({"echo", "printf", "seq", "expr"})
#: Programs that print the same only when every argument is a number (``cal 12 2120``; a bare
#: ``cal`` or one with options shows the current month, which the clock decides).
NUMERIC_SOURCES = frozenset({"cal"})
_SOURCE_PREFIXES = tuple(LITERAL_SOURCES | NUMERIC_SOURCES)
#: What it may send that text through: programs that only transform their input into output.
TEXT_FILTERS = frozenset(
    {
        "awk", "base64", "column", "cut", "egrep", "expand", "fgrep", "fmt", "fold", "gawk", "grep",
        "head", "jq", "mawk", "md5sum", "nl", "od", "paste", "rev", "sed", "sha1sum", "sha256sum",
        "sort", "tac", "tail", "tr", "unexpand", "uniq", "wc", "xxd",
    }
)  # fmt: skip
#: The short options (letters) and long ones (prefixes) with which a filter reads or writes files
#: of its own: a script or patterns from a file, an edit in place, an output file.
_FILE_OPTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "sed": ("if", ("--in-place", "--file")),
    "awk": ("fi", ("--file", "--include")),
    "gawk": ("fi", ("--file", "--include")),
    "mawk": ("f", ()),
    "grep": ("f", ("--file",)),
    "egrep": ("f", ("--file",)),
    "fgrep": ("f", ("--file",)),
    "sort": ("o", ("--output",)),
}
#: Characters the shell would expand, or that redirect, outside single quotes.
_EXPANDING = frozenset("$`<>*?[~{")
_EXPANDING_IN_DOUBLE_QUOTES = frozenset("$`")


def is_settled(call: ToolCall) -> bool:
    """Whether ``call`` is a shell command line whose answer depends only on its own text."""
    if call.name.lower() not in SHELL_TOOLS or not isinstance(call.arguments, dict):
        return False
    command = text_argument(call.arguments, COMMAND_ARGS)
    return command is not None and settled_command(command)


def settled_command(command: str) -> bool:
    """Whether the command line ``command`` only transforms literal text it writes itself."""
    # The first word must be a literal source: most commands are ruled out before any scan.
    if len(command) > MAX_CHARS or not command.lstrip().startswith(_SOURCE_PREFIXES) or not _literal(command):
        return False
    script = lex_shell(command)
    if script.heredocs or not script.parts:
        return False
    stages = script.parts[0::2]
    operators = script.parts[1::2]
    if any(operator != "|" for operator in operators) or len(stages) != len(operators) + 1:
        return False
    programs = [_program(stage) for stage in stages]
    return _source(stages[0], programs[0]) and all(program in TEXT_FILTERS for program in programs[1:])


def _source(stage: SimpleCommand | str, program: str) -> bool:
    """Whether the first stage prints what its own arguments alone make."""
    if program in LITERAL_SOURCES:
        return True
    if program not in NUMERIC_SOURCES or isinstance(stage, str):
        return False
    arguments = stage.words[1:]
    return bool(arguments) and all(word.isdecimal() for word in arguments)


def _program(stage: SimpleCommand | str) -> str:
    """The program of one pipeline stage, "" when it has none, redirects or touches files."""
    if isinstance(stage, str) or not stage.words or stage.redirects:
        return ""
    program = stage.words[0]
    letters, long_options = _FILE_OPTIONS.get(program, ("", ()))
    for word in stage.words[1:]:
        if word.startswith("--") and word.startswith(long_options):
            return ""
        if word.startswith("-") and not word.startswith("--") and any(letter in word for letter in letters):
            return ""
    return program


def _literal(command: str) -> bool:
    """No expansion and no redirection anywhere in ``command``, quoting read as the shell reads it."""
    quote = ""
    escaped = False
    for at, char in enumerate(command):
        following = command[at + 1 : at + 2]
        if escaped:
            escaped = False
        elif quote == "'":
            quote = "" if char == "'" else quote
        elif quote == '"':
            if char in _EXPANDING_IN_DOUBLE_QUOTES and not (char == "$" and following == '"'):
                return False
            escaped = char == "\\"
            quote = "" if char == '"' else quote
        elif char in "'\"":
            quote = char
        elif char == "\\":
            escaped = True
        elif char in _EXPANDING:
            return False
    return quote == ""
