"""Command normalisation: one shell command line → its canonical text, verbs, URLs and sinks.

A loop survives a naive counter by changing what does not matter: a wrapper, a timeout, a
quoting style, a host spelling. ``analyze_shell`` lexes the line (``shell``), drops each simple
command's wrappers and assignments (``wrappers``), reads HTTP clients by their own grammar
(``fetchers``) and every other command by the generic rules here (volatile ``--timeout`` and
``--retry`` options out, ``tee`` targets and stdout redirections as sinks), while keeping every
difference that names another resource (a path, a query, an output file).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from breaker.core.reading.fetchers import FETCHERS, fetcher_args, generic_volatile_arity
from breaker.core.reading.findings import Findings, is_file
from breaker.core.reading.paths import OperandPaths, operand_paths
from breaker.core.reading.shell import MAX_LEXED_CHARS, SimpleCommand, lex_shell
from breaker.core.reading.urls import CanonicalUrl
from breaker.core.reading.wrappers import strip_prefix

#: Words that start a simple command without naming a program.
_NO_VERB_WORDS = frozenset({"fi", "done", "esac", "}", "for", "case", "select", "in", "function", "[["})
_DYNAMIC = re.compile(r"[$`(]")
_DURATION = re.compile(r"\d+(?:\.\d+)?[smhd]?")
_STDOUT_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "1>", "1>>", "1>|"})
_INPUT_REDIRECTS = frozenset({"<", "<<<", "0<"})
#: Commands that only copy the text they are given (their words, a heredoc) to their output.
_DATA_WRITERS = frozenset({"echo", "printf", "cat", "tee"})
_PIPES = frozenset({"|", "|&"})
#: ``git`` subcommands whose ``-m``/``--message`` is a message they store.
_MESSAGE_SUBCOMMANDS = frozenset({"commit", "tag", "merge", "notes", "stash"})
_OPERATORS_ABSORBING_SEMICOLON = frozenset({";", "&&", "||", "|", "|&", "&", "("})


class ShellAnalysis(NamedTuple):
    """What one command line does, in canonical form."""

    verb: str  # verb of the first simple command ("" when it has none)
    command: str  # the command line without wrappers, volatile flags, comments; URLs canonical
    verbs: tuple[str, ...]  # verb of every simple command, first appearance order
    urls: tuple[CanonicalUrl, ...]
    sinks: tuple[str, ...]  # files written, generic destinations excluded
    fetches: bool  # some simple command runs an HTTP client
    volatile_removed: tuple[str, ...]  # wrappers and flags removed, as they were written


def analyze_shell(command: str, aliases: Mapping[str, str]) -> ShellAnalysis:
    """Normalise one shell command line and extract its verbs, URLs and sinks."""
    found = Findings(aliases)
    script = lex_shell(command[:MAX_LEXED_CHARS])
    rendered: list[str] = []
    first_verb = ""
    data_bodies: set[int] = set()
    parts = script.parts
    for at, part in enumerate(parts):
        if isinstance(part, str):
            _append_operator(rendered, part)
            continue
        piped = at + 1 < len(parts) and parts[at + 1] in _PIPES
        text, verb, as_data = _simple_command(part, found, piped=piped)
        if as_data:
            data_bodies.update(part.heredocs)
        if not first_verb:
            first_verb = verb
        if text:
            rendered.append(text)
    while rendered and rendered[-1] == ";":
        rendered.pop()
    line = " ".join(rendered)
    for at, body in enumerate(script.heredocs):
        found.as_data = at in data_bodies
        line += "\n" + found.canonical_text(body)
    found.as_data = False
    tail = command[MAX_LEXED_CHARS:]
    if tail:
        found.scan_only(tail)
        line += tail
    return ShellAnalysis(
        verb=first_verb,
        command=line,
        verbs=tuple(found.verbs),
        urls=tuple(found.urls),
        sinks=tuple(found.sinks),
        fetches=found.fetches,
        volatile_removed=tuple(found.removed),
    )


def _append_operator(rendered: list[str], operator: str) -> None:
    """Operators between commands; ``;`` and newlines collapse, so layout is not identity."""
    if operator in (";", "\n"):
        if rendered and rendered[-1] not in _OPERATORS_ABSORBING_SEMICOLON:
            rendered.append(";")
    else:
        rendered.append(operator)


def _simple_command(command: SimpleCommand, found: Findings, *, piped: bool) -> tuple[str, str, bool]:
    """The normalised text of one simple command, its verb ("" when none), and whether it only
    writes data: a writer (``echo``, ``printf``, ``cat``, ``tee``) whose output goes into a file and
    not on down a pipe. The URLs in its words and heredocs are then text it stores in that file,
    not resources it touches (a heredoc fed to ``python3 -`` or piped into ``sh`` is run)."""
    words = command.words
    kept, start = strip_prefix(words, found)
    verb = ""
    if start < len(words) and words[start] not in _NO_VERB_WORDS:
        verb = words[start].rsplit("/", 1)[-1]
        if _DYNAMIC.search(verb):  # "$CMD", "$(which curl)": no name to count
            verb = ""
    if verb:
        found.verbs[verb] = None
    if start < len(words):
        kept.append(found.render(words[start], path=True, keep_dot=True))
    arguments = words[start + 1 :]
    as_data = found.as_data = verb in _DATA_WRITERS and not piped and _writes_a_file(verb, arguments, command)
    fetcher = FETCHERS.get(verb)
    if fetcher is not None:
        found.fetches = True
        kept.extend(fetcher_args(fetcher, arguments, found))
    else:
        messages = _messages(verb, arguments)
        paths = operand_paths(verb)
        kept.extend(_generic_args(arguments, found, is_tee=verb == "tee", messages=messages, paths=paths))
    for operator, target in command.redirects:
        if operator in _STDOUT_REDIRECTS or (operator == ">&" and not _is_fd(target)):
            found.add_sink(target)
        # What an input redirection names is text (``<<<``) or a local file read (``<``): a URL
        # there is never fetched.
        found.as_data = as_data or operator in _INPUT_REDIRECTS
        kept.append(operator + found.render(target, path=operator != "<<<"))
    found.as_data = False
    return " ".join(kept), verb, as_data


def _writes_a_file(verb: str, arguments: Sequence[str], command: SimpleCommand) -> bool:
    """Whether a writer's output goes into a file: a stdout redirection, or a file ``tee`` names."""
    if any(operator in _STDOUT_REDIRECTS and is_file(target) for operator, target in command.redirects):
        return True
    return verb == "tee" and any(not word.startswith("-") and is_file(word) for word in arguments)


def _generic_args(
    words: Sequence[str],
    found: Findings,
    *,
    is_tee: bool,
    messages: frozenset[int] = frozenset(),
    paths: OperandPaths = "files",
) -> list[str]:
    """Arguments of any command: URLs canonical, generic volatile long options removed, words
    spelled like paths as they resolve (as ``paths`` says: ``paths.operand_paths``); the words at
    ``messages`` are text the command stores, whose URLs are not targets."""
    kept: list[str] = []
    options_done = False
    as_data = found.as_data
    path, keep_dot = paths != "text", paths == "names"  # read once: the same for every word
    count = len(words)
    i = 0
    while i < count:
        word = words[i]
        i += 1
        if not options_done and word.startswith("--"):
            name, equals, _ = word.partition("=")
            arity = generic_volatile_arity(name)
            if arity is not None:
                if arity and not equals and i < count and _DURATION.fullmatch(words[i]):
                    found.removed.append(f"{word} {words[i]}")
                    i += 1
                else:
                    found.removed.append(word)
                continue
            options_done = word == "--"
        elif is_tee and (options_done or not word.startswith("-") or word == "-"):
            found.add_sink(word)
        if messages and i - 1 in messages:  # text stored: its URLs are no targets
            found.as_data = True
            kept.append(found.render(word, path=False, keep_dot=keep_dot))
            found.as_data = as_data
        else:
            kept.append(found.render(word, path=path, keep_dot=keep_dot))
    return kept


def _messages(verb: str, arguments: Sequence[str]) -> frozenset[int]:
    """Where a commit or tag message is among ``git``'s arguments (``-m MSG``, ``-am MSG``,
    ``-mMSG``, ``--message MSG``, ``--message=MSG``): text stored in the repository, like a file's
    content, even when it quotes a URL (a "Generated with …" trailer)."""
    if verb != "git" or not arguments or arguments[0] not in _MESSAGE_SUBCOMMANDS:
        return frozenset()
    found: set[int] = set()
    for at, word in enumerate(arguments[1:], start=1):
        if word == "--":
            break
        if word == "--message" or (word.startswith("-") and not word.startswith("--") and word.endswith("m")):
            found.add(at + 1)
        elif word.startswith(("--message=", "-m")):
            found.add(at)
    return frozenset(found)


def _is_fd(target: str) -> bool:
    return target == "-" or (target.isascii() and target.isdigit())
