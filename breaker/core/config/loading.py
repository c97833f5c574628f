"""The breaker's configuration: the one table of defaults, the merge rules and fail-loud checks.

Every other module (and the README) reads the defaults from ``DEFAULTS`` here, so there is a
single source of truth. ``load_config`` turns the raw ``config:`` mapping of a cordis row into a
frozen ``BreakerConfig`` or raises ``ConfigError`` with a message that names the offending key:
a profile with a typo must refuse to boot rather than silently run with weaker protection.

The checks here name the key and the fix; behind them, pydantic checks every field against its
annotation, strictly, as the last gate. A configuration the worker is told was accepted before
(by this very code: see the worker's ``configure``) skips that gate, so a worker that starts on
dsh's boot path never imports pydantic.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar, get_args

if TYPE_CHECKING:
    from pydantic import TypeAdapter

LocalHostsPolicy = Literal["ask", "deny", "allow"]
IdentityMode = Literal["exact", "state-aware"]
#: A named set of settings over DEFAULTS (``PRESETS``); null: the defaults.
PresetName = Literal["seed"]
OnLimitPolicy = Literal["ask", "deny"]
HostPolicy = Literal["none", "public", "all"]
WorkerFailurePolicy = Literal["allow", "deny"]
#: A value of one of the choice types above.
Choice = TypeVar("Choice", bound=str)

#: The fingerprint kinds a ``limits`` key may name, alone (``net``) or as a prefix of one full
#: fingerprint (``verb:curl``).
FINGERPRINT_KINDS = ("exact", "cmd", "net", "host", "site", "sink", "family", "verb")

DEFAULTS: dict[str, Any] = {
    # A named set of settings the other keys start from (PRESETS); null: these defaults.
    "preset": None,
    "window": 16,
    "localHosts": "ask",
    # What makes two calls the same action: the same call in the same workspace state
    # (docs/decision-quality.md); "exact" counts every call verbatim, as the seed did.
    "identity": "state-aware",
    "previewChars": 400,
    "resultPreviewChars": 800,
    "exclude": ["todo_write"],
    "include": [],
    "ignoreArgs": {
        "*": [
            "description",
            "timeoutMs",
            "run_in_background",
            "justification",
            "reason",
            "title",
            "comment",
        ],
        "bash": ["description", "timeoutMs", "run_in_background", "justification"],
    },
    "hostAliases": {"open-data.canada.ca": "open.canada.ca"},
    "limits": {
        "exact": 5,
        "cmd": 5,
        "net": 5,
        "sink": 5,
        "host": None,
        "site": None,
        "family:http-fetch": None,
        "verb:curl": None,
        "verb:wget": None,
    },
    # The escalation of the reference plugin (0.5.x), under its key names and all off here:
    # what a reached cap does, the advisory stages below the caps, the failure track, and
    # whether local hosts take part in host:. See docs/escalation.md.
    "onLimit": "deny",
    "warnAt": None,
    "summarizeAt": None,
    "failWarnAt": None,
    "failLimit": 3,
    # No progress: after this many identical results, the same call again is denied (the rules
    # of docs/decision-quality.md).
    "sameResultLimit": 4,
    "includeLocal": False,
    # A backstop against a harness that never reports its agents gone: past this many agents,
    # the one idle the longest is forgotten.
    "maxAgents": 10000,
    # Read by the Node shim (validated here so that the shim holds no logic of its own).
    "python": None,
    "onWorkerFailure": "allow",
    "guardTimeoutMs": 500,
    "startTimeoutMs": 10000,
    # One line on dsh's stderr per denied call (tool, the kinds that hit, the agent), for an
    # operator of a headless dsh; off: the session log and `rtb replay` show every denial.
    "logDenials": False,
}

#: Named sets of settings over DEFAULTS; keys set beside a preset override it. ``seed`` is the seed
#: README's defaults table exactly: every call counted verbatim in a window of 12, no failure
#: track, no reading of results (docs/configuration.md).
PRESETS: dict[str, dict[str, Any]] = {
    "seed": {"window": 12, "identity": "exact", "failLimit": None, "sameResultLimit": None},
}

#: Each number of the configuration (``limits``: each cap in it), the least and the most it may
#: be: the one table ``load_config`` checks (so do ``rtb check`` and the boot). The most is what
#: the shim holds: a count, a cap or a stage a 32-bit integer (a guard's passes come to no more); a
#: timeout a day (a JavaScript timer fires at once past 2**31-1 ms, and a deadline is held in a
#: 32-bit slot as ms since its worker started: node-shim/worker/transport.js).
#: docs/configuration.md quotes it.
_MOST = 2**31 - 1
NUMBER_BOUNDS: dict[str, tuple[int, int]] = {
    "window": (4, _MOST),
    "previewChars": (1, _MOST),
    "resultPreviewChars": (1, _MOST),
    "limits": (2, _MOST),
    "warnAt": (1, _MOST),
    "summarizeAt": (1, _MOST),
    "failWarnAt": (1, _MOST),
    "failLimit": (2, _MOST),
    "sameResultLimit": (2, _MOST),
    "maxAgents": (1, _MOST),
    "guardTimeoutMs": (1, 86_400_000),
    "startTimeoutMs": (1, 86_400_000),
}

#: Keys that ``ignoreArgs``, ``hostAliases`` and ``limits`` merge one level deep over DEFAULTS.
MERGED_KEYS = ("ignoreArgs", "hostAliases", "limits")

#: Keys of the unrelated npm plugin of the same name, with where their job is done here. They
#: raise instead of being ignored, so a profile written for it cannot silently lose its tuning.
REMOVED_KEYS: dict[str, str] = {
    "denyAfter": "use limits (for example limits: {exact: 5, cmd: 5, net: 5, sink: 5})",
    "warnAfter": "use warnAt (advisory notices, off by default) or the notices of "
    "@deepseek-ai/dsh-repeat-tool-reminder",
    "registerAdvisory": "advisory notices come from @deepseek-ai/dsh-repeat-tool-reminder",
    "maxSamePath": "file actions are identified by exact: (position-aware); there is no path-only limit",
    "readTools": "file actions are identified by exact:; there is no read-tool list",
    "matchReadBySubstring": "file actions are identified by exact:; remove the key",
}

#: Keys still accepted for old profiles but without effect.
IGNORED_KEYS = ("pathAliases",)


class ConfigError(ValueError):
    """A configuration the breaker refuses; the message names the key and the fix."""


@dataclasses.dataclass(frozen=True)
class BreakerConfig:
    """The validated, merged configuration. Field names are the documented camelCase keys."""

    #: How pydantic checks it (``_type_checked``): every field exactly its annotated type.
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
    def host_policy(self) -> HostPolicy:
        """Which URLs get a ``host:`` fingerprint: none unless a ``limits`` entry caps one.

        Uncapped it could never change a verdict, so the default fingerprint sets stay exactly
        the seed's. Local hosts take part only under ``includeLocal``: a development loop talks
        to one local host all day.
        """
        if not any(cap is not None and key.partition(":")[0] == "host" for key, cap in self.limits.items()):
            return "none"
        return "all" if self.includeLocal else "public"

    @property
    def gives_notices(self) -> bool:
        """Whether an allowed call can earn an advisory notice (any advisory stage is on)."""
        return self.warnAt is not None or self.summarizeAt is not None or self.failWarnAt is not None

    @property
    def tracks_failures(self) -> bool:
        """Whether results must be judged at all: the failure track has a stage switched on."""
        return self.failWarnAt is not None or self.failLimit is not None


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
        raise ConfigError(f"config must be a mapping of keys to values, got {_type_name(raw)}")
    preset = raw.get("preset")
    if preset is not None and (not isinstance(preset, str) or preset not in PRESETS):
        raise ConfigError(_choice_message("preset", preset, [*PRESETS, "null"]))
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
            raise ConfigError(_unknown_key_message(key, list(DEFAULTS) + list(IGNORED_KEYS)))
        if key in MERGED_KEYS:
            merged[key] = _merge_one_level(key, base[key], value)
        else:
            merged[key] = value
    config = _validate(merged)
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
        raise ConfigError(f"{key} must be a mapping, got {_type_name(value)}")
    merged = dict(default)
    merged.update(value)
    return merged


def _validate(merged: dict[str, Any]) -> BreakerConfig:
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
        raise ConfigError(f"python must be the path of a Python interpreter or null, got {python!r}")
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
        raise ConfigError(f"{key} must be true or false, {_got(value)}")
    return value


def _integer(merged: Mapping[str, Any], key: str) -> int:
    minimum = NUMBER_BOUNDS[key][0]
    value = merged[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{key} must be a whole number >= {minimum}, {_got(value)}")
    if not math.isfinite(value) or value != int(value) or value < minimum:
        raise ConfigError(f"{key} must be a whole number >= {minimum}, got {value!r}")
    _within_most(key, value, "a whole number")
    return int(value)


def _stage(merged: Mapping[str, Any], key: str) -> int | None:
    """An advisory stage: a positive whole number switches it on; null, 0 or below (the reference
    plugin's documented off-switch) switch it off; anything else fails loud."""
    value = merged[key]
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{key} must be a whole number (null, 0 or below switch it off), {_got(value)}")
    if value <= 0:
        return None
    if value != int(value):
        raise ConfigError(f"{key} must be a whole number (null, 0 or below switch it off), got {value!r}")
    _within_most(key, value, "null (off) or a whole number")
    return int(value)


def _choice(merged: Mapping[str, Any], key: str, allowed: tuple[Choice, ...]) -> Choice:
    """One of ``allowed``: the choices of the key's ``Literal`` type (``get_args``), its one list."""
    value = merged[key]
    for choice in allowed:
        if value == choice and isinstance(value, str):
            return choice
    raise ConfigError(_choice_message(key, value, list(allowed)))


def _choice_message(key: str, value: object, allowed: list[str]) -> str:
    message = f"{key} must be one of {' | '.join(allowed)}, got {value!r}"
    close = difflib.get_close_matches(value, allowed, n=1, cutoff=0.5) if isinstance(value, str) else []
    return message + (f"; did you mean {close[0]!r}?" if close else "")


def _patterns(merged: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = merged[key]
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise ConfigError(f"{key} must be a list of tool names (* wildcards allowed), got {value!r}")
    for item in value:
        if not isinstance(item, str) or not item:
            raise ConfigError(f"{key} entries must be non-empty strings, got {item!r}")
    return tuple(value)


def _ignore_args(value: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    result: dict[str, tuple[str, ...]] = {}
    for tool, names in value.items():
        if not isinstance(tool, str) or not tool:
            raise ConfigError(f"ignoreArgs keys must be tool names or '*', got {tool!r}")
        if names is None:
            result[tool] = ()
            continue
        if isinstance(names, str) or not isinstance(names, (list, tuple)):
            raise ConfigError(f"ignoreArgs.{tool} must be a list of argument names, got {names!r}")
        for name in names:
            if not isinstance(name, str) or not name:
                raise ConfigError(f"ignoreArgs.{tool} entries must be non-empty strings, got {name!r}")
        result[tool] = tuple(names)
    return result


def _host_aliases(value: Mapping[str, Any]) -> dict[str, str]:
    result: dict[str, str] = {}
    for alias, canonical in value.items():
        if not isinstance(alias, str) or not alias.strip():
            raise ConfigError(f"hostAliases keys must be host names, got {alias!r}")
        if not isinstance(canonical, str) or not canonical.strip():
            raise ConfigError(f"hostAliases.{alias} must be a host name, got {canonical!r}")
        result[fold_host_name(alias.strip())] = fold_host_name(canonical.strip())
    return result


def fold_host_name(spelled: str) -> str:
    """A host name as hosts are compared (URLs and ``hostAliases`` alike): lowercase, no trailing
    dot, no ``www.`` in front of a name that still has a dot (``www.example.org`` is
    ``example.org``, while ``www.org`` is a name of its own, not the bare label ``org``)."""
    name = spelled.lower().rstrip(".")
    return name[4:] if name.startswith("www.") and "." in name[4:] else name


def _limits(value: Mapping[str, Any]) -> dict[str, float | None]:
    result: dict[str, float | None] = {}
    for key, cap in value.items():
        if not isinstance(key, str) or not _is_limit_key(key):
            raise ConfigError(_unknown_limit_message(key))
        result[key] = _cap(f"limits.{key}", cap, "a cap below 2 would deny the first call")
    return result


def _cap(name: str, cap: Any, why_two: str) -> float | None:
    """A cap (a ``limits`` entry, ``failLimit``, ``sameResultLimit``): null for none, else a finite
    number >= 2."""
    if cap is None:
        return None
    if isinstance(cap, bool) or not isinstance(cap, (int, float)) or not math.isfinite(cap):
        raise ConfigError(f"{name} must be null or a finite number >= 2, {_got(cap)}")
    if cap < 2:
        raise ConfigError(f"{name} must be null or a finite number >= 2, got {cap!r} ({why_two})")
    _within_most(name, cap, "null (no cap) or a number")
    return float(cap)


def _within_most(name: str, value: float, what: str) -> None:
    """Raise past the most ``NUMBER_BOUNDS`` gives ``name`` (``limits.x``: what ``limits`` gives)."""
    most = NUMBER_BOUNDS[name.partition(".")[0]][1]
    if value > most:
        raise ConfigError(f"{name} must be {what} up to {most:,} (what the shim holds), got {value!r}")


def _is_limit_key(key: str) -> bool:
    kind, _, rest = key.partition(":")
    return kind in FINGERPRINT_KINDS and (rest != "" or ":" not in key)


def _unknown_limit_message(key: object) -> str:
    message = (
        f"limits has an unknown key {key!r}: a key is a fingerprint kind "
        f"({', '.join(FINGERPRINT_KINDS)}) or one full fingerprint such as 'verb:curl'"
    )
    if isinstance(key, str):
        close = difflib.get_close_matches(key, FINGERPRINT_KINDS, n=1)
        if close:
            message += f"; did you mean {close[0]!r}?"
    return message


def _unknown_key_message(key: str, valid: list[str]) -> str:
    message = f"unknown config key {key!r}"
    close = difflib.get_close_matches(key, valid, n=1, cutoff=0.5)
    if not close:
        lowered = {name.lower(): name for name in valid}
        if key.lower() in lowered:
            close = [lowered[key.lower()]]
    if close:
        message += f"; did you mean {close[0]!r}?"
    return message + f" (valid keys: {', '.join(valid)})"


def _got(value: object) -> str:
    """``got <value>``, saying so of a string: a number or a flag quoted in YAML (``window: "16"``)."""
    if not isinstance(value, str):
        return f"got {value!r}"
    text = value.strip().lower()
    unquoted = text in ("true", "false", "null") or text.lstrip("-").replace(".", "", 1).isdigit()
    return f"got {value!r}, a string" + (" (write it without quotes)" if unquoted else "")


def _type_name(value: object) -> str:
    return "null" if value is None else type(value).__name__
