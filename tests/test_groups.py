"""Groups (breaker/core/reading/groups.py): calls that share a key share a group or one of them
stands in for the other's (is loose, or for a URL tool has no group). What a promise by group
lets through: tests/test_group_promises.py."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from breaker import ToolCall, load_config
from breaker.core.reading import fingerprint_call
from breaker.core.reading.groups import NO_GROUP, call_group, loose, stand_ins
from tests.test_corpus import sources

_CONFIG = load_config({})
_IGNORED = _CONFIG.ignoreArgs
#: One file named many ways, and names that are no file of their own.
_PATHS = [
    "a.py",
    "./a.py",
    "a.py/",
    "a.py/.",
    "src/../a.py",
    "/w/a.py",
    "/w//a.py",
    "/w/src/../a.py",
    "/w/./a.py/",
    "b/a.py",
    "..",
    ".",
    "",
    "/",
    "~",
    "~/a.py",
    "~w",
    "a/..",
    "/w/a.py/..",
    "*.py",
    "src/*/../a.py",
    "A.py",
]
_DIRS = ["/w", "/w/", "/w/src/..", "", "src", ".", "~", "/", "/w/b/../"]
_URLS = [
    "https://x.org/a",
    "https://x.org/a#f",
    "x.org/a",
    "HTTPS://X.ORG:443/a",
    "https://x.org/%61",
    "https://x.org/a/",
    "https://www.x.org//a?utm_source=z",
    "https://x.org/b/../a",
    "https://x.org/./a",
    "http://x.org:80/a?b=1&a=2",
    "https://x.org/a?a=2&b=1",
    "https://y.org/a",
    "https://x.org",
    "https://x.org/?",
    "//x.org/a",
    "https://x.org/a\\b",
    "https://x.org/A",
    "https://u@x.org/a",
    "x.org:8080/a",
    "https://x.org/a/b/..",
    "https://x.org/a/.",
    "ftp://x.org/a",
    " https://x.org/a",
    "a",
]
_TEXTS = ["a", "a/b", "", "..", "~", " a"]
_VALUES: dict[str, Any] = {
    "path": st.sampled_from(_PATHS),
    "file_path": st.sampled_from(_PATHS),
    "source_path": st.sampled_from(_PATHS),
    "cwd": st.sampled_from(_DIRS),
    "workdir": st.sampled_from(_DIRS),
    "url": st.sampled_from(_URLS),
    "href": st.sampled_from(_URLS),
    "command": st.sampled_from([f"curl -s '{url}'" for url in _URLS[:6]] + ["echo a", "cat a.py"]),
    "urls": st.lists(st.sampled_from(_URLS), max_size=2),
    "old_string": st.sampled_from(_TEXTS),
    "description": st.text(max_size=3),  # a decoy
    "offset": st.sampled_from([1, 1.0, 2, True, None]),
    "paths": st.lists(st.sampled_from(_PATHS), max_size=2),
    "options": st.dictionaries(st.sampled_from(["a", "b"]), st.sampled_from(_PATHS), max_size=1),
}
_TOOLS = [
    "read",
    "edit",
    "write",
    "Glob",
    "mcp__db__query",
    "grep",
    "bash",
    "web_fetch",
    "WebFetch",
    "file_search",
]
_ARGUMENTS = st.fixed_dictionaries({}, optional={name: values for name, values in _VALUES.items()})


def _key(tool: str, arguments: Any) -> str:
    return fingerprint_call(ToolCall(tool, arguments), _CONFIG).fingerprints[0].key


def _capped_keys(tool: str, arguments: Any) -> set[str]:
    """The keys of a call that a cap of the defaults counts."""
    found = fingerprint_call(ToolCall(tool, arguments), _CONFIG).fingerprints
    return {fp.key for fp in found if _CONFIG.limit_for(fp.kind, fp.key) is not None}


def _group(tool: str, arguments: Any) -> int:
    return call_group(tool, arguments, _IGNORED, _CONFIG.url_calls_grouped)


def _counted(tool: str, group: int, other: int) -> bool:
    """Whether a call of ``tool`` whose group is ``group`` counts a call of group ``other`` that
    shares a key with it, or is never let through by its group at all."""
    others = stand_ins(tool)
    return group in (NO_GROUP, *others) or other == group or other in others


def _alike(one: tuple[str, int], other: tuple[str, int]) -> bool:
    """Whether the groups of two calls that share a key are as they must be: each counts the other."""
    return _counted(*one, other[1]) and _counted(*other, one[1])


@settings(max_examples=3000, deadline=None)
@given(tools=st.tuples(st.sampled_from(_TOOLS), st.sampled_from(_TOOLS)), one=_ARGUMENTS, other=_ARGUMENTS)
def test_calls_that_share_a_capped_key_share_a_group_or_one_stands_in(
    tools: tuple[str, str], one: dict[str, Any], other: dict[str, Any]
) -> None:
    groups = [(tool, _group(tool, arguments)) for tool, arguments in zip(tools, (one, other), strict=True)]
    for tool, group in groups:
        if tool == "bash":
            assert group == NO_GROUP  # a shell line: keys no group follows
    if _capped_keys(tools[0], one) & _capped_keys(tools[1], other):
        assert _alike(*groups), (tools, one, other)


#: Calls that name a page: shell lines that fetch it, and calls of URL tools given it.
_PAGE_CALLS: list[tuple[str, dict[str, Any]]] = [
    *[("bash", {"command": f"curl -s '{url}' -o /tmp/p"}) for url in _URLS],
    *[(tool, {"url": url}) for tool in ("web_fetch", "WebFetch", "browse_page") for url in _URLS],
    *[("web_fetch", {"href": url, "prompt": "p"}) for url in _URLS],
]


def test_every_two_calls_naming_one_page_each_count_the_other() -> None:
    """Every pair of calls that name a page, however spelled, by whichever tool: when they share a
    capped key, each is counted against the other (its group, a loose one, or a shell line's)."""
    read = [
        ((tool, _group(tool, arguments)), _capped_keys(tool, arguments)) for tool, arguments in _PAGE_CALLS
    ]
    shared = 0
    for one, keys in read:
        for other, other_keys in read:
            if keys & other_keys:
                shared += 1
                assert _alike(one, other), (one, other, keys & other_keys)
    assert shared > 2 * len(read)


def _respelled(name: str, value: Any, how: int) -> Any:
    """``value`` written another way that may resolve alike (paths, directories, decoys, URLs)."""
    if name == "description":
        return f"{value}!"
    if name in ("url", "href") and isinstance(value, str):
        ways = ["https://x.org/a", value.upper(), value + "#top", value.replace("a", "%61"), value + "/"]
        ways += [
            value.replace("x.org", "www.X.org:443"),
            value + "?utm_source=q",
            value.replace("/a", "/b/../a"),
        ]
        return ways[how % len(ways)]
    if name in ("path", "file_path", "source_path", "cwd", "workdir") and isinstance(value, str):
        ways = [value, f"./{value}", f"{value}/", f"{value}/.", f"q/../{value}", value.replace("/", "//")]
        ways += [f"/w/{value}", f"{value}/..", f"/{value}"]
        return ways[how % len(ways)]
    return value


_HOWS = st.lists(st.integers(0, 50), min_size=12, max_size=12)


@settings(max_examples=3000, deadline=None)
@given(tool=st.sampled_from(_TOOLS), one=_ARGUMENTS, hows=_HOWS)
def test_calls_respelled_to_the_same_key_share_a_group_or_one_is_loose(
    tool: str, one: dict[str, Any], hows: list[int]
) -> None:
    other = {
        name: _respelled(name, value, how) for (name, value), how in zip(one.items(), hows, strict=False)
    }
    if _capped_keys(tool, one) & _capped_keys(tool, other):
        assert _alike((tool, _group(tool, one)), (tool, _group(tool, other))), (one, other)


def test_a_path_is_grouped_by_its_last_name_and_one_without_its_own_is_loose() -> None:
    group = _group("read", {"path": "/w/src/a.py"})
    assert _group("read", {"path": "./b/../a.py/.", "description": "again"}) == group
    assert _group("read", {"path": "/w/src/b.py"}) != group
    assert _group("read", {"path": "/w/src/a.py", "offset": 9}) != group
    assert _group("edit", {"path": "/w/src/a.py"}) != group
    for spelled in ("..", "a/..", "~", "/", "", "."):
        assert _group("read", {"path": spelled}) == loose("read")
    assert _group("read", {"old_string": ".."}) != loose("read")  # no path


def test_real_calls_that_share_a_capped_key_share_a_group_or_one_stands_in() -> None:
    present, _ = sources.real_sources()
    if not present:
        pytest.skip("../shared/real-sessions* are not there")
    calls = 0
    for source in present:
        for session in source.sessions:
            seen: dict[str, set[tuple[str, int]]] = {}
            for event in session.events:
                call = getattr(event, "call", None)
                if call is None:
                    continue
                calls += 1
                this = (call.name, _group(call.name, call.arguments))
                for key in _capped_keys(call.name, call.arguments):
                    alike = seen.setdefault(key, set())
                    assert all(_alike(this, other) for other in alike), (source.name, call)
                    alike.add(this)
    assert calls > 1000


def test_a_url_tool_call_is_grouped_by_the_last_name_of_its_plain_url_whatever_the_tool() -> None:
    group = _group("web_fetch", {"url": "https://docs.x.org/guide/page-1.html#usage", "prompt": "sum"})
    assert _group("WebFetch", {"url": "http://x.org/page-1.html/"}) == group
    assert _group("web_fetch", {"url": "https://docs.x.org/guide/page-2.html"}) != group
    for spelled in ("https://x.org/%70age-1.html", "https://x.org/a/../page-1.html", "//x.org/page-1.html"):
        assert _group("web_fetch", {"url": spelled}) == loose("web_fetch") == loose("fetch")
    assert _group("web_fetch", {"url": "https://x.org/a", "href": "https://x.org/b"}) == loose("web_fetch")
    assert _group("web_fetch", {"urls": ["https://x.org/a"]}) == loose("web_fetch")
    # Given no URL, a call of a URL tool is grouped by its arguments.
    assert _group("web_search", {"query": "a"}) not in (NO_GROUP, _group("web_search", {"query": "b"}))
    assert stand_ins("web_fetch") == (loose("web_fetch"), NO_GROUP)
    assert stand_ins("read") == (loose("read"),)


def test_url_tools_have_no_group_while_a_cap_counts_a_key_their_group_does_not_follow() -> None:
    for limits in ({"site": 3}, {"host": 9}, {"family:http-fetch": 4}, {"site:x.org": 2}):
        config = load_config({"limits": limits})
        assert not config.url_calls_grouped
        assert call_group("web_fetch", {"url": "https://x.org/a"}, config.ignoreArgs, False) == NO_GROUP
        assert call_group("read", {"path": "a"}, config.ignoreArgs, False) == _group("read", {"path": "a"})
    assert load_config({"limits": {"net": 2, "verb:curl": 3}}).url_calls_grouped
