"""Below every stage of the core: the breaker's configuration, one table of defaults and the
checks that refuse a bad profile by naming its key.

Its tables (``tables``: ``DEFAULTS``, ``PRESETS``, ``NUMBER_BOUNDS``, the choices of each key),
the validated configuration (``settings``: ``BreakerConfig``), the loading of a raw ``config:``
mapping into one (``loading``: ``load_config``) through the check of every key (``checks``), what
a refused configuration says (``messages``: ``ConfigError``) and the one folding of host names
(``hosts``). It imports no stage; every stage reads it from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from breaker.reexports import homes_of, loader

if TYPE_CHECKING:  # the names, for type checkers; at run time __getattr__ imports each on first use
    from breaker.core.config.hosts import fold_host_name as fold_host_name
    from breaker.core.config.loading import default_config as default_config
    from breaker.core.config.loading import load_config as load_config
    from breaker.core.config.messages import ConfigError as ConfigError
    from breaker.core.config.settings import BreakerConfig as BreakerConfig
    from breaker.core.config.tables import DEFAULTS as DEFAULTS
    from breaker.core.config.tables import FINGERPRINT_KINDS as FINGERPRINT_KINDS
    from breaker.core.config.tables import HTTP_FETCH as HTTP_FETCH
    from breaker.core.config.tables import IGNORED_KEYS as IGNORED_KEYS
    from breaker.core.config.tables import MERGED_KEYS as MERGED_KEYS
    from breaker.core.config.tables import NUMBER_BOUNDS as NUMBER_BOUNDS
    from breaker.core.config.tables import PRESETS as PRESETS
    from breaker.core.config.tables import REMOVED_KEYS as REMOVED_KEYS
    from breaker.core.config.tables import HostPolicy as HostPolicy
    from breaker.core.config.tables import IdentityMode as IdentityMode
    from breaker.core.config.tables import LocalHostsPolicy as LocalHostsPolicy
    from breaker.core.config.tables import OnLimitPolicy as OnLimitPolicy
    from breaker.core.config.tables import PresetName as PresetName
    from breaker.core.config.tables import WorkerFailurePolicy as WorkerFailurePolicy

#: Each name re-exported, by its home module (the package's submodules are imported as usual).
_HOMES = homes_of(
    {
        "breaker.core.config.hosts": ("fold_host_name",),
        "breaker.core.config.loading": ("default_config", "load_config"),
        "breaker.core.config.messages": ("ConfigError",),
        "breaker.core.config.settings": ("BreakerConfig",),
        "breaker.core.config.tables": (
            "DEFAULTS",
            "FINGERPRINT_KINDS",
            "HTTP_FETCH",
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
        ),
    }
)

__all__ = sorted(_HOMES)
__getattr__ = loader(globals(), _HOMES)
