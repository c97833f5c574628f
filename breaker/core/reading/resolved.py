"""A call's arguments as what they resolve to: every path and URL argument in its one spelling.

A repeat has to change the resource itself to count as new, so ``{"file_path": "././src/app.py"}``
is ``{"file_path": "src/app.py"}`` and ``{"url": "https://api.example.com/v1/%6Aobs/42"}`` is
``{"url": "https://api.example.com/v1/jobs/42"}`` before any rule reads the call: its ``exact:``
key, its target, what it asks and what it writes. Paths are normalised by ``paths``, URLs by
``urls``; which arguments are paths or URLs is read from their names (what they mean), never
from the tool's. Text only: nothing is looked up on disk or on the network.
"""

from __future__ import annotations

import functools
from typing import Literal

from breaker.core.reading.paths import (
    PATH_LIST_ARGS,
    WORKDIR_ARGS,
    is_path_argument,
    normal_path,
    resolved_path,
)
from breaker.core.reading.urls import requested_url

#: Argument names whose value is a URL, and a list of URLs.
URL_ARGS = ("url", "href", "uri")
URL_LIST_ARGS = ("urls",)

_Kind = Literal["path", "paths", "workdir", "url", "urls"]
#: What each item of a list argument holds.
_ITEM_KINDS: dict[_Kind, _Kind] = {"paths": "path", "urls": "url"}


@functools.lru_cache(maxsize=512)
def _kind_of(name: str) -> _Kind | None:
    """What an argument of this name holds (cached: a few names recur in every call)."""
    if name in WORKDIR_ARGS:
        return "workdir"
    if is_path_argument(name):
        return "path"
    if name in PATH_LIST_ARGS:
        return "paths"
    if name in URL_ARGS:
        return "url"
    if name in URL_LIST_ARGS:
        return "urls"
    return None


def resolved_arguments(arguments: object) -> object:
    """``arguments`` with each path and URL argument resolved; the very object when none changes."""
    if type(arguments) is not dict:
        return arguments
    changed: dict[object, object] | None = None
    for name, value in arguments.items():
        kind = _kind_of(name) if type(name) is str else None
        if kind is None:
            continue
        resolved = _resolved(kind, value, arguments)
        if resolved is not value:
            if changed is None:
                changed = {}
            changed[name] = resolved
    if changed is None:
        return arguments
    return {name: changed.get(name, value) for name, value in arguments.items()}


def _resolved(kind: _Kind, value: object, arguments: dict[object, object]) -> object:
    """One argument's value resolved, or the very value when it is already as it resolves."""
    if kind == "path" or kind == "workdir":
        if type(value) is not str:
            return value
        text = normal_path(value) if kind == "workdir" else resolved_path(value, _workdir(arguments))
        return value if text == value else text
    item_kind = _ITEM_KINDS.get(kind)
    if item_kind is not None:
        if type(value) is not list:
            return value
        items = [_resolved(item_kind, item, arguments) for item in value]
        return value if all(new is old for new, old in zip(items, value, strict=True)) else items
    if kind == "url" and type(value) is str:
        requested = requested_url(value.strip())
        return value if requested is None or requested == value else requested
    return value


def _workdir(arguments: dict[object, object]) -> str | None:
    """The working directory the call names (``cwd``), if any."""
    for name in WORKDIR_ARGS:
        value = arguments.get(name)
        if type(value) is str and value:
            return value
    return None
