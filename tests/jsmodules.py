"""What the shim's tests read from a JavaScript module's source: the modules it imports (static,
dynamic, re-exported, a worker thread's URL and a JSDoc type's ``import()``), and its functions with
the lines each spans, by a scanner that knows JS's comments, strings, template literals and regular
expression literals well enough for the shim's plain ESM."""

from __future__ import annotations

import re
from dataclasses import dataclass

KEYWORDS_BEFORE_PAREN = frozenset(
    {"if", "for", "while", "switch", "catch", "with", "return", "typeof", "await"}
)
#: After one of these a '/' starts a regular expression, not a division.
REGEX_AFTER = frozenset("(,=:[!&|?{};+-*%<>~^") | {"return", "typeof", "case", "do", "else", "in", "of", "=>"}
WORD = re.compile(r"[A-Za-z_$][\w$]*")
#: A relative module specifier where a module is named: ``from '…'``, ``import '…'``,
#: ``import('…')`` (code, or a JSDoc type) and ``new URL('…', import.meta.url)`` (a worker thread).
SPECIFIER = re.compile(
    r"""(?:\bfrom\s*|^\s*import\s*|\bimport\s*\(\s*|\bnew\s+URL\s*\(\s*)(['"])(\.{1,2}/[^'"]+)\1""", re.M
)


def relative_imports(source: str) -> list[str]:
    """Every relative specifier ``source`` names a module by, in order (comments included: a JSDoc
    type that names another module depends on it as much as an import does)."""
    return [match.group(2) for match in SPECIFIER.finditer(source)]


@dataclass(frozen=True)
class Function:
    name: str
    first: int
    last: int

    @property
    def lines(self) -> int:
        return self.last - self.first + 1


def tokens(source: str) -> list[tuple[str, int]]:
    """The code tokens of ``source`` that matter here (words, punctuation; strings, comments and
    regular expressions skipped, a template's ``${}`` code kept), each with its line."""
    out: list[tuple[str, int]] = []
    line, i, n = 1, 0, len(source)
    templates: list[int] = []  # brace depth at which each open template's ${ started
    depth = 0

    def skip_quoted(start: int, quote: str) -> int:
        nonlocal line
        j = start + 1
        while j < n and source[j] != quote:
            if source[j] == "\\":
                j += 1
            elif source[j] == "\n":
                line += 1
            j += 1
        return j + 1

    def skip_template(start: int) -> int:
        """From just after a backtick or a closing '}' of ${...}: to past the closing backtick, or
        into the next ${ (returning its position after '${' and pushing the depth)."""
        nonlocal line
        j = start
        while j < n:
            c = source[j]
            if c == "\\":
                j += 2
                continue
            if c == "\n":
                line += 1
            if c == "`":
                return j + 1
            if c == "$" and source.startswith("${", j):
                templates.append(depth)
                return j + 2
            j += 1
        return j

    while i < n:
        c = source[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif source.startswith("//", i):
            i = source.find("\n", i) if "\n" in source[i:] else n
        elif source.startswith("/*", i):
            end = source.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += source.count("\n", i, end)
            i = end
        elif c in "'\"":
            i = skip_quoted(i, c)
        elif c == "`":
            i = skip_template(i + 1)
        elif c == "/" and (not out or out[-1][0] in REGEX_AFTER):
            j, in_class = i + 1, False
            while j < n and (source[j] != "/" or in_class):
                if source[j] == "\\":
                    j += 1
                elif source[j] == "[":
                    in_class = True
                elif source[j] == "]":
                    in_class = False
                j += 1
            j += 1
            while j < n and (source[j].isalnum()):
                j += 1
            i = j
            out.append(("/regex/", line))
        elif (m := WORD.match(source, i)) is not None:
            out.append((m.group(), line))
            i = m.end()
        elif c.isdigit():
            m2 = re.compile(r"[\w.]+").match(source, i)
            assert m2 is not None
            out.append(("0", line))
            i = m2.end()
        elif source.startswith("=>", i):
            out.append(("=>", line))
            i += 2
        elif c == "{":
            depth += 1
            out.append(("{", line))
            i += 1
        elif c == "}":
            if templates and templates[-1] == depth:
                templates.pop()
                i = skip_template(i + 1)
                continue
            depth -= 1
            out.append(("}", line))
            i += 1
        else:
            out.append((c, line))
            i += 1
    return out


def functions(source: str) -> list[Function]:
    """Every function of ``source`` (declarations, expressions, methods, arrows with a block body)
    with the lines from its first to its closing brace, nested ones counted in their outer one."""
    toks = tokens(source)
    found: list[Function] = []
    stack: list[tuple[int, str | None, int]] = []  # (token index of '{', function name or None, start line)
    for index, (token, line) in enumerate(toks):
        if token == "{":
            name, start = function_opened(toks, index)
            stack.append((index, name, start))
        elif token == "}" and stack:
            _, name, start = stack.pop()
            if name is not None:
                found.append(Function(name, start, line))
    return found


def function_opened(toks: list[tuple[str, int]], brace: int) -> tuple[str | None, int]:
    """Whether the '{' at ``brace`` opens a function's body: its name and first line, or None."""
    before = toks[brace - 1][0] if brace else ""
    if before == "=>":
        j = brace - 2
        if j >= 0 and toks[j][0] == ")":
            j = matching_open(toks, j)
        start = toks[max(j, 0)][1]
        name = toks[j - 2][0] if j >= 2 and toks[j - 1][0] in "=:" else "(arrow)"
        return name, start
    if before != ")":
        return None, 0
    opening = matching_open(toks, brace - 1)
    if opening <= 0:
        return None, 0
    head = toks[opening - 1][0]
    if head == "function" or (opening >= 2 and toks[opening - 2][0] == "function"):
        return (head if head != "function" else "(anonymous)"), toks[opening - 1][1]
    if WORD.fullmatch(head) and head not in KEYWORDS_BEFORE_PAREN:
        return head, toks[opening - 1][1]
    return None, 0


def matching_open(toks: list[tuple[str, int]], close: int) -> int:
    depth = 0
    for j in range(close, -1, -1):
        if toks[j][0] == ")":
            depth += 1
        elif toks[j][0] == "(":
            depth -= 1
            if depth == 0:
                return j
    return -1
