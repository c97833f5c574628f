"""``rtb check``: is the plugin's configuration in a profile valid, without booting dsh?

dsh validates the row only when it boots the plugin (``dsh --dump-config`` composes the tree
but applies no plugin), so a bad value is found at the first boot. This reads what dsh would
give the plugin and validates it with the same ``load_config`` the worker runs:

* a profile folder: its ``cordis.patch.yml`` (the plugin's own bundle layer mounts the row with
  no ``config:``, so the profile's patch is where a config comes from), then the
  ``cordis.patch.yml`` of the dsh home it is in (``<home>/profiles/<name>``), which dsh applies
  over every profile of that home;
* a file: a cordis patch (``--patch`` overlay) or a bare ``config:`` mapping, JSON or YAML.

Several paths are layers in the order dsh applies them (the profile, then each ``--patch``).
Within them the last row that carries a ``config:`` wins whole, as a patch replaces the row's
whole ``config``. A row meant for the plugin under another id (``repeat-tool-braker``, or this
plugin's keys under another row: ``breaker.strayrows``) is an error too: dsh would give its
``config:`` to nothing. Prints ``OK`` or the one-line error the boot would print, with its fix.
Exit status: 0 valid, 1 invalid, 2 when a path cannot be read.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from breaker.core.config import ConfigError, load_config
from breaker.core.config.messages import shown
from breaker.rtb.config.configfile import config_mapping, read_document
from breaker.rtb.read import dshhome
from breaker.strayrows import PACKAGE, ROW_FIELDS, ROW_ID, PatchRow, stray_rows

PROFILE_PATCH = "cordis.patch.yml"
MANIFEST = "package.json"

#: What to do about an invalid value; the plugin's boot error says the same.
FIX = (
    f"correct it in the config: of the {ROW_ID} row (the profile's {PROFILE_PATCH}, the dsh home's, "
    "or your --patch file)"
)


@dataclass(frozen=True)
class Layer:
    """Where a config came from, the ``config:`` it sets (``sets``: whether it sets one), its
    rows as far as telling a stray goes (``breaker.strayrows``: all layers' together), and the
    ``disabled:`` its last row for the plugin that has one holds (``switch``: that value alone;
    empty when no row has one). ``unlisted``: the ``package.json`` of a profile folder that does
    not list the plugin among its bundles (then only an inserted row loads it)."""

    source: Path
    sets: bool
    config: object = None
    rows: tuple[PatchRow, ...] = ()
    switch: tuple[object, ...] = ()
    unlisted: Path | None = None


def add_subcommand(commands: Any) -> None:
    """Register ``rtb check`` on the ``rtb`` subcommand parsers."""
    check = commands.add_parser(
        "check", help="validate a profile's config for this plugin without booting dsh"
    )
    check.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help=f"a profile folder (its {PROFILE_PATCH}) or a patch or config file; default: .",
    )
    check.add_argument(
        "--profile",
        metavar="NAME",
        help="the profile NAME of dsh's home ($DSH_HOME/profiles/NAME, else ~/.dsh/profiles/NAME) first",
    )
    check.set_defaults(command=run)


def run(args: argparse.Namespace) -> int:
    try:
        profile = [profile_named(args.profile)] if args.profile else []
        paths: list[Path] = [*profile, *args.paths] or [Path(".")]
        for path in paths:
            if path.is_dir() and not any((path / name).is_file() for name in (PROFILE_PATCH, MANIFEST)):
                raise ConfigError(
                    f"{path}: not a dsh profile folder (no {PROFILE_PATCH}, no {MANIFEST}). Fix: run it in a "
                    "profile's folder ($DSH_HOME/profiles/NAME, else ~/.dsh/profiles/NAME), or give "
                    "--profile NAME or the folder's path"
                )
        # After a profile folder a file is a --patch overlay, which dsh reads as a patch list.
        folder = next((n for n, path in enumerate(paths) if path.is_dir()), len(paths))
        layers = [layer for n, path in enumerate(paths) for layer in read_layers(path, patch=n > folder)]
    except ConfigError as error:
        print(f"rtb check: {error}")
        return 2
    status, line = verdict(layers)
    print(line)
    return status


def verdict(layers: Sequence[Layer]) -> tuple[int, str]:
    """(exit status, the line to print) for the config the last layer that sets one gives; a row
    meant for the plugin under another id, in any layer, first."""
    strays = stray_rows(row for layer in layers for row in layer.rows)
    if strays:
        stray = strays[0]
        source = next(
            layer.source for layer in reversed(layers) if any(row.id == stray.id for row in layer.rows)
        )
        return 1, f"{source}: {ROW_ID}: {stray.line}"
    unlisted = next((layer.unlisted for layer in layers if layer.unlisted is not None), None)
    mounted = any(row.id == ROW_ID and row.inserted for layer in layers for row in layer.rows)
    if unlisted is not None and not mounted:
        return 1, (
            f"{unlisted}: lists no {PACKAGE} among its dsh.profile.bundles, and no row inserts {ROW_ID}, "
            "so dsh does not load the plugin in this profile and reads no config for it. Fix: dsh plugin "
            f"--profile {unlisted.resolve().parent.name} add <this plugin's checkout, tarball or git URL>"
        )
    switch = next((layer for layer in reversed(layers) if layer.switch), None)
    if switch is not None:
        (value,) = switch.switch
        if isinstance(value, str):
            return 1, (
                f"{switch.source}: {ROW_ID}: the row's disabled: {shown(value)} is a string, which dsh "
                f"reads as {'true' if value else 'false'} (any text but '' is true). Fix: write "
                "disabled: true or disabled: false, without quotes"
            )
        if truthy(value):
            return 0, (
                f"OK: {switch.source}: the {ROW_ID} row is disabled (disabled: {shown(value)}), so dsh "
                "does not load the plugin and reads no config for it"
            )
    setting = next((layer for layer in reversed(layers) if layer.sets), None)
    if setting is None:
        where = ", ".join(str(layer.source) for layer in layers)
        return 0, f"OK: {where}: no config for {ROW_ID}, so the defaults apply"
    try:
        config = load_config(setting.config)  # type: ignore[arg-type]  # validated there, whatever it is
    except ConfigError as error:
        return 1, f"{setting.source}: {ROW_ID}: {ended(str(error))} Fix: {FIX}"
    unrunnable = None if config.python is None else interpreter_problem(config.python)
    if unrunnable is not None:
        return 1, (
            f"{setting.source}: {ROW_ID}: cannot run the Python interpreter {config.python!r} from the "
            f"`python` config key: {unrunnable}. Fix: point the `python` config key at an installed "
            "Python, or unset it to let the plugin prepare its own environment"
        )
    keys = ", ".join(sorted(setting.config or {})) or "none"  # type: ignore[call-overload]
    return 0, f"OK: {setting.source}: the {ROW_ID} config is valid (keys set: {keys})"


def profile_named(name: str) -> Path:
    """The folder of dsh's profile ``name`` (``--profile NAME``); a ``ConfigError`` naming the
    profiles there when there is none of that name."""
    folder = dshhome.profile_folder(name)
    if folder.is_dir():
        return folder
    there = dshhome.profile_names()
    listed = f" (profiles there: {', '.join(there)})" if there else ""
    raise ConfigError(f"no dsh profile {name!r} at {folder}{listed}")


def interpreter_problem(command: str) -> str | None:
    """Why a boot could not run ``command`` as the worker's interpreter, as far as telling needs
    no run of it: an absolute path that is no executable file, or a bare name not on PATH (a
    relative path is taken from where dsh runs, unknown here). None: nothing found wrong."""
    if "/" not in command:
        return None if shutil.which(command) is not None else "not found on PATH"
    path = Path(command)
    if not path.is_absolute():
        return None
    if not path.exists():
        return "no such file"
    return None if path.is_file() and os.access(path, os.X_OK) else "not an executable file"


def truthy(value: object) -> bool:
    """Whether JavaScript takes ``value`` for true, as cordis reads a row's ``disabled:``."""
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, (int, float)):
        return value == value and value != 0  # NaN is false
    return not isinstance(value, str) or value != ""


def ended(text: str) -> str:
    """``text`` as a sentence: a full stop added unless it ends in one, or in ``?`` or ``!`` (a
    "did you mean 'exact'?" is not followed by a stray period)."""
    return text if text.endswith((".", "?", "!")) else f"{text}."


def read_layers(path: Path, *, patch: bool = False) -> list[Layer]:
    """The layers a path gives dsh: a file (``patch``: one dsh reads as a patch list), or a profile
    folder's patch and then its home's (after the plugin's bundle layer, when the profile lists it)."""
    home = home_patch(path)
    first = read_layer(path, patch=patch)
    layers = [first] if home is None else [first, read_layer(home, patch=True)]
    bundles = listed_bundles(path)
    bundled = bundles is not None and PACKAGE in bundles
    inserted = [PatchRow(ROW_ID, name=PACKAGE, inserted=True)] if bundled else []
    unlisted = None if bundles is None or bundled else path / MANIFEST
    layers[0] = dataclasses.replace(first, rows=(*inserted, *first.rows), unlisted=unlisted)
    return layers


def listed_bundles(folder: Path) -> list[object] | None:
    """The bundles a profile folder's ``package.json`` lists (``dsh.profile.bundles``; none listed:
    empty); None when ``folder`` has no manifest dsh reads a profile from. A profile that lists the
    package gets the row its bundle inserts (no ``config:``), which dsh applies first."""
    manifest = folder / MANIFEST
    if not folder.is_dir() or not manifest.is_file():
        return None
    try:
        bundles = read_document(manifest, str(manifest))
    except ConfigError:
        return None  # not a manifest dsh reads a profile from: no bundle layer
    if not isinstance(bundles, dict):
        return None
    for key in ("dsh", "profile", "bundles"):
        bundles = bundles.get(key) if isinstance(bundles, dict) else None
    return bundles if isinstance(bundles, list) else []


def home_patch(folder: Path) -> Path | None:
    """The ``cordis.patch.yml`` of the dsh home a profile folder is in (``<home>/profiles/<name>``),
    when there is one: dsh applies it after the profile's own."""
    if not folder.is_dir():
        return None
    profiles = folder.resolve().parent
    patch = profiles.parent / PROFILE_PATCH
    return patch if profiles.name == "profiles" and patch.is_file() else None


def read_layer(path: Path, *, patch: bool = False) -> Layer:
    """The ``config:`` a profile folder or a file sets for the row; ``patch``: a file dsh reads as
    a patch list (a folder's ``cordis.patch.yml`` is one), which it refuses when it is not one."""
    if path.is_dir():
        if not (path / PROFILE_PATCH).is_file():
            return Layer(path, sets=False)
        path, patch = path / PROFILE_PATCH, True
    document = read_document(path, str(path))
    if patch:
        _patch_list(path, document)
    if isinstance(document, list):
        every = _rows(document, inserted=False)
        patch_rows = tuple(
            _patch_row(row, inserted) for row, inserted in every if isinstance(row.get("id"), str)
        )
        mine = [row for row, _ in every if row.get("id") == ROW_ID]
        rows = [row for row in mine if "config" in row]
        switches = [(row["disabled"],) for row in mine if "disabled" in row]
        return Layer(
            path,
            sets=bool(rows),
            config=rows[-1]["config"] if rows else None,
            rows=patch_rows,
            switch=switches[-1] if switches else (),
        )
    try:
        return Layer(path, sets=True, config=config_mapping(document))
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}") from None


def _patch_list(path: Path, document: object) -> None:
    """A ``ConfigError`` naming what dsh refuses in a patch file: anything but a list of mappings."""
    if isinstance(document, list):
        odd = next(((n, row) for n, row in enumerate(document, 1) if not isinstance(row, dict)), None)
        if odd is None:
            return
        got = f"entry {odd[0]} is {shown(odd[1])}"
    else:
        got = (
            "nothing" if document is None else "a mapping" if isinstance(document, dict) else shown(document)
        )
    raise ConfigError(
        f"{path}: dsh refuses it and does not boot: a {PROFILE_PATCH} is a list of rows (- id: …), each a "
        f"mapping; got {got}. Fix: write the plugin's keys under its row: - id: {ROW_ID}, then config: "
        "and the keys under it"
    )


def _patch_row(row: dict[str, Any], inserted: bool) -> PatchRow:
    """A row's id, the keys of its ``config:`` (none when it is not a mapping), its ``name``, its
    own keys beside cordis's, and whether an ``insert:`` list holds it."""
    config, name = row.get("config"), row.get("name")
    keys = tuple(key for key in config if isinstance(key, str)) if isinstance(config, dict) else ()
    beside = tuple(key for key in row if isinstance(key, str) and key not in ROW_FIELDS)
    return PatchRow(row["id"], keys, name if isinstance(name, str) else None, beside, inserted)


def _rows(rows: list[Any], inserted: bool) -> list[tuple[dict[str, Any], bool]]:
    """A patch's rows in order, the rows of its ``insert:`` blocks in their place, each with
    whether an ``insert:`` list holds it."""
    found: list[tuple[dict[str, Any], bool]] = []
    for row in rows:
        if isinstance(row, dict):
            block = row.get("insert")
            if isinstance(block, list):
                found.extend(_rows(block, inserted=True))
            found.append((row, inserted))
    return found
