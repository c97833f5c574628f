"""Groups (breaker/core/reading/groups.py): calls that share a key share a group or one of them is
loose, and a call let through by its group (the conditional promise's ``groups`` and ``room``)
is never one the breaker stops, whatever the calls, results and turns before it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from breaker import Allow, Ask, Breaker, ToolCall, load_config
from breaker.core.deciding.passes import GROUPS_NAMED, Conditional, by_group
from breaker.core.reading import fingerprint_call
from breaker.core.reading.groups import APART, NO_GROUP, call_group, loose, stand_ins
from breaker.core.reading.news import breaks, digest
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


#: Calls of file tools and of URL tools named many ways (some loose), and shell calls (no group).
_POOL: list[tuple[str, dict[str, Any]]] = [
    *[("read", {"path": path}) for path in ("/w/a.py", "./a.py", "a.py/", "/w/src/../a.py", "..", "/w/b.py")],
    ("read", {"path": "a.py", "cwd": "/w"}),
    ("read", {"path": "/w/a.py", "cwd": "/w", "description": "again"}),
    ("edit", {"path": "/w/a.py", "old_string": "x", "new_string": "y"}),
    ("edit", {"path": "/w/a.py", "old_string": "y", "new_string": "x"}),
    ("grep", {"pattern": "x", "path": "/w"}),
    ("mcp__db__query", {"sql": "select 1", "limit": 5}),
    ("bash", {"command": "cat /w/a.py"}),
    # One page fetched many ways, by two URL tools and a shell line, and another page.
    ("web_fetch", {"url": "https://x.org/docs/a", "prompt": "p"}),
    ("web_fetch", {"url": "https://www.x.org/docs/a/?utm_source=q"}),
    ("WebFetch", {"url": "x.org/docs/a"}),
    ("web_fetch", {"url": "https://x.org/docs/%61"}),
    ("web_fetch", {"url": "https://x.org/docs/b"}),
    ("bash", {"command": "curl -s https://x.org/docs/a"}),
    ("web_search", {"query": "x docs"}),
]
_RESULTS: list[tuple[str, dict[str, Any] | None]] = [
    ("news {n}", {"isError": False}),
    ("news {n}", None),
    ("same", {"isError": False}),
    ("Error: no such file", {"isError": True}),
    ("boom {n}\n[exit code: 1]", {"exitCode": 1}),
]
_GROUP_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("call"), st.integers(0, len(_POOL) - 1), st.just(0)),
        st.tuples(st.just("result"), st.integers(0, len(_RESULTS) - 1), st.integers(0, 7)),
        st.tuples(st.just("human"), st.just(0), st.just(0)),
        st.tuples(st.just("step"), st.just(0), st.just(0)),
    ),
    max_size=80,
)
_GROUP_CONFIGS = [
    {},
    {"limits": {"exact": 3}},
    {"window": 4},
    {"failLimit": 2},
    {"onLimit": "ask"},
    {"preset": "seed"},
    {"limits": {"net": 2}},
    {"limits": {"site": 3}},  # a cap on a key a group does not follow: URL tools have none
]


@dataclass
class _GroupPromise:
    """A promise by group as the shim holds it: how many of the window's calls are of each group,
    the room, the groups of the calls sent since, and whether every result since was news."""

    more: Conditional
    forbidden: set[int]
    since: list[int] = field(default_factory=list)
    holds: bool = True

    @property
    def counts(self) -> dict[int, int]:
        return dict(zip(self.more.groups or (), self.more.counts, strict=True))

    def lets_through(self, tool: str, group: int) -> bool:
        return self.holds and by_group(self.more, tool, group, self.since)


@settings(max_examples=500, deadline=None)
@given(steps=_GROUP_STEPS, raw=st.sampled_from(_GROUP_CONFIGS))
def test_no_call_let_through_by_its_group_is_stopped_while_the_results_are_news(
    steps: list[Any], raw: dict[str, Any]
) -> None:
    breaker = Breaker(load_config(raw))
    promises: list[_GroupPromise] = []
    running: list[tuple[str, str]] = []
    for index, (kind, which, pick) in enumerate(steps):
        if kind == "call":
            tool, arguments = _POOL[which]
            call = ToolCall(tool, dict(arguments), f"c{index}")
            group = call_group(
                tool, call.arguments, breaker.config.ignoreArgs, breaker.config.url_calls_grouped
            )
            if any(promise.lets_through(tool, group) for promise in promises):
                assert not isinstance(breaker.preflight(1, call), Ask)
                assert isinstance(breaker.decide(1, call), Allow), call
            else:
                breaker.preflight(1, call)
                if not isinstance(breaker.decide(1, call), Allow):
                    call = call._replace(call_id="")
            for promise in promises:
                promise.since.append(group)
            if call.call_id:
                running.append((call.call_id, tool))
        elif kind == "result" and running:
            call_id, tool = running.pop(pick % len(running))
            text, facts = _RESULTS[which]
            text = text.replace("{n}", str(index))
            for promise in promises:
                promise.holds = promise.holds and not breaks(tool, text, facts, promise.forbidden)
                promise.forbidden.add(digest(tool, text))
            breaker.record_result(1, call_id, text, facts)
        elif kind == "human":
            breaker.human_message(1)
        elif kind == "step":
            breaker.new_step(1)
        more = breaker.conditional(1, breaker.passes(1))
        if more is not None and more.groups is not None:
            assert len(more.groups) <= GROUPS_NAMED
            assert len(more.counts) == len(more.groups)
            promises.append(_GroupPromise(more, set(more.digests)))
        promises = [promise for promise in promises if promise.holds]


def test_distinct_reads_are_promised_by_group_and_a_repeat_is_named() -> None:
    """Under the defaults, the window's reads are named, each with how many of the window's calls
    are of its group, and a new one has the caps' room."""
    breaker = Breaker(load_config({}))
    for index in range(3):
        call = ToolCall("read", {"path": f"/w/{index}.js"}, f"c{index}")
        assert isinstance(breaker.decide(1, call), Allow)
        breaker.record_result(1, call.call_id, f"line {index}", {"isError": False})
    more = breaker.conditional(1, breaker.passes(1))
    assert more is not None and more.groups is not None and more.room == 4
    named = {_group("read", {"path": f"/w/{index}.js"}) for index in range(3)}
    assert set(more.groups) == named and more.counts == (1, 1, 1)
    assert _group("read", {"path": "/w/3.js"}) not in more.groups


def test_a_group_in_the_window_has_the_room_its_calls_there_leave() -> None:
    """A read of a file read twice in the window is let through by its group while fewer than the
    room of 4 are of its group in the window and since, and stops being so at 4."""
    breaker = Breaker(load_config({}))
    same = {"path": "/w/a.js"}
    group = _group("read", same)

    def read(index: int, arguments: dict[str, Any]) -> Any:
        call = ToolCall("read", arguments, f"c{index}")
        assert isinstance(breaker.decide(1, call), Allow)
        breaker.record_result(1, call.call_id, f"line {index}", {"isError": False})
        more = breaker.conditional(1, breaker.passes(1))
        assert more is not None and more.groups is not None
        return _GroupPromise(more, set(more.digests))

    read(0, same)
    read(1, {"path": "/w/b.js"})
    promise = read(2, same)
    assert promise.counts[group] == 2 and promise.lets_through("read", group)
    promise.since.append(group)
    assert promise.lets_through("read", group)
    promise.since.append(group)
    assert not promise.lets_through("read", group)  # 2 in the window and 2 since: it would be the 5th
    assert read(3, same).lets_through("read", group)
    promise = read(4, same)
    assert promise.counts[group] == 4 and not promise.lets_through("read", group)


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


def test_a_shell_line_that_fetches_in_the_window_or_any_sent_since_counts_against_a_url_tool_call() -> None:
    """A fetch let through by its group while three shell lines that may fetch its page are in the
    window and since, and not at a fourth; a shell line in the window that fetches nothing is not
    named (``APART``), as it shares no key with a fetch."""
    breaker = Breaker(load_config({}))
    for index, command in enumerate(["curl -s https://x.org/p/0", "echo done", "curl -s x.org/p/1"]):
        call = ToolCall("bash", {"command": command}, f"c{index}")
        assert isinstance(breaker.decide(1, call), Allow)
        breaker.record_result(1, call.call_id, f"line {index}", {"isError": False})
    more = breaker.conditional(1, breaker.passes(1))
    assert more is not None and more.groups is not None
    assert dict(zip(more.groups, more.counts, strict=True))[NO_GROUP] == 2 and APART not in more.groups
    promise = _GroupPromise(more, set(more.digests))
    page = _group("web_fetch", {"url": "https://x.org/a"})
    assert promise.lets_through("web_fetch", page) and promise.lets_through(
        "read", _group("read", {"path": "a"})
    )
    promise.since.append(NO_GROUP)
    assert promise.lets_through("web_fetch", page)
    promise.since.append(NO_GROUP)
    assert not promise.lets_through("web_fetch", page)  # it would count a fifth, were they all its curl
    assert promise.lets_through("read", _group("read", {"path": "a"}))


def test_a_fetch_of_a_page_a_shell_line_fetched_is_not_let_through_by_its_group() -> None:
    """Under a cap of 2 on ``net:``, a curl of a page and then a fetch of it: the fetch is the
    second on the page's key and is stopped, so no promise lets it through by its group."""
    breaker = Breaker(load_config({"limits": {"net": 2}}))
    curl = ToolCall("bash", {"command": "curl -s https://x.org/docs/a"}, "c0")
    assert isinstance(breaker.decide(1, curl), Allow)
    breaker.record_result(1, "c0", "<html>a</html>", {"isError": False})
    more = breaker.conditional(1, breaker.passes(1))
    assert more is not None and more.groups is not None
    fetch = ToolCall("web_fetch", {"url": "https://x.org/docs/a"}, "c1")
    assert not _GroupPromise(more, set(more.digests)).lets_through("web_fetch", _group(*fetch[:2]))
    assert not isinstance(breaker.decide(1, fetch), Allow)
