"""Reading the breaker's configuration from a file, the way the plugin is configured in dsh.

``--config`` takes either the ``config:`` mapping itself or a whole cordis patch, where the
mapping sits in the plugin's row (possibly inside an ``insert:`` block), as JSON or YAML. What
comes back is the raw mapping; ``load_config`` validates it exactly as the live gate does.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

from breaker.core.config import ConfigError
from breaker.strayrows import ROW_ID


def read_config_file(path: Path | None) -> dict[str, Any]:
    """The raw ``config:`` mapping in ``path``: a bare mapping, or the plugin's row of a cordis patch."""
    if path is None:
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"config {path}: {error.strerror or error}") from None
    document = _parse_document(text, path)
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


def _parse_document(text: str, path: Path) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        json_error = error
    try:
        yaml = importlib.import_module("yaml")
    except ImportError:
        raise ConfigError(
            f"config {path}: not JSON ({json_error.msg} at line {json_error.lineno}); "
            "reading YAML needs PyYAML: pip install pyyaml"
        ) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ConfigError(f"config {path}: neither JSON nor YAML ({error})") from None
