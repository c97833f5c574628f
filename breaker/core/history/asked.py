"""What a call asks for, read for the evidence of results (``progress``): the keys that say two
calls are the same call, its target (what it names, for ``reworded``) and the keys of what it asks
that count only when it fails (an edit's original, each item of a lookup).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from breaker.core.config import BreakerConfig
from breaker.core.history.identity import WORKSPACE_MARK, text_argument
from breaker.core.reading import (
    COMMAND_ARGS,
    SHELL_TOOLS,
    Findings,
    Fingerprint,
    ToolCall,
    canonical_json,
    lex_shell,
    strip_prefix,
)

#: The fingerprint kinds that say two calls are the same call.
CALL_KINDS = frozenset({"exact", "cmd"})
#: The prefix of an item's key (``failed_keys``).
ITEM_KEY = "item:"
#: The prefixes of the keys that count only when the call fails (``failed_keys``).
FAILED_KEYS = ("failed:", ITEM_KEY)
#: Items of one list argument each counted as a lookup of their own (``failed_keys``), at most.
MAX_ITEMS = 32
#: A command this long is not lexed for its program: it is its own target.
TARGET_CHARS = 4096

_EDIT_ARGS = ("new_string", "new_str", "content", "file_text")


def call_keys(fingerprints: Iterable[Fingerprint]) -> frozenset[str]:
    """The keys that make two calls the same call, without the workspace state they carry: the
    evidence of results starts over when what the agent is known to have changed changes, and
    judges what else may have changed by the answers."""
    return frozenset([fp.key.partition(WORKSPACE_MARK)[0] for fp in fingerprints if fp.kind in CALL_KINDS])


class Asked:
    """What one call asks for, each part read when a rule first needs it and then kept with the
    call until its result is judged: its ``keys`` (``call_keys`` of the fingerprints it counts by),
    its ``target`` and its ``failed`` keys. Each is a function of the call, its fingerprints and its
    notes alone, so reading it late, or once for both the verdict and the result, reads the same."""

    __slots__ = ("_config", "_failed", "_target", "call", "keys", "raw")

    def __init__(
        self,
        call: ToolCall,
        raw: tuple[Fingerprint, ...],
        fingerprints: tuple[Fingerprint, ...],
        config: BreakerConfig,
    ) -> None:
        self.call = call
        self.raw = raw  # as read (the target's addresses)
        self.keys = call_keys(fingerprints)  # of the fingerprints it counts by
        self._config = config  # its notes (``ignoreArgs``)
        self._target: str | None = None
        self._failed: frozenset[str] | None = None

    @property
    def target(self) -> str:
        if self._target is None:
            self._target = target_of(self.call, self.raw, ignored_args(self._config, self.call.name))
        return self._target

    @property
    def failed(self) -> frozenset[str]:
        if self._failed is None:
            self._failed = failed_keys(self.call, ignored_args(self._config, self.call.name))
        return self._failed


def ignored_args(config: BreakerConfig, tool: str) -> frozenset[str]:
    """The argument names that are notes, not part of a call of ``tool`` (``ignoreArgs``)."""
    return frozenset(config.ignoreArgs.get("*", ())) | frozenset(config.ignoreArgs.get(tool, ()))


def target_of(
    call: ToolCall, fingerprints: Iterable[Fingerprint], ignored: frozenset[str] = frozenset()
) -> str:
    """What a call works on, for ``reworded``: what it names, never the tool alone. A command's
    program with the addresses it fetches; an address without its query; else every argument it
    names (a path, a symbol, a query, the items it looks up), its numbers and switches aside (a
    range shifted or a flag added is a rewording), with the text it writes. ``ignored``: the
    argument names that are notes, not part of the call (``ignoreArgs``)."""
    tool = call.name.lower()
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    fingerprints = tuple(fingerprints)
    addresses = sorted({fp.key.split("?", 1)[0] for fp in fingerprints if fp.kind == "net"})
    if tool in SHELL_TOOLS:
        command = text_argument(arguments, COMMAND_ARGS)
        return "" if command is None else f"{tool}:{_program(command)}:{' '.join(addresses)}"
    if addresses:
        return f"{tool}:{' '.join(addresses)}"
    named = {
        str(name): value
        for name, value in arguments.items()
        if name not in ignored and not isinstance(value, bool | int | float) and value is not None
    }
    if not named:
        return ""
    return f"{tool}:{_digest(tool, canonical_json(named)).hex()}"


def failed_keys(call: ToolCall, ignored: frozenset[str] = frozenset()) -> frozenset[str]:
    """Keys of what a call asks for that count only when it fails (``failed``): the call without
    the text it writes (an edit whose original cannot match fails whatever it would write), and
    each item of a list it sends (a lookup that keeps an element that cannot be found fails
    however the others are reordered, split or added to)."""
    tool = call.name.lower()
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    if tool in SHELL_TOOLS or not arguments:
        return frozenset()
    asked = {
        str(name): value
        for name, value in arguments.items()
        if name not in ignored and name not in _EDIT_ARGS
    }
    keys = {f"{FAILED_KEYS[0]}{tool}:{_digest(tool, canonical_json(asked)).hex()}"}
    for value in arguments.values():
        if isinstance(value, list) and 1 < len(value) <= MAX_ITEMS:
            for item in value:
                if isinstance(item, dict):
                    item = {name: part for name, part in item.items() if name not in _EDIT_ARGS}
                keys.add(f"{ITEM_KEY}{tool}:{_digest(tool, canonical_json(item)).hex()}")
    return frozenset(keys)


def _program(command: str, depth: int = 2) -> str:
    """The program a command line runs first (wrappers left out), or the line itself when long;
    for a command that is a substitution (`` `cal 2021` ``, ``$(cal 2021)``), the program it runs."""
    if len(command) > TARGET_CHARS:
        return command
    for part in lex_shell(command).parts:
        if isinstance(part, str) or not part.words:
            continue
        _, verb = strip_prefix(list(part.words), Findings({}))
        if verb < len(part.words):
            word = part.words[verb]
            inner = _substituted(word)
            if inner is not None and depth > 0:
                return _program(inner, depth - 1)
            return word.rsplit("/", 1)[-1]
    return command.strip()


def _substituted(word: str) -> str | None:
    """The command of a word that is one whole command substitution, else None."""
    if len(word) > 2 and word[0] == "`" and word[-1] == "`" and "`" not in word[1:-1]:
        return word[1:-1]
    if word.startswith("$(") and word.endswith(")") and not word.startswith("$(("):
        return word[2:-1]
    return None


def _digest(tool: str, text: str) -> bytes:
    return hashlib.blake2b(f"{tool}\0{text}".encode("utf-8", "surrogatepass"), digest_size=16).digest()
