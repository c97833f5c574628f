"""The check of every key of a merged configuration (``validated``): a whole number, a stage, a
cap, a choice, a flag, a list of tool names or a mapping, each within what ``NUMBER_BOUNDS``
allows, or a ``ConfigError`` that names the key and the fix.

These checks say what is wrong in the profile's own terms; pydantic's strict check of every field
(``loading``) stands behind them as the last gate.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, TypeVar, get_args

from breaker.core.config.hosts import fold_host_name
from breaker.core.config.messages import (
    ConfigError,
    choice_message,
    exact_key_message,
    got,
    shown,
    unknown_limit_message,
)
from breaker.core.config.settings import BreakerConfig
from breaker.core.config.tables import (
    FAMILIES,
    FINGERPRINT_KINDS,
    NUMBER_BOUNDS,
    SHORTENED_KEY_MARK,
    IdentityMode,
    LocalHostsPolicy,
    OnLimitPolicy,
    WorkerFailurePolicy,
)

#: A value of one of the choice types of ``tables``.
Choice = TypeVar("Choice", bound=str)


def validated(merged: dict[str, Any]) -> BreakerConfig:
    """``merged`` (every key, over DEFAULTS) checked key by key, as a ``BreakerConfig``."""
    window = _integer(merged, "window")
    preview = _integer(merged, "previewChars")
    result_preview = _integer(merged, "resultPreviewChars")
    guard_timeout = _integer(merged, "guardTimeoutMs")
    start_timeout = _integer(merged, "startTimeoutMs")
    max_agents = _integer(merged, "maxAgents")
    local_hosts = _choice(merged, "localHosts", get_args(LocalHostsPolicy))
    identity = _choice(merged, "identity", get_args(IdentityMode))
    on_limit = _choice(merged, "onLimit", get_args(OnLimitPolicy))
    include_local = _flag(merged, "includeLocal")
    log_denials = _flag(merged, "logDenials")
    on_failure = _choice(merged, "onWorkerFailure", get_args(WorkerFailurePolicy))
    python = merged["python"]
    if python is not None and (not isinstance(python, str) or not python.strip()):
        raise ConfigError(f"python must be the path of a Python interpreter or null, got {shown(python)}")
    return BreakerConfig(
        preset=merged["preset"],
        window=window,
        localHosts=local_hosts,
        identity=identity,
        previewChars=preview,
        resultPreviewChars=result_preview,
        exclude=_patterns(merged, "exclude"),
        include=_patterns(merged, "include"),
        ignoreArgs=_ignore_args(merged["ignoreArgs"]),
        hostAliases=_host_aliases(merged["hostAliases"]),
        limits=_limits(merged["limits"]),
        onLimit=on_limit,
        warnAt=_stage(merged, "warnAt"),
        summarizeAt=_stage(merged, "summarizeAt"),
        failWarnAt=_stage(merged, "failWarnAt"),
        failLimit=_cap("failLimit", merged["failLimit"], "one failure is not a streak"),
        sameResultLimit=_cap("sameResultLimit", merged["sameResultLimit"], "one result is not a run"),
        includeLocal=include_local,
        python=python,
        onWorkerFailure=on_failure,
        guardTimeoutMs=guard_timeout,
        startTimeoutMs=start_timeout,
        maxAgents=max_agents,
        logDenials=log_denials,
    )


def _flag(merged: Mapping[str, Any], key: str) -> bool:
    value = merged[key]
    if not isinstance(value, bool):
        raise ConfigError(f"{key} must be true or false, {got(value)}")
    return value


def _integer(merged: Mapping[str, Any], key: str) -> int:
    minimum = NUMBER_BOUNDS[key][0]
    value = merged[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{key} must be a whole number >= {minimum}, {got(value)}")
    if not math.isfinite(value) or value != int(value) or value < minimum:
        raise ConfigError(f"{key} must be a whole number >= {minimum}, got {shown(value)}")
    _within_most(key, value, "a whole number")
    return int(value)


def _stage(merged: Mapping[str, Any], key: str) -> int | None:
    """An advisory stage: a positive whole number switches it on; null, 0 or below (the reference
    plugin's documented off-switch) switch it off; anything else fails loud."""
    value = merged[key]
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{key} must be a whole number (null, 0 or below switch it off), {got(value)}")
    if value <= 0:
        return None
    if value != int(value):
        raise ConfigError(
            f"{key} must be a whole number (null, 0 or below switch it off), got {shown(value)}"
        )
    _within_most(key, value, "null (off) or a whole number")
    return int(value)


def _choice(merged: Mapping[str, Any], key: str, allowed: tuple[Choice, ...]) -> Choice:
    """One of ``allowed``: the choices of the key's ``Literal`` type (``get_args``), its one list."""
    value = merged[key]
    for choice in allowed:
        if value == choice and isinstance(value, str):
            return choice
    raise ConfigError(choice_message(key, value, list(allowed)))


def _patterns(merged: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = merged[key]
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise ConfigError(f"{key} must be a list of tool names (* wildcards allowed), got {shown(value)}")
    for item in value:
        if not isinstance(item, str) or not item:
            raise ConfigError(f"{key} entries must be non-empty strings, got {shown(item)}")
    return tuple(value)


def _ignore_args(value: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    result: dict[str, tuple[str, ...]] = {}
    for tool, names in value.items():
        if not isinstance(tool, str) or not tool:
            raise ConfigError(f"ignoreArgs keys must be tool names or '*', got {shown(tool)}")
        if names is None:
            result[tool] = ()
            continue
        if isinstance(names, str) or not isinstance(names, (list, tuple)):
            raise ConfigError(f"ignoreArgs.{tool} must be a list of argument names, got {shown(names)}")
        for name in names:
            if not isinstance(name, str) or not name:
                raise ConfigError(f"ignoreArgs.{tool} entries must be non-empty strings, got {shown(name)}")
        result[tool] = tuple(names)
    return result


#: What a host name never holds: a URL's scheme, path, query or user, a space, a wildcard (an
#: alias is looked up by the whole name), or a port (looked up without it); an IPv6 address is
#: written in brackets, as a URL writes it.
_NOT_IN_A_HOST = re.compile(r"[/\s@?#*]|^(?!\[).*:|^\[.*\].")


def _is_host_name(spelled: object) -> bool:
    """Whether ``spelled`` can name a URL's host as ``hostAliases`` looks it up."""
    return isinstance(spelled, str) and bool(spelled.strip()) and not _NOT_IN_A_HOST.search(spelled.strip())


def _host_aliases(value: Mapping[str, Any]) -> dict[str, str]:
    """Each spelling folded to the host name at the end of its chain (``a: b`` and ``b: c`` fold
    ``a`` and ``b`` to ``c``, as one lookup does); a spelling that is no host name, or a cycle, is
    refused: either would fold nothing."""
    alone = "the host alone, no scheme, port, path, user or wildcard"
    given: dict[str, str] = {}
    for alias, canonical in value.items():
        if not _is_host_name(alias):
            raise ConfigError(f"hostAliases keys must be host names, got {shown(alias)} ({alone})")
        if not _is_host_name(canonical):
            raise ConfigError(f"hostAliases.{alias} must be a host name, got {shown(canonical)} ({alone})")
        folded, into = fold_host_name(alias.strip()), fold_host_name(canonical.strip())
        if folded != into:
            given[folded] = into
    result: dict[str, str] = {}
    for alias, host in given.items():
        chain = [alias]
        while host in given:
            chain.append(host)
            if host in chain[:-1]:
                cycle = " -> ".join(chain)
                raise ConfigError(
                    f"hostAliases folds {cycle}, a cycle: map each spelling to the one name they share"
                )
            host = given[host]
        result[alias] = host
    return result


#: Where an ``exact:`` key's arguments start: a colon, then a JSON value.
_EXACT_ARGUMENTS = re.compile(r':[\[{"\d-]|:(?:true|false|null)$')


def _limits(value: Mapping[str, Any]) -> dict[str, float | None]:
    result: dict[str, float | None] = {}
    for key, cap in value.items():
        if not isinstance(key, str) or not _is_limit_key(key):
            raise ConfigError(unknown_limit_message(key))
        if key.startswith("exact:"):
            _exact_key_spelling(key)
        result[key] = _cap(f"limits.{key}", cap, "a cap below 2 would deny the first call")
    return result


def _cap(name: str, cap: Any, why_two: str) -> float | None:
    """A cap (a ``limits`` entry, ``failLimit``, ``sameResultLimit``): null for none, else a finite
    number >= 2."""
    if cap is None:
        return None
    if isinstance(cap, bool) or not isinstance(cap, (int, float)) or not math.isfinite(cap):
        raise ConfigError(f"{name} must be null or a finite number >= 2, {got(cap)}")
    if cap < 2:
        raise ConfigError(f"{name} must be null or a finite number >= 2, got {shown(cap)} ({why_two})")
    _within_most(name, cap, "null (no cap) or a number")
    return float(cap)


def _within_most(name: str, value: float, what: str) -> None:
    """Raise past the most ``NUMBER_BOUNDS`` gives ``name`` (``limits.x``: what ``limits`` gives)."""
    most = NUMBER_BOUNDS[name.partition(".")[0]][1]
    if value > most:
        raise ConfigError(f"{name} must be {what} up to {most:,} (what the shim holds), got {shown(value)}")


def _is_limit_key(key: str) -> bool:
    kind, _, rest = key.partition(":")
    if kind == "family" and rest:
        return key in FAMILIES
    if kind == "exact" and rest:  # the tool, then its arguments as JSON (as a denial shows the key)
        return _EXACT_ARGUMENTS.search(rest) is not None
    return kind in FINGERPRINT_KINDS and (rest != "" or ":" not in key)


def _exact_key_spelling(key: str) -> None:
    """Raise when an ``exact:`` key is not written as its fingerprint is (``json_key``: the tool,
    then its arguments as compact JSON with keys sorted), so that no call could ever carry it: its
    arguments not JSON, or JSON spelled otherwise (a space, keys in another order). A key cut to
    a head and a digest (``SHORTENED_KEY_MARK``), as a denial shows a long one, is taken as is.
    A tool's name may hold a colon: each place the arguments may start is tried."""
    if SHORTENED_KEY_MARK in key:
        return
    import json  # only for a configuration that caps one exact call

    meant, why = None, ""
    for found in _EXACT_ARGUMENTS.finditer(key, len("exact:")):
        head, text = key[: found.start() + 1], key[found.start() + 1 :]
        try:
            arguments = json.loads(text)
        except ValueError as error:
            why = why or f"its arguments are not JSON ({error})"
            continue
        written = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        if written == text:
            return
        meant = meant or head + written
    if meant is not None:
        raise ConfigError(exact_key_message(key, "its JSON is spelled otherwise than a fingerprint's", meant))
    raise ConfigError(exact_key_message(key, why))
