"""Paths: a file named by what it resolves to, lexically, and which arguments and words name one.

``./src/app.py``, ``././src/app.py``, ``src//app.py`` and ``src/lib/../app.py`` name one file, so
they are one resource to every rule. The path is normalised by its text alone, never on disk: ``.``
segments, repeated ``/`` and a trailing ``/`` go, ``..`` takes the segment before it. A ``..`` past
the start of a relative path stays (``../a`` is not ``a``); past ``/`` it is ``/``. A relative path
is resolved against the working directory a call names (``cwd``), when it names one.

Which values are paths is read from what an argument means (its name: ``path``, ``file_path``,
any ``…_path``, ``cwd``), never from a tool's name; in a shell command, from how a word is spelled
and what the program does with its operands (``operand_paths``).
"""

from __future__ import annotations

import re
from typing import Literal

from breaker.core.reading.names import PATH_ARGS as PATH_ARGS
from breaker.core.reading.names import PATH_LIST_ARGS as PATH_LIST_ARGS
from breaker.core.reading.names import PATH_SUFFIX as _PATH_SUFFIX
from breaker.core.reading.names import WORKDIR_ARGS as WORKDIR_ARGS

#: A word spelled like a file path in a command line: path characters only (no quote, glob,
#: variable, ``:`` or ``=``), at least one ``/``, not an option.
_PATH_WORD = re.compile(r"[\w.~@+,-]*/[\w.~@+,/-]*")
#: Programs whose operands are text or a script, not files to read: a ``/`` in their words is part
#: of a pattern (``sed 's/a//g'``, ``grep 'a/./b'``, ``jq .a//.b``) or of text they print.
_TEXT_OPERAND_PROGRAMS = frozenset(
    {"echo", "printf", "sed", "awk", "gawk", "mawk", "grep", "egrep", "fgrep", "rg", "ag", "ack", "jq", "yq"}
    | {"tr", "expr", "perl", "ruby"}
)
#: Programs for which an operand without its leading ``./`` names something else: a package or a
#: module (``npm install ./pkg`` is a folder, ``npm install pkg`` the registry's; ``go run
#: ./cmd/x``), a command to run (``xargs ./fix``), a script looked up in ``PATH`` (``source env.sh``).
_NAME_OPERAND_PROGRAMS = frozenset(
    {"npm", "npx", "pnpm", "yarn", "bun", "bunx", "deno", "pip", "pip3", "pipx", "uv", "uvx", "poetry"}
    | {"go", "cargo", "gem", "bundle", "composer", "dotnet", "docker", "podman", "helm", "nix"}
    | {"source", ".", "exec", "xargs", "watch", "nohup", "nice", "command", "env", "sudo", "time"}
)
#: Characters of a pattern (a glob, an XPath), not of a path an agent names.
_PATTERN_CHARS = re.compile(r"[*?\[\]{}]")
#: What the operands of a program are, as far as their paths go (``operand_paths``).
OperandPaths = Literal["files", "names", "text"]


def is_path_argument(name: str) -> bool:
    """Whether an argument of this name holds one path (``path``, ``file_path``, ``source_path``)."""
    return name in PATH_ARGS or name.endswith(_PATH_SUFFIX)


def path_argument(arguments: dict[object, object]) -> str | None:
    """The first path a call's arguments name (``is_path_argument``), else None."""
    for name, value in arguments.items():
        if type(value) is str and (name in PATH_ARGS or (type(name) is str and name.endswith(_PATH_SUFFIX))):
            return value
    return None


def maybe_unnormal(path: str) -> bool:
    """Whether ``path`` may differ from its normal form: a ``.`` or ``..`` segment past its start
    (or any ``/.``, as in ``a/.git``), ``//``, a leading ``./`` or a trailing ``/``. Substring
    tests, no regex: every path argument of every call is asked this."""
    return "/." in path or "//" in path or path.startswith("./") or (path.endswith("/") and path != "/")


def normal_path(path: str) -> str:
    """``path`` lexically normalised (see the module docstring); unchanged when already normal."""
    if not maybe_unnormal(path):
        return path
    absolute = path.startswith("/")
    segments = path.split("/")
    head = ""
    if not absolute and segments[0].startswith("~"):  # ``~`` and ``~user`` are where the path starts
        head = segments.pop(0)
    kept: list[str] = []
    for segment in segments:
        if segment in ("", "."):
            continue
        if segment == "..":
            if kept and kept[-1] != "..":
                kept.pop()
                continue
            if absolute:
                continue  # ``/..`` is ``/``
        kept.append(segment)
    body = "/".join(kept)
    if absolute:
        return "/" + body
    if head:
        return f"{head}/{body}" if body else head
    return body or "."


def resolved_path(path: str, workdir: str | None) -> str:
    """``path`` normalised, relative to ``workdir`` when it is relative and a directory is named;
    a pattern given for a path (a glob ``src/**/*.py``, an XPath ``//a[@id]``) as it is."""
    joined = bool(workdir) and not path.startswith(("/", "~"))
    if not joined and not maybe_unnormal(path):
        return path
    if _PATTERN_CHARS.search(path):
        return path
    return normal_path(f"{workdir}/{path}" if joined else path)


def operand_paths(program: str) -> OperandPaths:
    """How the operands of ``program`` spelled like paths are read: ``files`` (normalised),
    ``names`` (normalised, a leading ``./`` kept: without it the word names something else) or
    ``text`` (left as written: ``sed``'s script, ``echo``'s text, ``grep``'s pattern)."""
    if program in _TEXT_OPERAND_PROGRAMS:
        return "text"
    return "names" if program in _NAME_OPERAND_PROGRAMS else "files"


def normal_path_word(word: str, *, keep_dot: bool = False) -> str:
    """A word of a command line that is spelled like a path, normalised; any other word as it is.

    The result never reads as something else: with ``keep_dot`` (a program run, an operand
    ``operand_paths`` calls a name) a leading ``./`` stays (``./run`` is not a ``run`` looked up in
    ``PATH``), as it does for a file whose name starts with ``-``; a trailing ``/`` stays (``rsync
    src/ dst`` copies what ``src`` holds, ``cp a dir/`` needs ``dir``)."""
    if "/" not in word or word.startswith("-") or not maybe_unnormal(word):
        return word
    kept = _WORDS.get((word, keep_dot))
    if kept is None:
        kept = _normal_path_word(word, keep_dot)
        if len(_WORDS) >= _WORDS_KEPT:
            _WORDS.clear()
        _WORDS[word, keep_dot] = kept
    return kept


#: Words normalised lately and what they became: a session names its files again and again.
_WORDS: dict[tuple[str, bool], str] = {}
_WORDS_KEPT = 1024


def _normal_path_word(word: str, keep_dot: bool) -> str:
    if not _PATH_WORD.fullmatch(word):
        return word
    normal = normal_path(word)
    if normal.startswith("-") or (
        keep_dot and word.startswith("./") and normal != "." and not normal.startswith(("../", "/"))
    ):
        normal = "./" + normal
    if word.endswith("/") and not normal.endswith("/"):
        normal += "/"
    return normal
