"""The breaker's configuration, loaded: the raw ``config:`` mapping of a cordis row merged over the
defaults (and the preset it names) and checked, into a frozen ``BreakerConfig`` or a
``ConfigError`` with a message that names the offending key: a profile with a typo must refuse to
boot rather than silently run with weaker protection.

The tables are ``tables``'s, the check of each key ``checks``'s; behind them, pydantic checks every
field against its annotation, strictly, as the last gate. A configuration the worker is told was
accepted before (by this very code: see the worker's ``configure``) skips that gate, so a worker
that starts on dsh's boot path never imports pydantic.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from breaker.core.config.checks import validated
from breaker.core.config.messages import (
    MAPPING_SHAPES,
    ConfigError,
    choice_message,
    type_name,
    unknown_key_message,
)
from breaker.core.config.settings import BreakerConfig
from breaker.core.config.tables import DEFAULTS, IGNORED_KEYS, MERGED_KEYS, PRESETS, REMOVED_KEYS

if TYPE_CHECKING:
    from pydantic import TypeAdapter


def default_config() -> BreakerConfig:
    """The configuration a row mounted with no ``config:`` gets."""
    return load_config(None)


def load_config(raw: Mapping[str, Any] | None, *, type_checked: bool = True) -> BreakerConfig:
    """Merge ``raw`` over DEFAULTS (and the ``preset`` it names, PRESETS) and validate it,
    raising ConfigError naming the bad key; then (unless ``type_checked`` is False: a
    configuration this code accepted before) pydantic's strict check of every field."""
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ConfigError(f"config must be a mapping of keys to values, got {type_name(raw)}")
    preset = raw.get("preset")
    if preset is not None and (not isinstance(preset, str) or preset not in PRESETS):
        raise ConfigError(choice_message("preset", preset, [*PRESETS, "null"]))
    base = {**DEFAULTS, **(PRESETS[preset] if preset is not None else {})}
    merged: dict[str, Any] = dict(base)
    for key, value in raw.items():
        if not isinstance(key, str):
            raise ConfigError(f"config keys must be strings, got {key!r}")
        if key in REMOVED_KEYS:
            raise ConfigError(
                f"{key} is a key of the unrelated npm plugin of the same name: {REMOVED_KEYS[key]}"
            )
        if key in IGNORED_KEYS:
            continue
        if key not in DEFAULTS:
            raise ConfigError(unknown_key_message(key, list(DEFAULTS) + list(IGNORED_KEYS)))
        if key in MERGED_KEYS:
            merged[key] = _merge_one_level(key, base[key], value)
        else:
            merged[key] = value
    config = validated(merged)
    return _type_checked(config) if type_checked else config


@functools.cache
def _adapter() -> TypeAdapter[BreakerConfig]:
    from pydantic import TypeAdapter  # only here: a worker's start skips it

    return TypeAdapter(BreakerConfig)


def _type_checked(config: BreakerConfig) -> BreakerConfig:
    """The last gate: pydantic checks every field of ``config`` against its annotation, strictly
    (an int where an int is due, a tuple of strings, ...), and builds the instance it returns."""
    return _adapter().validate_python(config)


def _merge_one_level(key: str, default: Mapping[str, Any], value: Any) -> dict[str, Any]:
    if value is None:
        return dict(default)
    if not isinstance(value, Mapping):
        raise ConfigError(f"{key} must be a mapping of {MAPPING_SHAPES[key]}, got {type_name(value)}")
    merged = dict(default)
    merged.update(value)
    return merged
