"""``rtb check``: is the plugin's configuration in a profile valid, without booting dsh?

dsh validates the row only when it boots the plugin (``dsh --dump-config`` composes the tree
but applies no plugin), so a bad value is found at the first boot. This reads what dsh would
give the plugin and validates it with the same ``load_config`` the worker runs:

* a profile folder: its ``cordis.patch.yml`` (the plugin's own bundle layer mounts the row with
  no ``config:``, so the profile's patch is where a config comes from);
* a file: a cordis patch (``--patch`` overlay) or a bare ``config:`` mapping, JSON or YAML.

Several paths are layers in the order dsh applies them (the profile, then each ``--patch``).
Within them the last row that carries a ``config:`` wins whole, as a patch replaces the row's
whole ``config``. Prints ``OK`` or the one-line error the boot would print, with its fix.
Exit status: 0 valid, 1 invalid, 2 when a path cannot be read.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from breaker.core.config import ConfigError, load_config
from breaker.rtb.config.configfile import ROW_ID, _parse_document, config_mapping
from breaker.rtb.read import dshhome

PROFILE_PATCH = "cordis.patch.yml"

#: What to do about an invalid value; the plugin's boot error says the same.
FIX = f"correct it in the config: of the {ROW_ID} row (the profile's {PROFILE_PATCH} or your --patch file)"


@dataclass(frozen=True)
class Layer:
    """Where a config came from, and the ``config:`` it sets (``sets``: whether it sets one)."""

    source: Path
    sets: bool
    config: object = None


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
    profile = [dshhome.profile_folder(args.profile)] if args.profile else []
    paths: list[Path] = [*profile, *args.paths] or [Path(".")]
    try:
        layers = [read_layer(path) for path in paths]
    except ConfigError as error:
        print(f"rtb check: {error}")
        return 2
    status, line = verdict(layers)
    print(line)
    return status


def verdict(layers: Sequence[Layer]) -> tuple[int, str]:
    """(exit status, the line to print) for the config the last layer that sets one gives."""
    setting = next((layer for layer in reversed(layers) if layer.sets), None)
    if setting is None:
        where = ", ".join(str(layer.source) for layer in layers)
        return 0, f"OK: {where}: no config for {ROW_ID}, so the defaults apply"
    try:
        load_config(setting.config)  # type: ignore[arg-type]  # validated there, whatever it is
    except ConfigError as error:
        return 1, f"{setting.source}: {ROW_ID}: {error}. Fix: {FIX}"
    keys = ", ".join(sorted(setting.config or {})) or "none"  # type: ignore[call-overload]
    return 0, f"OK: {setting.source}: the {ROW_ID} config is valid (keys set: {keys})"


def read_layer(path: Path) -> Layer:
    """The ``config:`` a profile folder or a file sets for the row."""
    if path.is_dir():
        patch = path / PROFILE_PATCH
        if not patch.is_file():
            return Layer(path, sets=False)
        path = patch
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"{path}: {error.strerror or error}") from None
    document = _parse_document(text, path)
    if isinstance(document, list):
        rows = [row for row in _rows(document) if row.get("id") == ROW_ID and "config" in row]
        return Layer(path, sets=bool(rows), config=rows[-1]["config"] if rows else None)
    try:
        return Layer(path, sets=True, config=config_mapping(document))
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}") from None


def _rows(rows: list[Any]) -> list[dict[str, Any]]:
    """A patch's rows in order, the rows of its ``insert:`` blocks in their place."""
    found: list[dict[str, Any]] = []
    for row in rows:
        if isinstance(row, dict):
            inserted = row.get("insert")
            if isinstance(inserted, list):
                found.extend(_rows(inserted))
            found.append(row)
    return found
