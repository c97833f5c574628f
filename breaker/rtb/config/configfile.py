"""Reading the breaker's configuration from a file, the way the plugin is configured in dsh.

``--config`` takes either the ``config:`` mapping itself or a whole cordis patch, where the
mapping sits in the plugin's row (possibly inside an ``insert:`` block), as JSON or YAML. What
comes back is the raw mapping; ``load_config`` validates it exactly as the live gate does.

Every config file ``rtb`` reads (``--config``, ``--profile``, the profile folder it runs in,
``rtb check``) is read by :func:`read_document`, within bounds no config comes near: at most
``MAX_CONFIG_BYTES`` (``/dev/zero`` is not read for ever), nested at most ``MAX_NESTING`` levels
(the bound of every JSON text ``rtb`` reads; deeper ones exhaust the parsers' stack) and at most
``MAX_CONFIG_VALUES`` values once YAML's aliases are expanded (an anchor named ten times in each
of seven anchors is ten million values from a few hundred bytes). Past one, or in a text that is
neither JSON nor YAML, a ``ConfigError`` of one line says which.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

from breaker.core.config import ConfigError
from breaker.rtb.config.yamlschema import dsh_loader
from breaker.rtb.read.jsontext import MAX_NESTING, Unreadable, load_json, number_too_long
from breaker.strayrows import ROW_ID

#: The largest config file read, in bytes (a profile's patch is a few kilobytes).
MAX_CONFIG_BYTES = 1 << 20
#: The most values (mappings, lists, scalars; keys not counted) a config file holds, aliases counted again.
MAX_CONFIG_VALUES = 100_000


def read_config_file(path: Path | None) -> dict[str, Any]:
    """The raw ``config:`` mapping in ``path``: a bare mapping, or the plugin's row of a cordis patch."""
    if path is None:
        return {}
    document = read_document(path, f"config {path}")
    try:
        return config_mapping(document)
    except ConfigError as error:
        raise ConfigError(f"config {path}: {error}") from None


def config_mapping(document: object) -> dict[str, Any]:
    """Find the breaker's ``config:`` in a parsed file (see ``read_config_file``)."""
    if document is None:
        return {}
    if isinstance(document, list):
        row = _find_row(document)
        if row is None:
            raise ConfigError(f"the cordis patch has no {ROW_ID!r} row")
        config = row.get("config")
        if config is None:
            return {}
        document = config
    if not isinstance(document, dict):
        raise ConfigError("must hold the config: mapping or a cordis patch (a list of rows)")
    if document.get("id") == ROW_ID and ("config" in document or "name" in document):
        return config_mapping([document])
    if list(document) == ["config"] and isinstance(document["config"], (dict, type(None))):
        return document["config"] or {}  # the row's config: key and its mapping (no key of a config)
    return document


def _find_row(rows: list[Any]) -> dict[str, Any] | None:
    for row in rows:
        if not isinstance(row, dict):
            continue
        if row.get("id") == ROW_ID:
            return row
        inserted = row.get("insert")
        if isinstance(inserted, list):
            found = _find_row(inserted)
            if found is not None:
                return found
    return None


def read_document(path: Path, named: str) -> object:
    """The JSON or YAML document in ``path``, within the bounds above; ``named`` starts each error."""
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_CONFIG_BYTES + 1)
    except OSError as error:
        raise ConfigError(f"{named}: {error.strerror or error}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{named}: larger than {MAX_CONFIG_BYTES:,} bytes; a config is a few kilobytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"{named}: not UTF-8 (byte {error.start})") from None
    try:
        document = _parse_document(text)
    except Unreadable as error:
        raise ConfigError(f"{named}: {error}") from None
    except ConfigError as error:
        raise ConfigError(f"{named}: {error}") from None
    if _more_values_than(document, MAX_CONFIG_VALUES):
        raise ConfigError(
            f"{named}: holds more than {MAX_CONFIG_VALUES:,} values (YAML aliases counted each time)"
        )
    return document


def _parse_document(text: str) -> object:
    try:
        return load_json(text)
    except json.JSONDecodeError as error:
        json_error = error
    try:
        yaml = importlib.import_module("yaml")
    except ImportError:
        where = f"{json_error.msg} at line {json_error.lineno}"
        raise ConfigError(f"not JSON ({where}); reading YAML needs PyYAML: pip install pyyaml") from None
    try:
        _check_yaml_depth(yaml.parse(text, Loader=yaml.SafeLoader), yaml)
        return yaml.load(text, Loader=dsh_loader(yaml))
    except (Unreadable, ConfigError):
        raise
    except ValueError:  # an integer longer than Python converts
        raise Unreadable(number_too_long()) from None
    except yaml.YAMLError as error:
        raise ConfigError(f"neither JSON nor YAML ({' '.join(str(error).split())})") from None


def _check_yaml_depth(events: Any, yaml: Any) -> None:
    """Raise ``Unreadable`` at the first collection nested deeper than ``MAX_NESTING``, from the
    parser's events, before anything is built from them (building is recursive)."""
    depth = 0
    for event in events:
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_NESTING:
                raise Unreadable(f"nested deeper than {MAX_NESTING} levels")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _more_values_than(document: object, most: int) -> bool:
    """Whether ``document`` holds more than ``most`` values, each one an alias names counted again
    (its depth is bounded, so the walk has no recursion to fear)."""
    stack = [document]
    seen = 0
    while stack:
        value = stack.pop()
        seen += 1
        if seen > most:
            return True
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return False
