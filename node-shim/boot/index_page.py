"""What a package index's JSON page (PEP 691) lists, read for the pinned wheels (pinned_wheels.py).

A page is read only where it has the shape the standard gives it: a JSON object whose ``files``
is a list of objects, each with a ``filename`` and a ``url`` that are strings and ``hashes`` that
map names to strings, a ``requires-python`` that is a string when it is there, and a ``size``
(PEP 700) that is a number of bytes when it is there. A page of any other shape is
``NotStandard``: its message says what is wrong (which file entry, which field) in words of its
own, never in the page's text, and pinned_wheels.py leaves the work to pip, saying so. Of the
entries, ``best`` takes the wheel of the pinned version that suits this interpreter best (the
order of its tags, as pip ranks them). Standard library and pip's vendored packaging only.
"""

from __future__ import annotations

import json
import sys
import urllib.parse
from dataclasses import dataclass
from typing import Any


class NotStandard(ValueError):
    """The page does not have PEP 691's shape where it is read; the message says what is wrong."""


@dataclass(frozen=True)
class Wheel:
    name: str  # canonical
    version: str
    filename: str
    url: str
    sha256: str
    size: int | None  # the bytes the page gives it, when it does


def files(body: bytes) -> list[dict[str, Any]]:
    """The file entries of the page ``body``, each of the shape read here (else NotStandard)."""
    try:
        document = json.loads(body)
    except (ValueError, RecursionError) as error:  # not JSON, not UTF-8, or nested past reading
        raise NotStandard(f"it is not JSON that can be read ({type(error).__name__})") from error
    if not isinstance(document, dict):
        raise NotStandard("it is not a JSON object")
    entries = document.get("files")
    if not isinstance(entries, list):
        raise NotStandard("its `files` is missing or not a list")
    for number, entry in enumerate(entries, 1):
        wrong = _wrong(entry)
        if wrong:
            raise NotStandard(f"entry {number} of its `files` {wrong}")
    return entries


def _wrong(entry: object) -> str | None:
    """What is wrong with one file entry, as the rest of a sentence; None when nothing is."""
    if not isinstance(entry, dict):
        return "is not an object"
    for key in ("filename", "url"):
        if not isinstance(entry.get(key), str):
            return f"has no `{key}` string"
    hashes = entry.get("hashes")
    if not isinstance(hashes, dict) or not all(isinstance(value, str) for value in hashes.values()):
        return "has no `hashes` map of names to strings"
    if not isinstance(entry.get("requires-python"), (str, type(None))):
        return "has a `requires-python` that is not a string"
    size = entry.get("size")
    if size is not None and (type(size) is not int or size < 0):  # a bool is no size either
        return "has a `size` that is not a number of bytes"
    return None


def best(
    entries: list[dict[str, Any]], name: str, version: str, page: str, ranks: dict[Any, int]
) -> Wheel | None:
    """Of ``entries`` (checked by ``files``) on the page at ``page``, the wheel of ``name==version``
    whose best tag ranks first in ``ranks`` (this interpreter's tags, best first), or None."""
    from pip._vendor.packaging.specifiers import InvalidSpecifier, SpecifierSet
    from pip._vendor.packaging.utils import InvalidWheelFilename, parse_wheel_filename
    from pip._vendor.packaging.version import InvalidVersion, Version

    wanted = Version(version)
    python = ".".join(map(str, sys.version_info[:3]))
    chosen: tuple[int, Wheel] | None = None
    for entry in entries:
        filename: str = entry["filename"]
        if not filename.endswith(".whl"):
            continue
        try:
            found, found_version, _, tags = parse_wheel_filename(filename)
        except (InvalidWheelFilename, InvalidVersion):  # not a wheel's name: pip passes it by too
            continue
        if found != name or found_version != wanted:
            continue
        requires = entry.get("requires-python")
        try:
            if requires and python not in SpecifierSet(requires):
                continue
        except InvalidSpecifier:
            continue
        rank = min((ranks[tag] for tag in tags if tag in ranks), default=None)
        sha256 = entry["hashes"].get("sha256")
        if rank is None or not sha256:
            continue
        if chosen is None or rank < chosen[0]:
            try:
                url = urllib.parse.urljoin(page, entry["url"])
            except ValueError as error:  # a malformed address ("http://[x")
                raise NotStandard(f"the `url` of its wheel of {name} {version} is not an address") from error
            chosen = (rank, Wheel(name, version, filename, url, sha256, entry.get("size")))
    return chosen[1] if chosen else None
