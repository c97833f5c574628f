"""A package's re-exported names, each imported from its home module on first use.

``breaker`` and each stage of the core re-export names of their modules; importing them all
eagerly would make importing one constant of a stage import the whole stage (and the stages it
reads), which is what the worker's start must not wait for. A package lists its names by home
module, imports them under ``TYPE_CHECKING`` for type checkers, and sets its module
``__getattr__`` to ``loader(...)``: a name is imported when it is first read, then kept.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def homes_of(exports: Mapping[str, tuple[str, ...]]) -> dict[str, str]:
    """``{home module: names}`` turned into ``{name: home module}``; a name listed twice is a bug."""
    homes: dict[str, str] = {}
    for home, names in exports.items():
        for name in names:
            if name in homes:
                raise ValueError(f"{name!r} is re-exported from both {homes[name]} and {home}")
            homes[name] = home
    return homes


def loader(package: dict[str, Any], homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of the package whose globals are ``package``: a name of
    ``homes`` is imported from its home and kept in ``package``; any other name is missing (so
    ``from package import submodule`` imports the submodule as usual)."""

    def load(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package['__name__']!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        package[name] = value
        return value

    return load
