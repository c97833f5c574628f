"""The shell lexer: a command line split into simple commands, operators and heredoc bodies.

Only as much of POSIX shell as finding commands needs: words with their quoting removed,
redirections, operators, comments and heredocs. Substitutions stay verbatim inside their word.
Linear-time and total on any text: no regex that can backtrack, no recursion on input depth.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from breaker.core.reading.names import COMMAND_ARGS as COMMAND_ARGS
from breaker.core.reading.names import SHELL_TOOLS as SHELL_TOOLS

#: Commands longer than this are lexed up to here; the rest is only scanned for URLs.
MAX_LEXED_CHARS = 1 << 16

_BLANK_CHARS = " \t\r\f\v"
#: Characters the lexer must look at before reading a word.
_LEXER_SPECIALS = _BLANK_CHARS + "\n#\\<>|&;()"
#: Characters that end an unquoted word.
_WORD_ENDS = _BLANK_CHARS + "\n|&;<>()"
#: Characters after which a run of digits is a word, not the fd of a redirection.
_PLAIN_WORD_ENDS = _BLANK_CHARS + "\n|&;()"
_PLAIN = re.compile(r"[^ \t\n\r\f\v'\"\\$`|&;<>()]+")
#: The characters that end a bare word (the complement of ``_PLAIN``).
_PLAIN_STOPS = _BLANK_CHARS + "\n'\"\\$`|&;<>()"
_PLAIN_STOP_TABLE = bytes(0 if chr(byte) in _PLAIN_STOPS else 1 for byte in range(256))
#: Text at least this long finds bare word ends through a table of stops (see ``_plain_stops``).
_STOPS_MIN_CHARS = 2048
_OPERATOR = re.compile(r"&&|\|\||;;&?|;&|\|&|[|&;()]")
_REDIRECT = re.compile(r"&>>?|<<<|<<-?|<>|<&|>>|>\||>&|[<>]")
_NESTED_STOPS = {
    '"': re.compile(r'[\\"`$]'),
    "`": re.compile(r"[\\`]"),
    ")": re.compile(r"[\\()'\"`]"),
}
_DOUBLE_QUOTE_ESCAPE = re.compile(r'\\([\\"$`\n])')


@dataclass(slots=True)
class SimpleCommand:
    """One simple command: its words (quotes removed) and its redirections (operator, target)."""

    words: list[str] = field(default_factory=list)
    redirects: list[tuple[str, str]] = field(default_factory=list)
    heredocs: list[int] = field(default_factory=list)  # which of the script's heredoc bodies it reads


#: A heredoc opened on the current line: its delimiter, whether tabs are stripped (``<<-``), and
#: the simple command that reads it.
_Heredoc = tuple[str, bool, SimpleCommand]


@dataclass(slots=True)
class ShellScript:
    """A lexed command line: simple commands and the operators between them, and heredoc bodies."""

    parts: list[SimpleCommand | str]
    heredocs: list[str]


#: The command lines lexed last and their scripts, oldest first: one call's command line is read
#: by several stages (its fingerprints, its workspace effect, its target, whether its answer is
#: settled), each lexing it, so those after the first find it here. A script is read, never
#: changed, by whoever is given it.
_LEXED: dict[str, ShellScript] = {}
_LEXED_KEPT = 2


def lex_shell(text: str) -> ShellScript:
    """Split a POSIX-ish command line into simple commands; linear, and total on any text.

    Substitutions (``$(…)``, backticks, ``${…}``) stay inside their word verbatim; comments are
    dropped; heredoc bodies are set aside as data. The script is shared: read it, never change it.
    """
    script = _LEXED.get(text)
    if script is None:
        script = _lex(text)
        _LEXED[text] = script
        if len(_LEXED) > _LEXED_KEPT:
            del _LEXED[next(iter(_LEXED))]
    return script


def _lex(text: str) -> ShellScript:
    parts: list[SimpleCommand | str] = []
    heredocs: list[str] = []
    pending_heredocs: list[_Heredoc] = []
    command = SimpleCommand()
    stops = _plain_stops(text)
    n = len(text)
    i = 0
    while i < n:
        char = text[i]
        if char not in _LEXER_SPECIALS:
            # Inlined common case: a bare word followed by a blank.
            if stops is None:
                plain = _PLAIN.match(text, i)
                end = i if plain is None else plain.end()
            else:
                end = stops.find(0, i)
                end = n if end < 0 else end
            if end > i and (end == n or text[end] in _PLAIN_WORD_ENDS):
                command.words.append(text[i:end])
                # The blank after it read with it: the next pass starts at the next word.
                i = end + 1 if end < n and text[end] == " " else end
            else:
                i = _lex_word(text, i, command, pending_heredocs)
        elif char in _BLANK_CHARS:
            i += 1
        elif char == "\n":
            command = _close(command, parts, ";")
            i = _read_heredoc_bodies(text, i + 1, pending_heredocs, heredocs)
        elif char == "#":
            newline = text.find("\n", i)
            i = n if newline < 0 else newline
        elif char == "\\" and text.startswith("\n", i + 1):
            i += 2
        elif char in "<>" and text.startswith("(", i + 1):  # process substitution: a word
            end, _ = _end_of_nested(text, i + 2, ")")
            command.words.append(text[i:end])
            i = end
        elif char in "<>" or (char == "&" and text.startswith(">", i + 1)):
            i = _read_redirect(text, i, "", command, pending_heredocs)
        elif char in "|&;()":
            operator = _OPERATOR.match(text, i)
            assert operator is not None
            command = _close(command, parts, operator.group())
            i = operator.end()
        else:
            i = _lex_word(text, i, command, pending_heredocs)
    _close(command, parts, "")
    return ShellScript(parts, heredocs)


def _plain_stops(text: str) -> bytes | None:
    """For long ASCII text, a byte per character, 0 where a bare word must stop (else None).

    Finding the end of a long bare word is then one ``bytes.find`` instead of a regex walk.
    """
    if len(text) < _STOPS_MIN_CHARS or not text.isascii():
        return None
    return text.encode("ascii").translate(_PLAIN_STOP_TABLE)


def _lex_word(text: str, i: int, command: SimpleCommand, pending_heredocs: list[_Heredoc]) -> int:
    """Add the word at ``i`` to ``command`` (or the redirection it is the fd of); where it ends."""
    word, end, quoted = _read_word(text, i)
    if end == i:  # unreachable by construction; guarantees progress regardless
        return i + 1
    if not quoted and word.isdigit() and word.isascii() and text.startswith(("<", ">"), end):
        return _read_redirect(text, end, word, command, pending_heredocs)
    command.words.append(word)
    return end


def _close(command: SimpleCommand, parts: list[SimpleCommand | str], operator: str) -> SimpleCommand:
    """End the current simple command at ``operator``; the command to fill next."""
    if command.words or command.redirects:
        parts.append(command)
        command = SimpleCommand()
    if operator:
        parts.append(operator)
    return command


def _read_redirect(
    text: str, i: int, fd: str, command: SimpleCommand, pending_heredocs: list[_Heredoc]
) -> int:
    operator = _REDIRECT.match(text, i)
    assert operator is not None
    i = operator.end()
    while i < len(text) and text[i] in _BLANK_CHARS:
        i += 1
    target, i, _ = _read_word(text, i)
    if operator.group() in ("<<", "<<-"):
        pending_heredocs.append((target, operator.group() == "<<-", command))
    command.redirects.append((fd + operator.group(), target))
    return i


def _read_heredoc_bodies(text: str, i: int, pending: list[_Heredoc], heredocs: list[str]) -> int:
    """Consume the bodies of the heredocs opened on the line that just ended."""
    n = len(text)
    for delimiter, strip_tabs, reader in pending:
        reader.heredocs.append(len(heredocs))
        start = i
        body_end = n
        if not strip_tabs:
            body_end, i = _find_delimiter_line(text, i, delimiter)
            heredocs.append(text[start:body_end].removesuffix("\n"))
            continue
        while i < n:
            newline = text.find("\n", i)
            line_end = n if newline < 0 else newline
            line = text[i:line_end]
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                body_end = i
                i = line_end + 1
                break
            i = line_end + 1
        heredocs.append(text[start:body_end].removesuffix("\n"))
    pending.clear()
    return i if i < n else n  # min(i, n): a call of min costs more than the comparison


def _find_delimiter_line(text: str, i: int, delimiter: str) -> tuple[int, int]:
    """Where the first line from ``i`` equal to ``delimiter`` starts, and the index after it."""
    n = len(text)
    marker = "\n" + delimiter
    line = i if text.startswith(delimiter, i) else text.find(marker, i) + 1 or -1
    while line >= 0:
        after = line + len(delimiter)
        if after >= n or text[after] == "\n":
            return line, after + 1 if after + 1 < n else n
        line = text.find(marker, line) + 1 or -1
    return n, n


def _read_word(text: str, i: int) -> tuple[str, int, bool]:
    """One word from ``i``: its value with quoting removed, where it ends, and whether it was quoted."""
    n = len(text)
    plain = _PLAIN.match(text, i)
    if plain is not None:  # the common case: one unquoted run
        end = plain.end()
        if end >= n or text[end] in _WORD_ENDS:
            return plain.group(), end, False
    elif text.startswith(("'", '"'), i):  # the next most common: one quoted run, nothing inside
        quote = text[i]
        close = text.find(quote, i + 1)
        after = close + 1
        if close > 0 and (after >= n or text[after] in _WORD_ENDS):
            inner = text[i + 1 : close]
            if quote == "'" or not ("\\" in inner or "$" in inner or "`" in inner):
                return inner, after, True
    parts: list[str] = []
    quoted = False
    while i < n:
        plain = _PLAIN.match(text, i)
        if plain is not None:
            parts.append(plain.group())
            i = plain.end()
            if i >= n:
                break
        char = text[i]
        if char == "'":
            quoted = True
            close = text.find("'", i + 1)
            end = n if close < 0 else close
            parts.append(text[i + 1 : end])
            i = end + 1
        elif char == '"':
            quoted = True
            end, closed = _end_of_nested(text, i + 1, '"')
            inner = text[i + 1 : end - 1 if closed else end]
            if "\\" in inner:
                inner = _DOUBLE_QUOTE_ESCAPE.sub(_unescape_in_double_quotes, inner)
            parts.append(inner)
            i = end
        elif char == "\\":
            if text.startswith("\n", i + 1):
                i += 2
            else:
                parts.append(text[i + 1 : i + 2])
                i += 2
        elif char == "$" and text.startswith("(", i + 1):
            end, _ = _end_of_nested(text, i + 2, ")")
            parts.append(text[i:end])
            i = end
        elif char == "$" and text.startswith("{", i + 1):
            close = text.find("}", i + 2)
            end = n if close < 0 else close + 1
            parts.append(text[i:end])
            i = end
        elif char == "$":
            parts.append("$")
            i += 1
        elif char == "`":
            end, _ = _end_of_nested(text, i + 1, "`")
            parts.append(text[i:end])
            i = end
        else:
            break
    return "".join(parts), i if i < n else n, quoted


def _unescape_in_double_quotes(match: re.Match[str]) -> str:
    escaped = match.group(1)
    return "" if escaped == "\n" else escaped


def _end_of_nested(text: str, i: int, closer: str) -> tuple[int, bool]:
    """Index just past the ``"``, backtick or ``)`` closing a construct opened before ``i``.

    Nesting (``"$(echo "`date`")"``) is followed with an explicit stack; returns (len, False) when
    the construct never closes.
    """
    n = len(text)
    stack = [closer]
    while stack:
        top = stack[-1]
        stop = _NESTED_STOPS[top].search(text, i)
        if stop is None:
            return n, False
        i = stop.start()
        char = text[i]
        if char == "\\":
            i += 2
            continue
        i += 1
        if top == '"':
            if char == '"':
                stack.pop()
            elif char == "`":
                stack.append("`")
            elif char == "$" and text.startswith("(", i):
                stack.append(")")
                i += 1
        elif top == "`" or char == ")":
            stack.pop()
        elif char == "(":
            stack.append(")")
        elif char == "'":
            close = text.find("'", i)
            if close < 0:
                return n, False
            i = close + 1
        else:
            stack.append(char)
    return i, True
