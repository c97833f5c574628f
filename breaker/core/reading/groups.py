"""Groups: which calls could share a key, told from their arguments as the shim holds them.

A conditional pass (``deciding.passes``) holds whatever the calls to come are, so it covers only
as many calls as the caps leave for a key that every one of them might repeat. A call's *group*
lets the shim tell more: a digest of its arguments read coarsely, such that two calls that share
a key have one group, or one of them is a *stand-in* of the other's (``stand_ins``): a *loose*
call (its group is its tool's, ``loose``, which stands for every call of that tool) or, for a
URL tool, a call with no group. The worker names the groups of an agent's window with its
conditional promise; a call whose group and stand-ins are not among them, with fewer calls of
them sent since than the caps leave, repeats no key that could reach a cap.

A call whose one key is its ``exact:`` key has a group (``fingerprints.fingerprint_call``: no shell
tool). Its key is the canonical JSON of its arguments as they resolve, decoys (``ignoreArgs``) left
out, so each argument but a decoy is read as a token:

* a number ``#``, a boolean ``t`` or ``f``, null ``n``, a list or an object ``*``;
* a string named as a URL ``u`` (``requested_url`` respells it); named as a path or working
  directory, ``p`` and its last name (``paths.normal_path`` keeps a path's last name unless a
  ``..`` or nothing follows it, and joining it to a directory keeps it): a path whose last name
  is ``..``, ``.``, nothing or a ``~`` start has none, and makes its call loose; any other
  string ``s`` and itself.

A call of a URL tool (``URL_TOOL_MARKERS``) given a URL has a ``net:`` key too, which a call of
another URL tool, or a shell line, may share; it has a group while no cap counts its other keys
(``BreakerConfig.url_calls_grouped``). Its group is the last name of its URL's path, whatever the
tool (``url_group``): a URL written plainly (``names.PLAIN_URL``: no escape, dot segment or
backslash) names the path it is written with, and ``urls.canonical_url`` keeps that path but for
trailing slashes, so two such URLs of one resource have one last name. Any other URL, a second one
or a list of them makes the call loose, and every URL tool has one loose group. A shell line has
no group, so it is a stand-in of every call of a URL tool: of those in the window, the ones that
fetch (that hold a ``net:`` key; the others are ``APART``), and every one sent since. A call of a
URL tool given no URL is grouped by its arguments, as above.

``names.GROUPING`` goes to the shim in the configure reply; node-shim/call/groups.js computes the same
digest for the calls it may let through (test/conformance.test.js pins the two against each
other; tests/test_groups.py that calls sharing a key share a group).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from breaker.core.reading.names import (
    PATH_ARGS,
    PATH_SUFFIX,
    PLAIN_URL,
    SHELL_TOOLS,
    URL_ARGS,
    URL_LIST_ARGS,
    URL_TOOL_MARKERS,
    WORKDIR_ARGS,
)
from breaker.core.reading.news import head

#: No group: the call may have keys besides ``exact:`` (or arguments that are not an object).
NO_GROUP = 0
_TOKENS = {True: "t", False: "f", None: "n"}
_LOOSE = None
#: What a URL group's digest reads, before the last name of its path; and the loose group of every
#: URL tool's: no tool name starts so (a grouped tool's name is printable).
_URL_GROUP = "\x02"
_URL_LOOSE = "\x03"
_PLAIN_URL = re.compile(PLAIN_URL)
#: The names a URL tool may be given a URL under, a list of them last.
_URL_NAMES = (*URL_ARGS, *URL_LIST_ARGS)


#: What the window keeps for a call with no group that commits no ``net:`` key (``window_group``):
#: it shares no key with a call of a URL tool, so it stands in for none, and no promise names it.
APART = -1


def window_group(group: int, keys: Iterable[str]) -> int:
    """The group a window entry keeps for a call of ``group`` that commits ``keys``: ``APART`` for
    a call with no group that commits no ``net:`` key, else ``group``."""
    if group != NO_GROUP or any(key.startswith("net:") for key in keys):
        return group
    return APART


def digest(text: str) -> int:
    """A group as a number: ``news.head`` of ``text``, 0 read as 1 (``NO_GROUP`` is none)."""
    return head(text) or 1


def is_url_tool(tool: str) -> bool:
    """Whether ``tool`` takes a URL (``fingerprints``: its lower-cased name holds a marker)."""
    lowered = tool.lower()
    return lowered not in SHELL_TOOLS and any(mark in lowered for mark in URL_TOOL_MARKERS)


def loose(tool: str) -> int:
    """The group of ``tool``'s loose calls, which stands for every call of it (of a URL tool, for
    every call of any URL tool)."""
    return digest(_URL_LOOSE) if _url_tool_kept(tool) else digest(tool)


def stand_ins(tool: str) -> tuple[int, ...]:
    """The groups whose calls count against a call of ``tool`` besides its own group's: its loose
    group, and for a URL tool the calls with no group (a shell line may fetch the same URL)."""
    return (loose(tool), NO_GROUP) if _url_tool_kept(tool) else (loose(tool),)


def has_groups(tool: str, urls: bool) -> bool:
    """Whether calls of ``tool`` have groups: no shell tool's; a URL tool's only under ``urls``
    (``BreakerConfig.url_calls_grouped``)."""
    lowered = tool.lower()
    return lowered not in SHELL_TOOLS and (urls or not any(mark in lowered for mark in URL_TOOL_MARKERS))


def url_group(tool: str, url: str) -> int:
    """The group of a call of URL tool ``tool`` given ``url``: the last name of its path when it is
    written plainly (``names.PLAIN_URL``, and no dot segment), else the tool's loose group."""
    plain = _PLAIN_URL.fullmatch(url)
    if plain is None or "/." in plain.group(1):
        return loose(tool)
    return digest(_URL_GROUP + plain.group(1).rstrip("/").rpartition("/")[2])


#: What each tool name and argument name was found to be, kept (a handful of each, asked of every
#: call): a dict look-up instead of lower-casing and searching the name again. Each is let go
#: once it holds ``_NAMES_KEPT``.
_NAMES_KEPT = 256
_grouped: dict[bool, dict[str, bool]] = {True: {}, False: {}}
_url_tools: dict[str, bool] = {}
#: An argument name's reading: its string is a URL, a path (or working directory), or plain text.
_URL, _PATH, _TEXT = range(3)
_read_as: dict[str, int] = {}


def _has_groups_kept(tool: str, urls: bool) -> bool:
    """``has_groups``, kept by tool name."""
    grouped = _grouped[urls]
    known = grouped.get(tool)
    if known is None:
        if len(grouped) >= _NAMES_KEPT:
            grouped.clear()
        known = grouped[tool] = has_groups(tool, urls)
    return known


def _url_tool_kept(tool: str) -> bool:
    """``is_url_tool``, kept by tool name."""
    known = _url_tools.get(tool)
    if known is None:
        if len(_url_tools) >= _NAMES_KEPT:
            _url_tools.clear()
        known = _url_tools[tool] = is_url_tool(tool)
    return known


def _reading(name: str) -> int:
    """How a string argument of this name is read (``_URL``, ``_PATH`` or ``_TEXT``)."""
    known = _read_as.get(name)
    if known is None:
        if name in URL_ARGS:
            known = _URL
        elif name in PATH_ARGS or name in WORKDIR_ARGS or name.endswith(PATH_SUFFIX):
            known = _PATH
        else:
            known = _TEXT
        if len(_read_as) >= _NAMES_KEPT:
            _read_as.clear()
        _read_as[name] = known
    return known


def call_group(tool: str, arguments: object, ignored: Mapping[str, tuple[str, ...]], urls: bool) -> int:
    """The group of a call of ``tool`` with ``arguments`` as the shim sent them (``ignored``: the
    configuration's ``ignoreArgs``; ``urls``: whether calls of URL tools have groups);
    ``NO_GROUP`` when it has none."""
    if type(arguments) is not dict or not _has_groups_kept(tool, urls):
        return NO_GROUP
    shared, own = ignored.get("*", ()), ignored.get(tool, ())
    fields: list[str] = []
    # Each argument's token, read here (one call's few arguments each call, no call per token):
    # a number ``#``, a boolean or null its letter, a list or an object ``*``, a string as its
    # name reads it (``_reading``): ``u``, ``p`` and its last name, or ``s`` and itself.
    for name, value in arguments.items():
        if type(name) is not str:
            return NO_GROUP
        if name in shared or name in own:
            continue
        kind = type(value)
        if kind is str:
            assert isinstance(value, str)
            reading = _read_as.get(name)
            if reading is None:
                reading = _reading(name)
            if reading == _TEXT:
                token = "s" + value
            elif reading == _URL:
                token = "u"
            else:
                last = _last_name(value)
                if last is _LOOSE:
                    return loose(tool)
                token = last
        elif kind is int or kind is float:
            token = "#"
        elif kind is bool or value is None:
            token = _TOKENS[value]
        else:
            token = "*"
        fields.append(name + "\x01" + token)
    if _url_tool_kept(tool):
        given = [name for name in _URL_NAMES if name in arguments and name not in shared and name not in own]
        if given:
            url = arguments[given[0]]
            if len(given) > 1 or type(url) is not str or given[0] in URL_LIST_ARGS:
                return loose(tool)
            return url_group(tool, url)
    fields.sort()
    return digest(tool + "\0" + "\0".join(fields))


def _last_name(path: str) -> str | None:
    """``p`` and the last name of ``path`` as it resolves; None when it may have none of its own."""
    _, slash, last = path.rpartition("/")
    if last and last != "." and last != "..":  # the usual path: its last name is its own
        return _LOOSE if not slash and last.startswith("~") else "p" + last
    names = path.split("/")
    while names and names[-1] in ("", "."):
        names.pop()
    if not names or names[-1] == ".." or (len(names) == 1 and names[0].startswith("~")):
        return _LOOSE
    return "p" + names[-1]
