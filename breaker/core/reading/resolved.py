"""A call's arguments as what they resolve to: every path and URL argument in its one spelling.

A repeat has to change the resource itself to count as new, so ``{"file_path": "././src/app.py"}``
is ``{"file_path": "src/app.py"}`` and ``{"url": "https://api.example.com/v1/%6Aobs/42"}`` is
``{"url": "https://api.example.com/v1/jobs/42"}`` before any rule reads the call: its ``exact:``
key, its target, what it asks and what it writes. Paths are normalised by ``paths``, URLs by
``urls``; which arguments are paths or URLs is read from their names (what they mean), never
from the tool's. Text only: nothing is looked up on disk or on the network.
"""

from __future__ import annotations

from typing import Literal

from breaker.core.reading.names import URL_ARGS as URL_ARGS
from breaker.core.reading.names import URL_LIST_ARGS as URL_LIST_ARGS
from breaker.core.reading.paths import (
    PATH_LIST_ARGS,
    WORKDIR_ARGS,
    is_path_argument,
    maybe_unnormal,
    normal_path,
    resolved_path,
)
from breaker.core.reading.urls import requested_url

_Kind = Literal["path", "paths", "workdir", "url", "urls"]
#: What each item of a list argument holds.
_ITEM_KINDS: dict[_Kind, _Kind] = {"paths": "path", "urls": "url"}


#: For each set of argument names seen lately (in the order given), the names among them that hold
#: a path or URL and what each holds, and the one naming the working directory: a handful of
#: shapes recur in every call (``command``, ``file_path`` and ``offset``), most naming none.
_SHAPES: dict[tuple[object, ...], tuple[tuple[tuple[str, _Kind], ...], str | None]] = {}
_SHAPES_KEPT = 512


def _named(shape: tuple[object, ...]) -> tuple[tuple[tuple[str, _Kind], ...], str | None]:
    """The names of ``shape`` that hold a path or URL and what each holds; the first that names
    the working directory (``WORKDIR_ARGS``' order), if any."""
    known = _SHAPES.get(shape)
    if known is None:
        named = tuple((name, kind) for name in shape if type(name) is str and (kind := _kind_of(name)))
        workdir = next((name for name in WORKDIR_ARGS if name in shape), None)
        known = named, workdir
        if len(_SHAPES) >= _SHAPES_KEPT:
            _SHAPES.clear()
        _SHAPES[shape] = known
    return known


def _kind_of(name: str) -> _Kind | None:
    """What an argument of this name holds."""
    if name in WORKDIR_ARGS:
        return "workdir"
    if is_path_argument(name):
        return "path"
    if name in PATH_LIST_ARGS:
        return "paths"
    if name in URL_ARGS:
        return "url"
    return "urls" if name in URL_LIST_ARGS else None


def resolved_arguments(arguments: object) -> object:
    """``arguments`` with each path and URL argument resolved; the very object when none changes.

    The arguments resolved last (the very objects) are remembered: the guard resolves a call, and
    its fingerprints read the call it was given (an ``rtb explain`` reads one it was not)."""
    if type(arguments) is not dict:
        return arguments
    last, resolved = _last
    if arguments is last or arguments is resolved:
        return resolved
    resolved = _resolved_arguments(arguments)
    _last[:] = (arguments, resolved)
    return resolved


#: The arguments resolved last and what they resolved to (see ``resolved_arguments``).
_last: list[object] = [None, None]


def _resolved_arguments(arguments: dict[object, object]) -> object:
    named, workdir_name = _named(tuple(arguments))
    if not named:
        return arguments
    workdir = arguments[workdir_name] if workdir_name is not None else None
    if type(workdir) is not str or not workdir:
        workdir = None
    changed: dict[object, object] | None = None
    for name, kind in named:
        value = arguments[name]
        if kind == "path" and workdir is None and type(value) is str and not maybe_unnormal(value):
            continue  # the usual path: already normal, nothing to join it to
        resolved = _resolved(kind, value, workdir)
        if resolved is not value:
            if changed is None:
                changed = {}
            changed[name] = resolved
    if changed is None:
        return arguments
    return {name: changed.get(name, value) for name, value in arguments.items()}


def _resolved(kind: _Kind, value: object, workdir: str | None) -> object:
    """One argument's value resolved, or the very value when it is already as it resolves."""
    if kind == "path" or kind == "workdir":
        if type(value) is not str:
            return value
        text = normal_path(value) if kind == "workdir" else resolved_path(value, workdir)
        return value if text == value else text
    item_kind = _ITEM_KINDS.get(kind)
    if item_kind is not None:
        if type(value) is not list:
            return value
        items = [_resolved(item_kind, item, workdir) for item in value]
        return value if all(new is old for new, old in zip(items, value, strict=True)) else items
    if kind == "url" and type(value) is str:
        requested = requested_url(value.strip())
        return value if requested is None or requested == value else requested
    return value
