"""A fingerprint's cap, keyed or not.

``identity: state-aware`` keys a fingerprint by the workspace state (`` @workspace:<state>``) and a
fetch by the programs that read what it fetched (`` |jq``); a cap the operator set on one full
fingerprint in ``limits`` (``'family:http-fetch': 3``, ``'cmd:ls:ls': 2``) names it as reading made
it, and holds however it was keyed.
"""

from __future__ import annotations

from breaker.core.config import BreakerConfig
from breaker.core.history.identity import NETWORK_KINDS, WORKSPACE_MARK
from breaker.core.reading import Fingerprint

#: What ``Workspace.identify`` adds to a key it keys by the state: the mark and 16 hex digits.
_MARKED = len(WORKSPACE_MARK) + 16


def read_key(fp: Fingerprint) -> str:
    """The key of ``fp`` as reading made it, before ``Workspace.identify`` keyed it."""
    key = fp.key
    if len(key) > _MARKED and key[-_MARKED:-16] == WORKSPACE_MARK:
        return key[:-_MARKED]
    if fp.kind in NETWORK_KINDS and not fp.local:
        return key.rpartition(" |")[0] or key
    return key


def cap_of(fp: Fingerprint, config: BreakerConfig) -> float | None:
    """The cap of ``fp``: its own key's in ``limits`` (as read, ``read_key``) wins over its kind's;
    absent means uncapped. ``Repeats.hits`` inlines it."""
    limits = config.limits
    key = fp.key
    if key in limits:
        return limits[key]
    if fp.kind in config.capped_one_by_one:
        read = read_key(fp)
        if read in limits:
            return limits[read]
    return limits.get(fp.kind)
