"""The configuration's contract (breaker/core/config/): merge rules, fail-loud validation naming
the key, removed/ignored keys."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from breaker import ToolCall
from breaker.core.config import DEFAULTS, BreakerConfig, ConfigError, default_config, load_config
from breaker.core.reading.counted import counted_tools_pattern
from breaker.core.reading.fingerprints import fingerprint_call


def test_no_config_gives_the_documented_defaults() -> None:
    config = default_config()
    assert config == load_config({})
    assert (config.window, config.identity, config.failLimit, config.sameResultLimit) == (
        16,
        "state-aware",
        3,
        4,
    )
    assert config.localHosts == "ask"
    assert (config.previewChars, config.resultPreviewChars) == (400, 800)
    assert config.exclude == ("todo_write",)
    assert config.include == ()
    assert config.limit_for("exact", "exact:x") == 5
    assert config.limit_for("site", "site:github.com") is None
    assert config.limit_for("family", "family:http-fetch") is None
    assert config.limit_for("verb", "verb:curl") is None
    assert config.limit_for("verb", "verb:git") is None  # absent means uncapped
    assert config.hostAliases == {"open-data.canada.ca": "open.canada.ca"}


def test_limits_merge_one_level_deep() -> None:
    config = load_config({"limits": {"net": 8, "site": 30}})
    assert config.limit_for("net", "net:x/") == 8
    assert config.limit_for("site", "site:x") == 30
    assert config.limit_for("exact", "exact:x") == 5  # kept from the defaults
    assert config.limit_for("verb", "verb:curl") is None


def test_a_key_written_with_no_value_merges_nothing_or_is_an_empty_list() -> None:
    """docs/configuration.md: ``limits:`` with every entry commented out keeps the default caps (it
    lifts none), ``exclude:`` so is an empty list (``todo_write`` counted too)."""
    defaults = default_config()
    for key in ("limits", "ignoreArgs", "hostAliases"):
        assert getattr(load_config({key: None}), key) == getattr(defaults, key), key
    assert load_config({"limits": None}).limit_for("exact", "exact:x") == 5
    assert load_config({"exclude": None}).exclude == ()
    assert load_config({"include": None}).include == ()
    assert load_config({"ignoreArgs": {"*": None}}).ignoreArgs["*"] == ()


def test_a_full_key_limit_wins_over_its_kind() -> None:
    config = load_config({"limits": {"verb:curl": 3, "verb": 10}})
    assert config.limit_for("verb", "verb:curl") == 3
    assert config.limit_for("verb", "verb:git") == 10


def test_host_aliases_merge_and_fold_their_spelling() -> None:
    config = load_config({"hostAliases": {"WWW.Example.COM.": "example.org"}})
    assert config.hostAliases == {"open-data.canada.ca": "open.canada.ca", "example.com": "example.org"}


def ignored_args(config: BreakerConfig, tool: str) -> frozenset[str]:
    """The decoy argument names of one tool: the ``'*'`` list plus the tool's own."""
    return frozenset(config.ignoreArgs.get("*", ())) | frozenset(config.ignoreArgs.get(tool, ()))


def test_ignore_args_merge_per_tool() -> None:
    config = load_config({"ignoreArgs": {"web_fetch": ["nonce"]}})
    assert ignored_args(config, "web_fetch") >= {"nonce", "description", "timeoutMs"}
    assert "run_in_background" in ignored_args(config, "bash")


def test_ignore_args_replace_one_tools_list() -> None:
    config = load_config({"ignoreArgs": {"bash": ["only_this"]}})
    assert config.ignoreArgs["bash"] == ("only_this",)
    assert "description" in ignored_args(config, "bash")  # still from '*'


def test_scalars_replace() -> None:
    config = load_config({"window": 20, "localHosts": "deny", "previewChars": 50})
    assert (config.window, config.localHosts, config.previewChars) == (20, "deny", 50)


def test_exclude_and_include_replace_outright() -> None:
    config = load_config({"exclude": ["a", "b"], "include": ["bash"]})
    assert config.exclude == ("a", "b")  # todo_write is not kept
    assert config.include == ("bash",)


def test_defaults_are_not_mutated_by_loading() -> None:
    before = repr(DEFAULTS)
    load_config({"limits": {"net": 9}, "hostAliases": {"a.org": "b.org"}, "ignoreArgs": {"x": ["y"]}})
    assert repr(DEFAULTS) == before


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ({"window": 3}, "window"),
        ({"window": 4.5}, "window"),
        ({"window": True}, "window"),
        ({"window": "12"}, "window"),
        ({"previewChars": 0}, "previewChars"),
        ({"resultPreviewChars": -1}, "resultPreviewChars"),
        ({"localHosts": "maybe"}, "localHosts"),
        ({"limits": {"net": 1}}, "limits.net"),
        ({"limits": {"net": 1.99}}, "limits.net"),
        ({"limits": {"net": float("inf")}}, "limits.net"),
        ({"limits": {"net": float("nan")}}, "limits.net"),
        ({"limits": {"net": "5"}}, "limits.net"),
        ({"limits": {"net": True}}, "limits.net"),
        ({"limits": {"nett": 5}}, "limits"),
        ({"limits": {"readpath": 5}}, "limits"),
        ({"limits": 5}, "limits"),
        ({"exclude": "todo_write"}, "exclude"),
        ({"include": [""]}, "include"),
        ({"ignoreArgs": {"bash": "description"}}, "ignoreArgs.bash"),
        ({"hostAliases": {"a.org": ""}}, "hostAliases.a.org"),
        ({"onWorkerFailure": "retry"}, "onWorkerFailure"),
        ({"guardTimeoutMs": 0}, "guardTimeoutMs"),
        ({"python": ""}, "python"),
    ],
)
def test_every_error_names_its_key(raw: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError, match=rf"^{key}\b"):
        load_config(raw)


def test_a_limit_of_two_is_the_smallest_allowed() -> None:
    assert load_config({"limits": {"exact": 2}}).limit_for("exact", "exact:x") == 2


def test_null_lifts_a_limit() -> None:
    assert load_config({"limits": {"net": None}}).limit_for("net", "net:x/") is None


@pytest.mark.parametrize(
    ("key", "pointer"),
    [
        ("denyAfter", "use limits"),
        ("warnAfter", "dsh-repeat-tool-reminder"),
        ("registerAdvisory", "dsh-repeat-tool-reminder"),
        ("maxSamePath", "exact:"),
        ("readTools", "exact:"),
        ("matchReadBySubstring", "exact:"),
    ],
)
def test_removed_keys_raise_with_a_pointer_to_their_replacement(key: str, pointer: str) -> None:
    with pytest.raises(ConfigError) as error:
        load_config({key: 3})
    assert str(error.value).startswith(f"{key} is a key of the unrelated npm plugin of the same name: ")
    assert pointer in str(error.value)


def test_path_aliases_is_accepted_and_ignored() -> None:
    assert load_config({"pathAliases": ["path", "file_path"]}) == default_config()


@pytest.mark.parametrize(
    ("typo", "suggestion"),
    [("windw", "window"), ("localhosts", "localHosts"), ("limit", "limits"), ("excludes", "exclude")],
)
def test_an_unknown_key_suggests_the_closest(typo: str, suggestion: str) -> None:
    with pytest.raises(ConfigError, match=rf"unknown config key '{typo}'; did you mean '{suggestion}'"):
        load_config({typo: 1})


def test_an_unknown_limit_kind_suggests_the_closest() -> None:
    with pytest.raises(ConfigError, match="did you mean 'sink'"):
        load_config({"limits": {"snk": 5}})


def test_a_limit_on_a_family_that_does_not_exist_fails_loud() -> None:
    # `family:` has a closed set of members: a misspelt one could never match a call.
    with pytest.raises(
        ConfigError, match=r"limits has an unknown key 'family:http-fech'.*did you mean 'family:http-fetch'"
    ):
        load_config({"limits": {"family:http-fech": 3}})
    assert load_config({"limits": {"family:http-fetch": 3}}).limits["family:http-fetch"] == 3


@pytest.mark.parametrize(
    ("config", "says"),
    [
        ({"failLimit": True}, "failLimit must be null or a finite number >= 2, got true"),
        ({"localHosts": False}, "localHosts must be one of ask | deny | allow, got false"),
        ({"window": None}, "window must be a whole number >= 4, got null"),
        ({"logDenials": None}, "logDenials must be true or false, got null"),
        ({"hostAliases": {"a.com": None}}, "hostAliases.a.com must be a host name, got null"),
        ({"exclude": [None]}, "exclude entries must be non-empty strings, got null"),
    ],
)
def test_a_refused_null_or_flag_is_named_as_yaml_writes_it(config: dict[str, object], says: str) -> None:
    with pytest.raises(ConfigError) as refused:
        load_config(config)
    assert str(refused.value).startswith(says)


def test_config_must_be_a_mapping() -> None:
    with pytest.raises(ConfigError, match="mapping"):
        load_config([1, 2])  # type: ignore[arg-type]


def test_the_counted_tools_pattern_takes_star_wildcards() -> None:
    pattern = re.compile(
        counted_tools_pattern(load_config({"include": ["web_*", "bash"], "exclude": ["web_search"]}))
    )
    assert pattern.match("web_fetch") and pattern.match("bash")
    assert not pattern.match("web_search") and not pattern.match("read") and not pattern.match("bash2")


@pytest.mark.parametrize("name", ["tool😀", "a.b", "x$", "(y)", "naïve", "dots.*.x"])
def test_the_counted_tools_pattern_treats_every_character_of_a_name_literally(name: str) -> None:
    pattern = re.compile(counted_tools_pattern(load_config({"exclude": [name]})))
    assert not pattern.fullmatch(name)
    assert pattern.fullmatch(name + "-other")


def test_log_denials_is_off_by_default_and_a_flag() -> None:
    assert load_config(None).logDenials is False
    assert load_config({"logDenials": True}).logDenials is True
    with pytest.raises(ConfigError, match=r"^logDenials must be true or false, got 'yes'"):
        load_config({"logDenials": "yes"})


@pytest.mark.parametrize(
    ("config", "said"),
    [
        ({"window": 3.0}, "window must be a whole number >= 4, got 3"),
        ({"guardTimeoutMs": 1e12}, "up to 86,400,000 (what the shim holds), got 1000000000000"),
        ({"limits": {"net": 1.0}}, "limits.net must be null or a finite number >= 2, got 1 ("),
        ({"window": 2.5}, "window must be a whole number >= 4, got 2.5"),
        ({"window": -1e300}, "got -1e+300"),
    ],
)
def test_a_number_is_shown_as_the_boot_shows_it(config: dict[str, object], said: str) -> None:
    """`window: 3.0` or `1e12` reaches the boot's worker through JavaScript as 3 and 1000000000000:
    `rtb check`, which reads the YAML as it is, names the value as the boot does (it said 3.0)."""
    with pytest.raises(ConfigError) as raised:
        load_config(config)
    assert said in str(raised.value) and ".0" not in str(raised.value).replace("86,400,000", "")


@pytest.mark.parametrize(
    ("config", "said"),
    [
        (
            {"window": "16"},
            "window must be a whole number >= 4, got '16', a string (write it without quotes)",
        ),
        ({"failLimit": "3"}, "got '3', a string (write it without quotes)"),
        ({"logDenials": "true"}, "got 'true', a string (write it without quotes)"),
        ({"warnAt": "often"}, "got 'often', a string"),
    ],
)
def test_a_quoted_number_or_flag_is_named_a_string(config: dict[str, object], said: str) -> None:
    """`window: "16"` in YAML is the text 16: the error says it is a string, and how to write it."""
    with pytest.raises(ConfigError) as raised:
        load_config(config)
    assert str(raised.value).endswith(said)


def test_an_exact_limit_without_its_arguments_as_json_fails_loud_with_the_form() -> None:
    # 'exact:bash:ls' could never match: an exact key carries the call's arguments as JSON.
    with pytest.raises(
        ConfigError, match=r"unknown key 'exact:bash:ls'.*'exact:bash:\{\"command\":\"ls\"\}'"
    ):
        load_config({"limits": {"exact:bash:ls": 3}})
    for key in ('exact:bash:{"command":"ls"}', 'exact:mcp:server:{"id":1}', "exact"):
        assert load_config({"limits": {key: 3}}).limits[key] == 3


@pytest.mark.parametrize(
    ("key", "says"),
    [
        (
            "exact:bash:{command:ls}",
            "its arguments are not JSON (Expecting property name enclosed in double quotes",
        ),
        ('exact:bash:{"command":"ls -la /srv/da…', "its arguments are not JSON (Unterminated string"),
        ('exact:bash:{"command": "ls"}', 'did you mean \'exact:bash:{"command":"ls"}\'?'),
        ('exact:read:{"path":"a","offset":2}', 'did you mean \'exact:read:{"offset":2,"path":"a"}\'?'),
    ],
)
def test_an_exact_limit_no_call_could_carry_is_refused_with_its_spelling(key: str, says: str) -> None:
    """An exact: key is matched as written: one whose JSON has a space, keys in another order or
    was cut short (copied from a wrapped denial) would cap nothing, without a word."""
    with pytest.raises(ConfigError) as raised:
        load_config({"limits": {key: 3}})
    assert str(raised.value).startswith(f"limits has the key {key!r}, which no call can carry: ")
    assert says in str(raised.value)


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(
    name=st.from_regex(r"[a-z_:1-9-]{1,12}", fullmatch=True),
    arguments=st.dictionaries(st.text(max_size=10), _JSON, max_size=5),
)
def test_every_exact_key_a_call_carries_is_a_valid_limit(name: str, arguments: dict[str, object]) -> None:
    """The check of an exact: key's spelling refuses no key a call's fingerprint has, whatever the
    tool's name (a colon in it too) and arguments; a key cut to a head and a digest is taken as is."""
    key = fingerprint_call(ToolCall(name, arguments), load_config(None)).fingerprints[0].key
    assert key.startswith(f"exact:{name}:")
    assert load_config({"limits": {key: 3}}).limits[key] == 3


@pytest.mark.parametrize(
    ("config", "said"),
    [
        ("window: 8", "config must be a mapping of keys to values, got a string"),
        ([1, 2], "config must be a mapping of keys to values, got a list"),
        (
            {"ignoreArgs": ["description"]},
            "ignoreArgs must be a mapping of tool names ('*': every tool) to lists of argument names, "
            "such as {'*': [description]}, got a list",
        ),
        ({"limits": 5}, "limits must be a mapping of fingerprint kinds or fingerprints to caps, such as"),
        ({"hostAliases": "a.com"}, "hostAliases must be a mapping of host spellings to the host each folds"),
    ],
)
def test_a_value_that_is_not_a_mapping_names_the_mapping_due_in_yaml_terms(config: Any, said: str) -> None:
    """It said `got list`, `got str` (Python's names) and not what mapping was due."""
    with pytest.raises(ConfigError) as raised:
        load_config(config)
    assert str(raised.value).startswith(said)


@pytest.mark.parametrize(
    ("config", "meant"),
    [({"preset": "SEED"}, "seed"), ({"localHosts": "DENY"}, "deny"), ({"onWorkerFailure": "ALLOW"}, "allow")],
)
def test_a_choice_in_another_case_is_suggested(config: dict[str, str], meant: str) -> None:
    """`preset: SEED` named no suggestion: the spellings share no letter in one case."""
    with pytest.raises(ConfigError) as raised:
        load_config(config)
    assert str(raised.value).endswith(f"; did you mean {meant!r}?")


def test_host_aliases_fold_to_the_end_of_a_chain() -> None:
    """A user's ``open.canada.ca: canada.ca`` beside the default ``open-data.canada.ca:
    open.canada.ca`` folds all three spellings into one (folded once, the first two stayed apart)."""
    config = load_config({"hostAliases": {"open.canada.ca": "canada.ca", "www.b.org": "b.org"}})
    assert config.hostAliases == {"open-data.canada.ca": "canada.ca", "open.canada.ca": "canada.ca"}


@pytest.mark.parametrize(
    ("aliases", "says"),
    [
        ({"a.com": "b.com", "b.com": "a.com"}, "hostAliases folds a.com -> b.com -> a.com, a cycle"),
        (
            {"a.com": "b.com", "b.com": "c.com", "c.com": "a.com"},
            "folds a.com -> b.com -> c.com -> a.com, a cycle",
        ),
        (
            {"https://a.com/x": "b.com"},
            "hostAliases keys must be host names, got 'https://a.com/x' (the host alone",
        ),
        ({"a.com": "b.com/x"}, "hostAliases.a.com must be a host name, got 'b.com/x' (the host alone"),
        ({"a.com": "me@b.com"}, "hostAliases.a.com must be a host name, got 'me@b.com'"),
        ({"*.a.com": "a.com"}, "got '*.a.com' (the host alone, no scheme, port, path, user or wildcard)"),
        ({"a.com:8080": "b.com"}, "hostAliases keys must be host names, got 'a.com:8080'"),
        ({"::1": "localhost"}, "hostAliases keys must be host names, got '::1'"),
        ({"a.com": "b.com:443"}, "hostAliases.a.com must be a host name, got 'b.com:443'"),
    ],
)
def test_host_aliases_that_would_fold_nothing_are_refused(aliases: dict[str, str], says: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(says)):
        load_config({"hostAliases": aliases})


def test_a_bracketed_ipv6_address_is_a_host_alias() -> None:
    """A URL writes an IPv6 host in brackets, and its alias is looked up so: ``[::1]`` is taken
    while a bare ``::1`` (which no URL's host reads as) is refused above."""
    assert load_config({"hostAliases": {"[::1]": "localhost"}}).hostAliases["[::1]"] == "localhost"
