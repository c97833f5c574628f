"""Calls whose answer is settled: a command line that only transforms text written in it.

``echo "hello world" | sed -e 's/^ *//'`` answers the same every time it runs, whatever the
workspace, the clock or the network hold: its output depends on nothing but its own text. Such a
call brings nothing new once its answer has come back the same a few times, so the no-progress
rules (``progress``) stop it one result sooner than a call whose answer could change, as a status
query's can.

Settled, read conservatively: a pipeline whose first stage prints text computed from its own
arguments alone (``echo``, ``printf``, ``seq``, ``expr``; ``cal`` given its month and year as
numbers; not bash's ``printf`` with ``%(...)T``, the time), alone or into text filters only
(``sed``, ``awk``, ``tr``, ``cut``, ``grep``, ``sort``, ...), each read by what it allows
(``TEXT_FILTERS``): no file of its own to read or write, no option that reads, writes, recurses
or shuffles, no script that reaches a file, a program, the environment or the clock (sed's ``r``,
``w``, ``e``; awk's ``getline``, ``system``, ``ENVIRON``, ``rand``; jq's ``now``, ``env``), with
no redirection, no other operator, and nothing the shell would expand outside single quotes
(no ``$``, backquote, glob or ``~``; a ``$`` that closes double quotes, as in ``grep -v "^$"``,
is only a dollar sign).
Pure: text in, a yes or no out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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


@dataclass(frozen=True)
class _Filter:
    """How a text filter's words are read. Only what is listed passes: any other option (one that
    reads, writes, runs, recurses or draws a random number) or any other operand (a file of its
    own to read) makes the call unsettled."""

    flags: str = ""  # short options that take no value
    valued: str = ""  # short options that take a value (the rest of the word, else the next word)
    texts: int = 0  # leading operands that are text (a script, a pattern, sets), never a file
    scripts: str = ""  # valued options whose value is the script: the operands are then files
    checked: str = ""  # valued options whose value is read by ``pure`` as a script is
    long: frozenset[str] = frozenset()  # long options allowed (exactly: GNU takes abbreviations)
    pure: Callable[[str], bool] | None = None  # whether a script stays within the text it is given


#: Words of an awk program through which it reads a file, the environment, the clock or a program's
#: output, or a random number (mawk seeds ``rand`` from the clock), or reaches them by name.
_AWK_REACHES = ("system", "getline", "ENVIRON", "ARGV", "ARGC", "rand", "time", "PROCINFO", "|", "@")
#: Words of a jq filter through which it reads the clock, the environment, a file or a module.
_JQ_REACHES = ("now", "env", "ENV", "input", "import", "include", "local", "module", "get_", "$__")
#: What a sed script may hold besides ``s`` and ``y`` commands and regular-expression addresses:
#: commands that print, delete, hold, exchange or quit (``r``, ``w``, ``e``, ``F``, branches and text
#: commands are not here), and the characters of line addresses.
_SED_PLAIN = frozenset("pdDnNgGhHxlqQzP=!{};, \t\n0123456789$~+")
_SED_SUBSTITUTE_FLAGS = frozenset("gpiImM0123456789")


def _pure_awk(program: str) -> bool:
    return not any(word in program for word in _AWK_REACHES)


def _pure_jq(program: str) -> bool:
    return not any(word in program for word in _JQ_REACHES)


def _pure_sed(script: str) -> bool:
    """A script of ``s`` and ``y`` commands (flags that neither write nor run: no ``w``, ``e``)
    and plain commands: nothing read from or written to a file, nothing run."""
    at = 0
    while at < len(script):
        char = script[at]
        if char in "sy" and at + 1 < len(script) and script[at + 1] not in "\\\n":
            at = _fields_end(script, at + 2, script[at + 1], 2)
            while at < len(script) and char == "s" and script[at] in _SED_SUBSTITUTE_FLAGS:
                at += 1
        elif char == "/":
            at = _fields_end(script, at + 1, "/", 1)
        elif char == "\\" and at + 1 < len(script):
            at = _fields_end(script, at + 2, script[at + 1], 1)
        elif char in _SED_PLAIN:
            at += 1
        else:
            return False
    return True


def _fields_end(script: str, at: int, delimiter: str, fields: int) -> int:
    """Where ``fields`` fields, each closed by ``delimiter`` (backslash escapes), end from ``at``."""
    while fields and at < len(script):
        if script[at] == "\\":
            at += 1
        elif script[at] == delimiter:
            fields -= 1
        at += 1
    return at


_GREP = _Filter(
    "icvwxoqsnhHbLlzaEFGPTZUy",
    "eABCm",
    1,
    "e",
    long=frozenset(
        {
            "--color",
            "--colour",
            "--ignore-case",
            "--invert-match",
            "--count",
            "--only-matching",
            "--extended-regexp",
            "--fixed-strings",
            "--word-regexp",
            "--line-number",
            "--quiet",
        }
    ),
)
_AWK = _Filter("", "Fv", 1, checked="v", pure=_pure_awk)
_SUMS = _Filter("btz")
#: What it may send that text through: programs that only transform their input into output, and
#: how each is read.
TEXT_FILTERS: dict[str, _Filter] = {
    "awk": _AWK, "gawk": _AWK, "mawk": _AWK,
    "base64": _Filter("di", "w"),
    "column": _Filter("tx", "sco"),
    "cut": _Filter("sz", "bcdf", long=frozenset({"--complement", "--output-delimiter"})),
    "grep": _GREP, "egrep": _GREP, "fgrep": _GREP,
    "expand": _Filter("i", "t"), "unexpand": _Filter("a", "t"),
    "fmt": _Filter("cstu", "wpg"),
    "fold": _Filter("bs", "w"),
    "head": _Filter("qvz0123456789", "nc"), "tail": _Filter("qvz0123456789", "nc"),
    "jq": _Filter("rjacnseSCMRt", "", 1, pure=_pure_jq,
                  long=frozenset({"--raw-output", "--compact-output", "--slurp", "--null-input",
                                  "--sort-keys", "--tab", "--join-output", "--raw-input", "--exit-status"})),
    "md5sum": _SUMS, "sha1sum": _SUMS, "sha256sum": _SUMS,
    "nl": _Filter("p", "bdfhilnsvw"),
    "od": _Filter("bcdfiloxsv", "AjNSt"),
    "paste": _Filter("sz", "d"),
    "rev": _Filter(),
    "sed": _Filter("nErsuz", "el", 1, "e", "e", frozenset({"--quiet", "--regexp-extended"}), _pure_sed),
    "sort": _Filter("bdfghiMnrsuVzcC", "ktS",
                    long=frozenset({"--numeric-sort", "--reverse", "--unique", "--human-numeric-sort"})),
    "tac": _Filter("br", "s"),
    "tr": _Filter("cdsCt", "", 2),
    "uniq": _Filter("cdDiuz", "fsw", long=frozenset({"--count", "--repeated", "--unique", "--ignore-case"})),
    "wc": _Filter("clmwL", long=frozenset({"--lines", "--words", "--chars", "--bytes"})),
    "xxd": _Filter("pirbuEeC", "cglos"),
}  # fmt: skip

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
    if any(isinstance(stage, str) or not stage.words or stage.redirects for stage in stages):
        return False
    first, *filters = (stage for stage in stages if isinstance(stage, SimpleCommand))
    return _source(first.words) and all(_transforms_only(stage.words) for stage in filters)


def _source(words: list[str]) -> bool:
    """Whether the first stage prints what its own arguments alone make."""
    program, arguments = words[0], words[1:]
    if program == "printf" and any("%(" in word for word in arguments):
        return False  # bash's printf: %(format)T prints the time
    if program in LITERAL_SOURCES:
        return True
    return program in NUMERIC_SOURCES and bool(arguments) and all(word.isdecimal() for word in arguments)


def _transforms_only(words: list[str]) -> bool:
    """Whether a filter stage's words, read as its ``_Filter`` says, only transform its input."""
    spec = TEXT_FILTERS.get(words[0])
    if spec is None:
        return False
    scripts: list[str] = []
    operands: list[str] = []
    scripted = False
    options = True
    at = 1
    while at < len(words):
        word = words[at]
        at += 1
        if not options or word == "-" or not word.startswith("-"):
            operands.append(word)
        elif word == "--":
            options = False
        elif word.startswith("--"):
            if word.partition("=")[0] not in spec.long:
                return False
        else:
            for index, letter in enumerate(word[1:], 2):
                if letter in spec.valued:
                    value = word[index:]
                    if not value and at < len(words):
                        value, at = words[at], at + 1
                    scripted = scripted or letter in spec.scripts
                    if letter in spec.scripts + spec.checked:
                        scripts.append(value)
                    break
                if letter not in spec.flags:
                    return False
    texts = 0 if scripted else spec.texts
    if any(operand != "-" for operand in operands[texts:]):
        return False  # a file of its own to read (or write)
    return spec.pure is None or all(spec.pure(text) for text in scripts + operands[:texts])


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
