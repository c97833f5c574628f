"""Command prefixes: wrappers (``sudo``, ``timeout 5``, ``env -u X``), assignments, keywords.

``sudo timeout 30 curl URL`` fetches what ``curl URL`` fetches, so a wrapper and the variable
assignments before a command are removed (and reported as removed), while shell keywords such as
``if`` or ``!`` stay in the command line and are only skipped to find the verb. Each wrapper's
option grammar says which of its options take an argument, so its own arguments are not mistaken
for the command it runs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from breaker.core.reading.findings import Findings


@dataclass(frozen=True, slots=True)
class _Wrapper:
    """A command that runs another one: its options taking an argument, and positionals it eats."""

    short_with_arg: str = ""
    long_with_arg: frozenset[str] = frozenset()
    positionals: int = 0
    #: Options that make it a query rather than a wrapper (``command -v curl``).
    not_wrapping: frozenset[str] = frozenset()


_WRAPPERS: dict[str, _Wrapper] = {
    "sudo": _Wrapper(
        "ugpChDrtTU",
        frozenset(
            {
                "--user",
                "--group",
                "--prompt",
                "--close-from",
                "--host",
                "--chdir",
                "--role",
                "--type",
                "--command-timeout",
                "--other-user",
            }
        ),
    ),
    "doas": _Wrapper("uC"),
    "env": _Wrapper("uCS", frozenset({"--unset", "--chdir", "--split-string"})),
    "nice": _Wrapper("n", frozenset({"--adjustment"})),
    "ionice": _Wrapper("cnp", frozenset({"--class", "--classdata", "--pid"})),
    "nohup": _Wrapper(),
    "time": _Wrapper("fo", frozenset({"--format", "--output"})),
    "timeout": _Wrapper("sk", frozenset({"--signal", "--kill-after"}), positionals=1),
    "command": _Wrapper(not_wrapping=frozenset({"-v", "-V"})),
    "builtin": _Wrapper(),
    "exec": _Wrapper("a"),
    "stdbuf": _Wrapper("ioe", frozenset({"--input", "--output", "--error"})),
}
#: Shell syntax that may precede the command word; kept in the command line, skipped for the verb.
_PREFIX_KEYWORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{"})

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")


def strip_prefix(words: list[str], found: Findings) -> tuple[list[str], int]:
    """Keywords to keep and the index of the command word, wrappers and assignments removed.

    A prefix with no command after it is the command itself (``FOO=1`` alone, bare ``time``).
    """
    kept: list[str] = []
    removed: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word in _PREFIX_KEYWORDS:
            kept.append(word)
            i += 1
            continue
        if "=" in word and _ASSIGNMENT.match(word):  # no regex for the usual word, which has none
            found.canonical_text(word)
            removed.append(word)
            i += 1
            continue
        wrapper = _WRAPPERS.get(word.rsplit("/", 1)[-1])
        if wrapper is None:
            break
        end = _end_of_wrapper(wrapper, words, i + 1)
        if end is None:
            break
        removed.append(" ".join(words[i:end]))
        i = end
    if i >= len(words):
        return [found.render(word) for word in words], i
    found.removed.extend(removed)
    return kept, i


def _end_of_wrapper(wrapper: _Wrapper, words: Sequence[str], i: int) -> int | None:
    """Index of the command a wrapper runs, or None when it runs none (or is not wrapping)."""
    positionals = wrapper.positionals
    while i < len(words):
        word = words[i]
        if word in wrapper.not_wrapping:
            return None
        if word == "--":
            i += 1
            break
        if word.startswith("--"):
            name, equals, _ = word.partition("=")
            i += 2 if name in wrapper.long_with_arg and not equals else 1
        elif word.startswith("-") and len(word) > 1:
            i += 1
            for position in range(1, len(word)):
                if word[position] in wrapper.short_with_arg:
                    if position == len(word) - 1:
                        i += 1
                    break
        elif positionals:
            positionals -= 1
            i += 1
        else:
            break
    i += positionals
    return i if i < len(words) else None
