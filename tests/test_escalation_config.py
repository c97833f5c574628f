"""Issue 8's configuration: the reference plugin's escalation keys, off by default, fail-loud,
and the ``host:`` fingerprint they can cap."""

from __future__ import annotations

from typing import Any

import pytest

from breaker.core.config import ConfigError, load_config
from breaker.core.reading.fingerprints import ToolCall, fingerprint_call


def test_every_escalation_key_is_off_by_default() -> None:
    config = load_config({"preset": "seed"})
    assert config.onLimit == "deny"
    assert (config.warnAt, config.summarizeAt, config.failWarnAt, config.failLimit) == (None,) * 4
    assert config.includeLocal is False
    assert config.limit_for("host", "host:example.org") is None
    assert not config.tracks_failures
    assert config.host_policy == "none"


def test_a_profile_written_for_the_reference_plugin_loads_unchanged() -> None:
    config = load_config(
        {
            "window": 16,
            "localHosts": "deny",
            "onLimit": "ask",
            "warnAt": 7,
            "summarizeAt": 11,
            "failWarnAt": 3,
            "failLimit": 5,
            "includeLocal": False,
            "limits": {"exact": 12, "cmd": 12, "net": 12, "sink": 12, "host": 16},
        }
    )
    assert (config.warnAt, config.summarizeAt, config.failWarnAt, config.failLimit) == (7, 11, 3, 5)
    assert config.limit_for("host", "host:api.example.org") == 16
    assert config.tracks_failures


@pytest.mark.parametrize("off", [None, 0, -1, -7.5])
@pytest.mark.parametrize("key", ["warnAt", "summarizeAt", "failWarnAt"])
def test_a_stage_is_switched_off_by_null_zero_or_a_negative_number(key: str, off: Any) -> None:
    assert getattr(load_config({key: off}), key) is None


def test_a_stage_may_be_written_as_a_whole_float() -> None:
    assert load_config({"warnAt": 3.0}).warnAt == 3


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ({"warnAt": 2.5}, "warnAt"),
        ({"summarizeAt": "11"}, "summarizeAt"),
        ({"failWarnAt": True}, "failWarnAt"),
        ({"warnAt": float("inf")}, "warnAt"),
        ({"failLimit": 1}, "failLimit"),
        ({"failLimit": 0}, "failLimit"),
        ({"failLimit": "5"}, "failLimit"),
        ({"failLimit": float("nan")}, "failLimit"),
        ({"onLimit": "allow"}, "onLimit"),
        ({"includeLocal": "yes"}, "includeLocal"),
        ({"includeLocal": None}, "includeLocal"),
        ({"limits": {"host": 1}}, "limits.host"),
        ({"limits": {"hots": 5}}, "limits"),
    ],
)
def test_every_escalation_error_names_its_key(raw: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError, match=rf"^{key}\b"):
        load_config(raw)


def test_fail_limit_takes_any_cap_from_two() -> None:
    assert load_config({"failLimit": 2}).failLimit == 2
    assert load_config({"failLimit": None}).failLimit is None


def test_a_typo_of_an_escalation_key_suggests_it() -> None:
    with pytest.raises(ConfigError, match="did you mean 'summarizeAt'"):
        load_config({"summariseAt": 11})


def test_warn_after_points_at_warn_at() -> None:
    with pytest.raises(ConfigError, match="warnAt"):
        load_config({"warnAfter": 3})


# --- host: ------------------------------------------------------------------------------------


def keys(command: str, **raw: Any) -> list[str]:
    call = ToolCall("bash", {"command": command})
    return [fp.key for fp in fingerprint_call(call, load_config(raw or None)).fingerprints]


def hosts(command: str, **raw: Any) -> list[str]:
    return [key for key in keys(command, **raw) if key.startswith("host:")]


def test_host_is_not_built_while_nothing_caps_it() -> None:
    assert hosts("curl https://api.example.org/a") == []
    assert hosts("curl https://api.example.org/a", limits={"host": None}) == []


def test_host_is_the_folded_host_without_port_path_or_query() -> None:
    url = "https://WWW.Open-Data.Canada.ca:443/data?page=2&utm_source=x#top"
    assert hosts(f"curl '{url}'", limits={"host": 8}) == ["host:open.canada.ca"]


def test_host_comes_after_net_and_before_site() -> None:
    found = keys("curl https://a.example.org/x https://b.example.org/y", limits={"host": 8})
    kinds = [key.partition(":")[0] for key in found]
    assert kinds[2:8] == ["net", "net", "host", "host", "site", "family"]


def test_one_full_host_key_switches_host_fingerprints_on() -> None:
    assert hosts("curl https://b.org/", limits={"host:a.org": 3}) == ["host:b.org"]


def test_a_local_host_has_no_host_fingerprint_unless_include_local() -> None:
    command = "curl http://127.0.0.1:8080/health https://api.example.org/"
    assert hosts(command, limits={"host": 8}) == ["host:api.example.org"]
    assert hosts(command, limits={"host": 8}, includeLocal=True) == ["host:127.0.0.1", "host:api.example.org"]


def test_a_url_tool_gets_host_too() -> None:
    call = ToolCall("web_fetch", {"url": "https://docs.example.org/a?q=1"})
    found = fingerprint_call(call, load_config({"limits": {"host": 4}})).fingerprints
    host = [fp for fp in found if fp.kind == "host"]
    assert [(fp.key, fp.local) for fp in host] == [("host:docs.example.org", False)]


def test_local_hosts_allow_still_wins_over_include_local() -> None:
    call = ToolCall("web_fetch", {"url": "http://localhost:3000/"})
    config = load_config({"limits": {"host": 4}, "includeLocal": True, "localHosts": "allow"})
    found = fingerprint_call(call, config).fingerprints
    host = [fp for fp in found if fp.kind == "host"]
    assert [(fp.key, fp.local) for fp in host] == [("host:localhost", True)]  # local: dropped under allow
