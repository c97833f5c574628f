"""One tool call → the set of fingerprints that identify the action it performs.

Fingerprints are built after decoy arguments and volatile flags are stripped and host spellings
are folded, so that two calls doing the same thing to the same resource look the same.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from typing import NamedTuple

from breaker.core.config import HTTP_FETCH, BreakerConfig, HostPolicy
from breaker.core.reading.canonical import MAX_KEY_CHARS, bounded_key, json_key
from breaker.core.reading.commands import analyze_shell
from breaker.core.reading.names import COMMAND_ARGS, SHELL_TOOLS, URL_ARGS, URL_LIST_ARGS, URL_TOOL_MARKERS
from breaker.core.reading.resolved import resolved_arguments
from breaker.core.reading.urls import CanonicalUrl, canonical_url

_FETCH_TOOL_MARKERS = ("fetch", "browse", "web_")
#: Whether a tool name holds one of ``names.URL_TOOL_MARKERS`` (a tool that takes a URL), asked of
#: every call: one search.
_URL_TOOL_NAME = re.compile("|".join(map(re.escape, URL_TOOL_MARKERS)))


class ToolCall(NamedTuple):
    """A tool call as the harness dispatches it: the tool's name and its parsed JSON arguments.
    Like ``Fingerprint`` and ``CallFingerprints``, a named tuple: one is made for every call (a
    frozen dataclass costs twice as much to make)."""

    name: str
    arguments: object
    call_id: str = ""
    #: The arguments as the agent wrote them, when ``resolved_call`` changed how a path or URL
    #: in them is spelled (None: as they are); only a denial's wording reads them.
    written: object = None


class Fingerprint(NamedTuple):
    """One identity of an action; ``key`` is the full text (``net:open.canada.ca/``)."""

    kind: str
    key: str
    local: bool = False


class CallFingerprints(NamedTuple):
    """Every fingerprint of one call, plus what normalisation removed (for ``rtb explain``)."""

    fingerprints: tuple[Fingerprint, ...]
    is_local: bool
    stripped_args: tuple[str, ...] = ()
    volatile_removed: tuple[str, ...] = ()
    aliases_folded: tuple[tuple[str, str], ...] = ()


def resolved_call(call: ToolCall) -> ToolCall:
    """``call`` with its path and URL arguments as they resolve (``resolved``): every rule reads
    a call through this. The very call when nothing in it changes."""
    arguments = resolved_arguments(call.arguments)
    if arguments is call.arguments:
        return call
    return ToolCall(call.name, arguments, call.call_id, call.arguments)


def distinct(fingerprints: tuple[Fingerprint, ...]) -> tuple[Fingerprint, ...]:
    """The rule for a key one call carries twice: it counts once, like a key carried once (the
    first fingerprint with that key stands). Every count follows it: a window entry, a cap's hits,
    a failure streak, a stage notice, and so ``Breaker.passes`` (no call adds more than one to any
    count). ``fingerprint_call`` never repeats a key; another fingerprinter may."""
    if len({fp.key for fp in fingerprints}) == len(fingerprints):
        return fingerprints
    first: dict[str, Fingerprint] = {}
    for fp in fingerprints:
        first.setdefault(fp.key, fp)
    return tuple(first.values())


def fingerprint_call(call: ToolCall, config: BreakerConfig) -> CallFingerprints:
    """Fingerprint ``call`` under ``config`` (decoy lists, host aliases).

    Its paths and URLs are read as what they resolve to (``resolved_call``); decoy arguments are
    deleted first and everything else is computed from what remains, so no decoy value can reach
    any fingerprint.
    """
    arguments, stripped = _without_decoys(resolved_arguments(call.arguments), config, call.name)
    exact = Fingerprint("exact", json_key(f"exact:{call.name}:", arguments))
    tool = call.name.lower()
    command = _first_text(arguments, COMMAND_ARGS) if tool in SHELL_TOOLS else None
    if command is not None:
        return _shell_fingerprints(exact, command, config, stripped)
    if _URL_TOOL_NAME.search(tool):
        return _url_tool_fingerprints(exact, tool, arguments, config, stripped)
    return CallFingerprints((exact,), is_local=False, stripped_args=stripped)


def _shell_fingerprints(
    exact: Fingerprint, command: str, config: BreakerConfig, stripped: tuple[str, ...]
) -> CallFingerprints:
    shell = analyze_shell(command, config.hostAliases)
    fingerprints = [exact]
    if shell.command:
        fingerprints.append(Fingerprint("cmd", bounded_key(f"cmd:{shell.verb}:{shell.command}")))
    is_local = _all_local(shell.urls)
    fingerprints.extend(
        _targets(shell.urls, shell.sinks, shell.fetches, shell.verbs, is_local, config.host_policy)
    )
    return CallFingerprints(
        tuple(fingerprints),
        is_local=is_local,
        stripped_args=stripped,
        volatile_removed=shell.volatile_removed,
        aliases_folded=_aliases_folded(shell.urls),
    )


def _url_tool_fingerprints(
    exact: Fingerprint, tool: str, arguments: object, config: BreakerConfig, stripped: tuple[str, ...]
) -> CallFingerprints:
    urls = tuple(_url_arguments(arguments, config.hostAliases))
    fetches = bool(urls) or any(marker in tool for marker in _FETCH_TOOL_MARKERS)
    is_local = _all_local(urls)
    return CallFingerprints(
        (exact, *_targets(urls, (), fetches, (), is_local, config.host_policy)),
        is_local=is_local,
        stripped_args=stripped,
        aliases_folded=_aliases_folded(urls),
    )


def _targets(
    urls: tuple[CanonicalUrl, ...],
    sinks: Iterable[str],
    fetches: bool,
    verbs: Iterable[str],
    is_local: bool,
    hosts: HostPolicy,
) -> list[Fingerprint]:
    """The target fingerprints, de-duplicated in their fixed order: net, host, site, sink, family, verb.

    ``host:`` is the target without path or query, so grinding one API with ever new queries
    still adds up; ``BreakerConfig.host_policy`` says for which URLs.
    """
    keys: dict[str, str] = {}  # key -> kind; a dict keeps first-seen order
    for url in urls:
        keys["net:" + url.resource] = "net"
    for url in urls:
        if hosts == "all" or (hosts == "public" and not url.local):
            keys["host:" + url.host] = "host"
    for url in urls:
        keys["site:" + url.site] = "site"
    for sink in sinks:
        keys["sink:" + sink] = "sink"
    if fetches:
        keys[HTTP_FETCH] = "family"
    for verb in verbs:
        keys["verb:" + verb] = "verb"
    # Interned: a window holds the same site, family and verb keys over and over, across agents too.
    # A short ASCII key is bounded already (``bounded_key`` keeps it as it is): no call for it.
    return [
        Fingerprint(
            kind,
            sys.intern(key if len(key) <= MAX_KEY_CHARS and key.isascii() else bounded_key(key)),
            is_local,
        )
        for key, kind in keys.items()
    ]


def _without_decoys(arguments: object, config: BreakerConfig, tool: str) -> tuple[object, tuple[str, ...]]:
    """The arguments with the decoy top-level keys deleted, and the names deleted.

    The decoy lists are searched as they are (sets would be built per call): arguments have a
    handful of keys and the lists a handful of names.
    """
    if not isinstance(arguments, dict):
        return arguments, ()
    shared = config.ignoreArgs.get("*", ())
    own = config.ignoreArgs.get(tool, ())
    stripped = [key for key in arguments if key in shared or key in own]
    if not stripped:
        return arguments, ()
    return {key: value for key, value in arguments.items() if key not in stripped}, tuple(stripped)


def _first_text(arguments: object, names: tuple[str, ...]) -> str | None:
    if isinstance(arguments, dict):
        for name in names:
            value = arguments.get(name)
            if isinstance(value, str):
                return value
    return None


def _url_arguments(arguments: object, aliases: dict[str, str]) -> Iterable[CanonicalUrl]:
    """The canonical URLs a URL-taking tool is given (``url``/``href``/``uri``, ``urls`` lists)."""
    if not isinstance(arguments, dict):
        return
    spelled: list[object] = [arguments.get(name) for name in URL_ARGS]
    for name in URL_LIST_ARGS:
        listed = arguments.get(name)
        if isinstance(listed, list):
            spelled.extend(listed)
    for value in spelled:
        if isinstance(value, str):
            url = canonical_url(value.strip(), aliases, scheme_optional=True)
            if url is not None:
                yield url


def _all_local(urls: tuple[CanonicalUrl, ...]) -> bool:
    """A call is local when it names at least one URL and every URL is on a local host."""
    return bool(urls) and all(url.local for url in urls)


def _aliases_folded(urls: tuple[CanonicalUrl, ...]) -> tuple[tuple[str, str], ...]:
    return tuple(dict.fromkeys((url.seen_host, url.host) for url in urls if url.aliased))
