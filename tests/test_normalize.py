"""The normalizer: canonical JSON, bounded keys, canonical URLs (T9); command lines are
tests/test_normalize_commands.py's."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from breaker.core.reading.canonical import (
    CONDENSED_CHARS,
    MAX_KEY_CHARS,
    bounded_key,
    canonical_json,
    json_key,
)
from breaker.core.reading.shell import SimpleCommand, lex_shell
from breaker.core.reading.urls import canonical_url

ALIASES = {"open-data.canada.ca": "open.canada.ca"}


def resource(url: str, *, scheme_optional: bool = False) -> str | None:
    canonical = canonical_url(url, ALIASES, scheme_optional=scheme_optional)
    return None if canonical is None else canonical.resource


def commands(text: str) -> list[list[str]]:
    return [part.words for part in lex_shell(text).parts if isinstance(part, SimpleCommand)]


# --- canonical JSON and bounded keys ---------------------------------------------------------


def test_canonical_json_sorts_keys_deeply_and_is_compact() -> None:
    assert canonical_json({"b": 1, "a": {"d": [1, {"z": 0, "y": None}], "c": "é"}}) == (
        '{"a":{"c":"é","d":[1,{"y":null,"z":0}]},"b":1}'
    )


def test_canonical_json_survives_cycles() -> None:
    cyclic: dict[str, object] = {"a": 1}
    cyclic["self"] = cyclic
    looped: list[object] = [1]
    looped.append(looped)
    assert canonical_json(cyclic) == '{"a":1,"self":"<cycle>"}'
    assert canonical_json(looped) == '[1,"<cycle>"]'


def test_canonical_json_survives_nesting_far_beyond_the_recursion_limit() -> None:
    deep: object = "leaf"
    for _ in range(200_000):
        deep = [deep]
    text = canonical_json(deep)
    assert text.startswith("[[[[") and '"leaf"' in text and text.endswith("]]]]")


def test_canonical_json_matches_the_plain_encoder_for_deep_but_ordinary_values() -> None:
    deep: object = {"b": 2, "a": 1}
    for depth in range(200):
        deep = {"k": deep, "j": [depth, {"x": None}]}
    assert canonical_json(deep) == json.dumps(deep, sort_keys=True, separators=(",", ":"))


def test_canonical_json_takes_non_json_values_without_raising() -> None:
    weird = {1: b"\xff", False: (1, 2), None: {3}, "huge": 10**5000, "nan": float("nan"), "s": "\ud800\x00"}
    text = canonical_json(weird)
    assert '"1":"\\\\xff"' in text and '"false":[1,2]' in text and '"null":"<set>"' in text
    assert "NaN" in text and "0x" in text


def test_bounded_key_keeps_short_keys_and_digests_long_ones() -> None:
    assert bounded_key("net:x.org/") == "net:x.org/"
    long_a, long_b = "cmd:" + "a" * 5000, "cmd:" + "a" * 4999 + "b"
    bounded_a, bounded_b = bounded_key(long_a), bounded_key(long_b)
    assert len(bounded_a) == MAX_KEY_CHARS and bounded_a.startswith("cmd:aaaa")
    assert "…#" in bounded_a and bounded_a != bounded_b
    assert bounded_key(long_a) == bounded_a


LONG = 'line "one"\n\tsecond \\ line\n' * 80


@pytest.mark.parametrize(
    "value",
    [
        {"file_path": "a.py", "old_string": LONG, "new_string": LONG + "x"},
        {"command": LONG},
        {"content": "\ud800" + LONG, "file_path": "b.py", "mode": 3, "flag": True, "none": None},
        {"content": "x" * CONDENSED_CHARS, "file_path": "c.py"},
        {"content": "x" * CONDENSED_CHARS, "note": LONG},
        {"path": "short"},
        [LONG],
    ],
)
def test_a_json_key_names_one_value_with_the_head_its_json_has(value: object) -> None:
    key = json_key("exact:edit:", value)
    plain = bounded_key("exact:edit:" + canonical_json(value))
    assert len(key) == len(plain) and key.encode("utf-8")
    assert key.partition("…#")[0] == plain.partition("…#")[0]
    assert json_key("exact:edit:", json.loads(json.dumps(value))) == key  # the same value, anew
    if isinstance(value, dict):
        for name, child in value.items():
            changed = {**value, name: (child + "y") if isinstance(child, str) else "other"}
            assert json_key("exact:edit:", changed) != key
        assert json_key("exact:write:", value) != key


def test_a_json_key_of_condensed_texts_only_is_the_bounded_key_of_its_json() -> None:
    value = {"content": "x" * CONDENSED_CHARS, "file_path": "c.py"}
    assert json_key("exact:write:", value) == bounded_key("exact:write:" + canonical_json(value))


def test_bounded_key_is_always_valid_utf8() -> None:
    key = bounded_key("exact:x:\ud800")
    key.encode("utf-8")
    assert key == "exact:x:\\ud800"
    bounded_key("exact:" + "\udfff" * 10_000).encode("utf-8")


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
        lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    )
)
def test_canonical_json_agrees_with_json_dumps_on_json_values(value: object) -> None:
    expected = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert canonical_json(value) == expected


# --- T9: URL normalizer units ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://open.canada.ca/", "open.canada.ca/"),
        ("http://open.canada.ca", "open.canada.ca/"),
        ("HTTPS://WWW.Open.Canada.CA./", "open.canada.ca/"),
        ("https://open-data.canada.ca/", "open.canada.ca/"),
        ("https://www.open-data.canada.ca./data/", "open.canada.ca/data"),
        ("https://x.org:443/a", "x.org/a"),
        ("http://x.org:80/a", "x.org/a"),
        ("http://localhost:8080/api/", "localhost:8080/api"),
        ("https://user:secret@x.org/a", "x.org/a"),
        ("https://x.org/a#section-2", "x.org/a"),
        ("https://x.org/a/b///", "x.org/a/b"),
        ("https://x.org/?b=2&a=1", "x.org/?a=1&b=2"),
        ("https://x.org/p?utm_source=x&UTM_Medium=y&fbclid=1&gclid=2&page=2", "x.org/p?page=2"),
        ("https://x.org/p?utm_source=x", "x.org/p"),
        ("https://x.org/p?", "x.org/p"),
        ("http://[::1]:8080/", "[::1]:8080/"),
        ("http://[0:0:0:0:0:0:0:1]/", "[::1]/"),
        ("http://[fe80::1%25eth0]/", "[fe80::1]/"),
        ("http://127.1:8080/", "127.0.0.1:8080/"),
        ("http://0x7f.0.0.1:8080/", "127.0.0.1:8080/"),
        ("http://2130706433:8080/", "127.0.0.1:8080/"),
        ("http://0177.0.0.01:8080/", "127.0.0.1:8080/"),
        ("https://1.2.3.4.5/", "1.2.3.4.5/"),
        ("https://x.org/@user/a@b", "x.org/@user/a@b"),
    ],
)
def test_urls_are_canonicalised(url: str, expected: str) -> None:
    assert resource(url) == expected


def test_pagination_is_a_new_resource_but_tracking_is_not() -> None:
    base = "https://api.github.com/repos/x/y/commits"
    assert resource(base + "?page=2") != resource(base + "?page=3")
    assert resource(base + "?page=2&utm_source=x") == resource(base + "?page=2")


@pytest.mark.parametrize("url", ["ftp://x.org/", "file:///etc/passwd", "https://", "https://a b/", "x.org"])
def test_non_http_urls_are_not_resources(url: str) -> None:
    assert resource(url) is None


@pytest.mark.parametrize(
    ("spelled", "expected"),
    [
        ("open.canada.ca", "open.canada.ca/"),
        ("open-data.canada.ca/x?y=1", "open.canada.ca/x?y=1"),
        ("localhost:3000", "localhost:3000/"),
        ("127.0.0.1/x", "127.0.0.1/x"),
        ("//x.org/a", "x.org/a"),
        ("README", None),
        ("ftp://x.org", None),
        ("mailto:me@x.org", None),
        ("javascript:alert(1)", None),
        ("x.org:notaport", None),
    ],
)
def test_scheme_is_optional_for_fetcher_arguments(spelled: str, expected: str | None) -> None:
    assert resource(spelled, scheme_optional=True) == expected


@pytest.mark.parametrize(
    ("url", "site"),
    [
        ("https://api.github.com/x", "github.com"),
        ("https://github.com/x", "github.com"),
        ("https://www.bbc.co.uk/news", "bbc.co.uk"),
        ("https://a.b.example.com.au/", "example.com.au"),
        ("http://192.168.1.10:8000/", "192.168.1.10"),
        ("http://[::1]:8000/", "[::1]"),
        ("http://localhost:8000/", "localhost"),
    ],
)
def test_site_is_the_registrable_part_and_ip_literals_stand_alone(url: str, site: str) -> None:
    canonical = canonical_url(url, ALIASES)
    assert canonical is not None and canonical.site == site


@pytest.mark.parametrize(
    "host",
    [
        "localhost",
        "app.localhost",
        "127.0.0.1",
        "127.8.9.10",
        "0.0.0.0",
        "10.1.2.3",
        "172.16.0.1",
        "172.31.255.255",
        "192.168.0.1",
        "169.254.169.254",
        "[::1]",
        "[::]",
        "[fe80::1]",
        "[fd00::1]",
        "[::ffff:127.0.0.1]",
        "[::ffff:192.168.1.1]",
        "127.1",
        "0x7f.1",
        "2130706433",
        "0177.0.0.1",
        "10.1",
        "192.168.257",
    ],
)
def test_local_hosts_are_recognised_without_dns(host: str) -> None:
    canonical = canonical_url(f"http://{host}:8080/", ALIASES)
    assert canonical is not None and canonical.local


@pytest.mark.parametrize(
    "host",
    [
        "example.com",
        "8.8.8.8",
        "172.32.0.1",
        "192.169.0.1",
        "[2001:db8::1]",
        "[::ffff:8.8.8.8]",
        "localhost.example.com",
        "8.8.2056",
        "134744072",
        "256.1.1.1",
    ],
)
def test_public_hosts_are_not_local(host: str) -> None:
    canonical = canonical_url(f"http://{host}/", ALIASES)
    assert canonical is not None and not canonical.local


def test_alias_fold_is_reported_with_the_spelling_seen() -> None:
    canonical = canonical_url("https://WWW.Open-Data.Canada.ca./", ALIASES)
    assert canonical is not None
    assert (
        canonical.aliased
        and canonical.seen_host == "WWW.Open-Data.Canada.ca."
        and canonical.host == ("open.canada.ca")
    )
