"""Below every stage of the core: the breaker's configuration (moving into this package)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from breaker.reexports import homes_of, loader

if TYPE_CHECKING:  # the names, for type checkers; at run time __getattr__ imports each on first use
    from breaker.core.config.loading import DEFAULTS as DEFAULTS
    from breaker.core.config.loading import FINGERPRINT_KINDS as FINGERPRINT_KINDS
    from breaker.core.config.loading import IGNORED_KEYS as IGNORED_KEYS
    from breaker.core.config.loading import MERGED_KEYS as MERGED_KEYS
    from breaker.core.config.loading import NUMBER_BOUNDS as NUMBER_BOUNDS
    from breaker.core.config.loading import PRESETS as PRESETS
    from breaker.core.config.loading import REMOVED_KEYS as REMOVED_KEYS
    from breaker.core.config.loading import BreakerConfig as BreakerConfig
    from breaker.core.config.loading import ConfigError as ConfigError
    from breaker.core.config.loading import HostPolicy as HostPolicy
    from breaker.core.config.loading import IdentityMode as IdentityMode
    from breaker.core.config.loading import LocalHostsPolicy as LocalHostsPolicy
    from breaker.core.config.loading import OnLimitPolicy as OnLimitPolicy
    from breaker.core.config.loading import PresetName as PresetName
    from breaker.core.config.loading import WorkerFailurePolicy as WorkerFailurePolicy
    from breaker.core.config.loading import default_config as default_config
    from breaker.core.config.loading import fold_host_name as fold_host_name
    from breaker.core.config.loading import load_config as load_config

_HOMES = homes_of(
    {
        "breaker.core.config.loading": (
            "BreakerConfig",
            "ConfigError",
            "DEFAULTS",
            "FINGERPRINT_KINDS",
            "HostPolicy",
            "IGNORED_KEYS",
            "IdentityMode",
            "LocalHostsPolicy",
            "MERGED_KEYS",
            "NUMBER_BOUNDS",
            "OnLimitPolicy",
            "PRESETS",
            "PresetName",
            "REMOVED_KEYS",
            "WorkerFailurePolicy",
            "default_config",
            "fold_host_name",
            "load_config",
        ),
    }
)

__all__ = sorted(_HOMES)
__getattr__ = loader(globals(), _HOMES)
