"""The validated configuration (``BreakerConfig``): every key as its documented camelCase field,
frozen, and what the rest of the core asks of it (a fingerprint's cap, which URLs get a ``host:``
fingerprint, whether notices or the failure track are on).

``loading.load_config`` is the one way to make one; pydantic checks it against the annotations here.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, ClassVar

from breaker.core.config.tables import (
    HostPolicy,
    IdentityMode,
    LocalHostsPolicy,
    OnLimitPolicy,
    PresetName,
    WorkerFailurePolicy,
)

#: The kinds of key a URL tool's call may hold besides ``exact:`` and ``net:``: each may be shared
#: by calls of other resources (a host's, a site's, every fetch), so none is followed by a group.
_URL_SHARED_KINDS = frozenset({"host", "site", "family"})


@dataclasses.dataclass(frozen=True)
class BreakerConfig:
    """The validated, merged configuration. Field names are the documented camelCase keys."""

    #: How pydantic checks it (the last gate of ``loading``): every field exactly its annotated type.
    __pydantic_config__: ClassVar[dict[str, Any]] = {
        "strict": True,
        "extra": "forbid",
        "revalidate_instances": "always",
    }

    preset: PresetName | None
    window: int
    localHosts: LocalHostsPolicy
    identity: IdentityMode
    previewChars: int
    resultPreviewChars: int
    exclude: tuple[str, ...]
    include: tuple[str, ...]
    ignoreArgs: dict[str, tuple[str, ...]]
    hostAliases: dict[str, str]
    limits: dict[str, float | None]
    onLimit: OnLimitPolicy
    warnAt: int | None
    summarizeAt: int | None
    failWarnAt: int | None
    failLimit: float | None
    sameResultLimit: float | None
    includeLocal: bool
    python: str | None
    onWorkerFailure: WorkerFailurePolicy
    guardTimeoutMs: int
    startTimeoutMs: int
    maxAgents: int
    logDenials: bool

    def values(self) -> dict[str, Any]:
        """Every key and its value, as a plain mapping."""
        return dataclasses.asdict(self)

    def limit_for(self, kind: str, key: str) -> float | None:
        """The cap of one fingerprint: its full key wins over its kind; absent means uncapped."""
        if key in self.limits:
            return self.limits[key]
        return self.limits.get(kind)

    @functools.cached_property
    def capped_one_by_one(self) -> frozenset[str]:
        """The kinds of the fingerprints ``limits`` names one by one (``verb:curl``): only a
        fingerprint of these kinds has its key as read looked up (``history.identity.cap_of``)."""
        return frozenset(key.partition(":")[0] for key in self.limits if ":" in key)

    @functools.cached_property
    def host_policy(self) -> HostPolicy:
        """Which URLs get a ``host:`` fingerprint: none unless a ``limits`` entry caps one.

        Uncapped it could never change a verdict, so the default fingerprint sets stay exactly
        the seed's. Local hosts take part only under ``includeLocal``: a development loop talks
        to one local host all day.
        """
        if not any(cap is not None and key.partition(":")[0] == "host" for key, cap in self.limits.items()):
            return "none"
        return "all" if self.includeLocal else "public"

    @functools.cached_property
    def url_calls_grouped(self) -> bool:
        """Whether calls of URL tools have groups (``reading.groups``): while no cap counts a key
        such a call may share beyond its ``exact:`` and ``net:`` ones (``host:``, ``site:``,
        ``family:``; ``reading.fingerprints``), which a group does not follow."""
        return not any(
            cap is not None and key.partition(":")[0] in _URL_SHARED_KINDS for key, cap in self.limits.items()
        )

    @property
    def gives_notices(self) -> bool:
        """Whether an allowed call can earn an advisory notice (any advisory stage is on)."""
        return self.warnAt is not None or self.summarizeAt is not None or self.failWarnAt is not None

    @property
    def tracks_failures(self) -> bool:
        """Whether results must be judged at all: the failure track has a stage switched on."""
        return self.failWarnAt is not None or self.failLimit is not None
