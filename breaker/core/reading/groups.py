"""Groups: which calls could share a key, told from their arguments as the shim holds them.

A conditional pass (``deciding.passes``) holds whatever the calls to come are, so it covers only
as many calls as the caps leave for a key that every one of them might repeat. A call's *group*
lets the shim tell more: a digest of its tool and its arguments read coarsely, such that two calls
that share a key have one group, or one of them is *loose* (its group is its tool's, ``loose``,
which stands for every call of that tool). The worker names the groups of an agent's window with
its conditional promise; a call whose group and tool are not among them, with fewer calls of its
group sent since than the caps leave, repeats no key that could reach a cap.

Only a call whose one key is its ``exact:`` key has a group (``fingerprints.fingerprint_call``: no
shell tool, no tool that takes a URL). Its key is the canonical JSON of its arguments as they
resolve, decoys (``ignoreArgs``) left out, so each argument but a decoy is read as a token:

* a number ``#``, a boolean ``t`` or ``f``, null ``n``, a list or an object ``*``;
* a string named as a URL ``u`` (``requested_url`` respells it); named as a path or working
  directory, ``p`` and its last name (``paths.normal_path`` keeps a path's last name unless a
  ``..`` or nothing follows it, and joining it to a directory keeps it): a path whose last name
  is ``..``, ``.``, nothing or a ``~`` start has none, and makes its call loose; any other
  string ``s`` and itself.

``names.GROUPING`` goes to the shim in the configure reply; node-shim/call/groups.js computes the same
digest for the calls it may let through (test/conformance.test.js pins the two against each
other; tests/test_groups.py that calls sharing a key share a group).
"""

from __future__ import annotations

from collections.abc import Mapping

from breaker.core.reading.names import (
    PATH_ARGS,
    PATH_SUFFIX,
    SHELL_TOOLS,
    URL_ARGS,
    URL_TOOL_MARKERS,
    WORKDIR_ARGS,
)
from breaker.core.reading.news import head

#: No group: the call may have keys besides ``exact:`` (or arguments that are not an object).
NO_GROUP = 0
_TOKENS = {True: "t", False: "f", None: "n"}
_LOOSE = None


def digest(text: str) -> int:
    """A group as a number: ``news.head`` of ``text``, 0 read as 1 (``NO_GROUP`` is none)."""
    return head(text) or 1


def loose(tool: str) -> int:
    """The group of ``tool``'s loose calls, which stands for every call of it."""
    return digest(tool)


def has_groups(tool: str) -> bool:
    """Whether calls of ``tool`` have groups (their one key is ``exact:``)."""
    lowered = tool.lower()
    return lowered not in SHELL_TOOLS and not any(mark in lowered for mark in URL_TOOL_MARKERS)


#: What each tool name and argument name was found to be, kept (a handful of each, asked of every
#: call): a dict look-up instead of lower-casing and searching the name again. Both are let go
#: once they hold ``_NAMES_KEPT``.
_NAMES_KEPT = 256
_grouped: dict[str, bool] = {}
#: An argument name's reading: its string is a URL, a path (or working directory), or plain text.
_URL, _PATH, _TEXT = range(3)
_read_as: dict[str, int] = {}


def _has_groups_kept(tool: str) -> bool:
    """``has_groups``, kept by tool name."""
    known = _grouped.get(tool)
    if known is None:
        if len(_grouped) >= _NAMES_KEPT:
            _grouped.clear()
        known = _grouped[tool] = has_groups(tool)
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


def call_group(tool: str, arguments: object, ignored: Mapping[str, tuple[str, ...]]) -> int:
    """The group of a call of ``tool`` with ``arguments`` as the shim sent them (``ignored``: the
    configuration's ``ignoreArgs``); ``NO_GROUP`` when it has none."""
    if type(arguments) is not dict or not _has_groups_kept(tool):
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
