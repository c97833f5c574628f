"""Rows of a cordis patch meant for this plugin that dsh will not give it.

dsh reconfigures a row by its id and ignores a flat ``- id:`` row that names no row in the tree,
without a word (only ``dsh --dump-config`` warns). A profile whose row reads
``repeat-tool-braker`` therefore boots on the defaults, its ``config:`` lost. Two kinds of row
are named, with the fix, at boot (the shim sends the ids and config keys of the patch rows dsh
composed) and by ``rtb check`` (which reads the patch files):

* a row whose id is one or two edits away from ``ROW_ID`` (a misspelling);
* a row under another id whose ``config:`` holds keys of this plugin only, at least one of them
  no other plugin of dsh uses (``limits: {exact: 3}`` under the reminder's id);
* this plugin's own row with keys of its config beside ``config:`` (``window: 8`` not indented
  under it), which dsh passes to no one.

And one more mistake of the same kind: a second row that inserts this plugin (an overlay's or a
profile's ``- insert:`` beside the bundle's own row), so dsh runs it twice, each on its own row's
``config:``, and the one on the defaults stops calls whatever the other says.

Sans-I/O: rows in, the strays found out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from breaker.core.config import DEFAULTS, IGNORED_KEYS, REMOVED_KEYS

#: The row id the plugin is mounted under in a cordis patch.
ROW_ID = "repeat-tool-breaker"
#: The package a row's ``name`` names when it mounts this plugin (or a path into it).
PACKAGE = "dsh-repeat-tool-breaker"

#: A row id this many edits (insertions, deletions, substitutions) from ROW_ID, or fewer, is
#: taken for a misspelling of it.
MAX_EDITS = 2

#: Keys of this plugin's config that other plugins' configs use too (dsh's own repeat-tool
#: reminder has ``include`` and ``exclude``): alone they do not make a config look like ours.
SHARED_KEYS = frozenset({"preset", "window", "include", "exclude", "python"})

#: Every key this plugin's config may hold (the ignored and the removed keys included).
OWN_KEYS = frozenset([*DEFAULTS, *IGNORED_KEYS, *REMOVED_KEYS])


#: The keys of a row that are cordis's own, not a plugin's config.
ROW_FIELDS = frozenset(
    {"id", "name", "config", "insert", "group", "disabled", "inject", "intercept", "isolate"}
)


class PatchRow(NamedTuple):
    """A row of a cordis patch, as far as telling a stray goes: its id, the keys of its
    ``config:``, the module it names (``name:``, absent on a row that reconfigures one), the
    row's own keys beside those of cordis (``ROW_FIELDS``) and whether it is a row of an
    ``insert:`` list (one that mounts its module, not one that reconfigures a row)."""

    id: str
    keys: tuple[str, ...] = ()
    name: str | None = None
    beside: tuple[str, ...] = ()
    inserted: bool = False


def _names(keys: object) -> tuple[str, ...]:
    return tuple(key for key in keys if isinstance(key, str)) if isinstance(keys, list) else ()


def patch_rows(rows: object) -> list[PatchRow]:
    """The ``{id, keys, name, beside}`` rows the shim sent with ``configure``
    (``node-shim/boot/patch-rows.js``); anything else is skipped."""
    if not isinstance(rows, list):
        return []
    found = []
    for row in rows:
        if isinstance(row, dict) and isinstance(row.get("id"), str):
            name = row.get("name")
            beside = tuple(key for key in _names(row.get("beside")) if key not in ROW_FIELDS)
            found.append(
                PatchRow(
                    row["id"],
                    _names(row.get("keys")),
                    name if isinstance(name, str) else None,
                    beside,
                    row.get("inserted") is True,
                )
            )
    return found


def mounts_this_plugin(name: str | None) -> bool:
    """Whether a row's ``name`` is this plugin: its package, or a path into it (an overlay's
    ``…/node-shim/index.js``). Such a row gives the plugin its config whatever its id."""
    return name is not None and (PACKAGE in name or name.replace("\\", "/").endswith("node-shim/index.js"))


@dataclass(frozen=True, slots=True)
class StrayRow:
    """A row meant for this plugin under another id: what is wrong, and the fix."""

    id: str
    what: str
    fix: str

    @property
    def line(self) -> str:
        """The one line a boot prints and ``rtb check`` prints after the file's name."""
        return f"{self.what}. Fix: {self.fix}"


def edits(a: str, b: str) -> int:
    """The fewest insertions, deletions and substitutions that turn ``a`` into ``b``."""
    previous = list(range(len(b) + 1))
    for i, letter in enumerate(a, 1):
        current = [i]
        for j, other in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (letter != other)))
        previous = current
    return previous[-1]


def is_misspelt_id(row_id: str) -> bool:
    """Whether ``row_id`` is ROW_ID misspelt: not it, and at most MAX_EDITS edits from it."""
    if row_id == ROW_ID or abs(len(row_id) - len(ROW_ID)) > MAX_EDITS:
        return False
    return edits(row_id.lower(), ROW_ID) <= MAX_EDITS


def looks_like_own_config(keys: Iterable[str]) -> list[str]:
    """The keys of a config that make it look like this plugin's (empty: it does not): every key
    is one of this plugin's, and one at least is no other plugin's."""
    names = list(keys)
    if not names or any(name not in OWN_KEYS for name in names):
        return []
    return names if any(name not in SHARED_KEYS for name in names) else []


def stray_rows(rows: Iterable[PatchRow]) -> list[StrayRow]:
    """The strays among ``rows``, in patch order, each told once (cordis applies a row's keys to
    the row a bundle inserted too, so the same keys come twice)."""
    found: list[StrayRow] = []
    rows = list(rows)
    for row_id, keys, name, beside, _ in rows:
        if row_id == ROW_ID or mounts_this_plugin(name):
            misplaced = [key for key in beside if key in OWN_KEYS]
            if misplaced:
                them = "it" if len(misplaced) == 1 else "them"
                found.append(
                    StrayRow(
                        row_id,
                        f"the row {row_id!r} holds {', '.join(misplaced)} beside its config:, where "
                        f"dsh passes {them} to no one, so the defaults apply",
                        f"indent {them} under config: in that row",
                    )
                )
            continue
        if is_misspelt_id(row_id):
            found.append(
                StrayRow(
                    row_id,
                    f"the row {row_id!r} is not this plugin's row {ROW_ID!r} (a misspelling?): dsh "
                    "ignores the config: of a row it does not have, so the defaults apply",
                    f"write its id as {ROW_ID}",
                )
            )
            continue
        own = looks_like_own_config(keys)
        if own:
            found.append(
                StrayRow(
                    row_id,
                    f"the row {row_id!r} carries keys of this plugin's config ({', '.join(own)}), "
                    f"which only the row {ROW_ID!r} passes to it",
                    f"move them into the config: of the {ROW_ID} row",
                )
            )
    found.extend(_mounted_twice(rows))
    return list({stray.line: stray for stray in found}.values())


def _mounted_twice(rows: list[PatchRow]) -> list[StrayRow]:
    """The second row (and any after it) that inserts this plugin: dsh runs one plugin per row."""
    mounts = [row for row in rows if row.inserted and mounts_this_plugin(row.name)]
    if len(mounts) < 2:
        return []
    named = ", ".join(f"{row.id!r} ({row.name})" for row in mounts)
    return [
        StrayRow(
            mounts[-1].id,
            f"{len(mounts)} rows insert this plugin ({named}), so dsh runs it {len(mounts)} times, "
            "each on its own row's config:, and any of them stops a call",
            f"keep one: give the bundle's row its config with a flat `- id: {ROW_ID}` row holding "
            "config: (no insert:), or drop the other insert",
        )
    ]
