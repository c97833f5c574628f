"""Which configuration an ``rtb`` command uses, and where it came from.

In order: ``--config FILE``; else ``--profile NAME`` (``$DSH_HOME/profiles/NAME``); else the
folder ``rtb`` runs in when it is a profile folder (its ``cordis.patch.yml``, read as ``rtb check``
reads it, so ``npx --no rtb replay`` in a profile replays under that profile's configuration); else
the defaults. Every output names the one it used (``Chosen.label``), so a report under the
defaults never reads as a report under the profile's configuration, nor the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from breaker.core.config import BreakerConfig, ConfigError, load_config
from breaker.rtb.config.check import FIX, PROFILE_PATCH, ended, profile_named, read_layers
from breaker.rtb.config.configfile import read_config_file
from breaker.strayrows import ROW_ID

#: Where a configuration came from.
Origin = Literal["--config", "profile", "profile folder", "defaults"]


@dataclass(frozen=True, slots=True)
class Chosen:
    """The configuration a command runs under; ``source`` is the file that set it (None: the
    defaults), ``why`` says why the defaults when no file set one."""

    config: BreakerConfig
    origin: Origin
    source: Path | None = None
    why: str = "no configuration found"

    @property
    def label(self) -> str:
        """What every output names it by: ``./cordis.patch.yml (profile folder)`` or
        ``defaults (no configuration found)``; text reports print it after ``config:``."""
        if self.source is None:
            return f"defaults ({self.why})"
        return f"{_shown_path(self.source)} ({self.origin})"

    @property
    def short(self) -> str:
        """The few words a column heading or a summary names it by: the file, or ``defaults``."""
        return "defaults" if self.source is None else _shown_path(self.source)

    def json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "source": None if self.source is None else str(self.source),
            "origin": self.origin,
        }


def choose(config_file: Path | None, profile: str | None, folder: Path | None = None) -> Chosen:
    """The configuration to use (see the module docstring); ``folder`` defaults to the current one.
    A file that cannot be read or holds an invalid config raises ``ConfigError``."""
    if config_file is not None:
        raw = read_config_file(config_file)
        return Chosen(loaded(raw, config_file, "correct it in that file"), "--config", config_file)
    if profile is not None:
        return _from_profile(profile_named(profile), "profile")
    here = Path(".") if folder is None else folder
    if (here / PROFILE_PATCH).is_file():
        return _from_profile(here, "profile folder")
    return Chosen(load_config(None), "defaults")


def _from_profile(folder: Path, origin: Origin) -> Chosen:
    """The config the last of the profile's layers that sets one gives (``read_layers``: its patch,
    then its dsh home's), as dsh applies them."""
    layer = next((layer for layer in reversed(read_layers(folder)) if layer.sets), None)
    patch = folder / PROFILE_PATCH
    if layer is None:
        why = f"{folder} has no {PROFILE_PATCH}"
        if patch.is_file():
            why = f"{_shown_path(patch)} sets no config for {ROW_ID}"
        return Chosen(load_config(None), "defaults", why=why)
    return Chosen(loaded(layer.config, layer.source, FIX), origin, layer.source)


def loaded(raw: object, source: Path, fix: str) -> BreakerConfig:
    """``raw`` loaded over the defaults; an invalid value is the ``ConfigError`` ``rtb check``
    prints: the file, the row, what is wrong and ``fix``."""
    try:
        return load_config(raw)  # type: ignore[arg-type]  # validated there, whatever it is
    except ConfigError as error:
        raise ConfigError(f"{_shown_path(source)}: {ROW_ID}: {ended(str(error))} Fix: {fix}") from None


def _shown_path(path: Path) -> str:
    """A relative path as ``./name`` (so it reads as a path), any other as it is."""
    text = str(path)
    return text if path.is_absolute() or text.startswith(".") else f"./{text}"
