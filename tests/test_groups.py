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
from breaker.core.reading.groups import NO_GROUP, call_group, loose
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
_URLS = ["https://x.org/a", "https://x.org/a#f", "x.org/a", "HTTPS://X.ORG:443/a", "https://x.org/%61"]
_TEXTS = ["a", "a/b", "", "..", "~", " a"]
_VALUES: dict[str, Any] = {
    "path": st.sampled_from(_PATHS),
    "file_path": st.sampled_from(_PATHS),
    "source_path": st.sampled_from(_PATHS),
    "cwd": st.sampled_from(_DIRS),
    "workdir": st.sampled_from(_DIRS),
    "url": st.sampled_from(_URLS),
    "old_string": st.sampled_from(_TEXTS),
    "description": st.text(max_size=3),  # a decoy
    "offset": st.sampled_from([1, 1.0, 2, True, None]),
    "paths": st.lists(st.sampled_from(_PATHS), max_size=2),
    "options": st.dictionaries(st.sampled_from(["a", "b"]), st.sampled_from(_PATHS), max_size=1),
}
_TOOLS = ["read", "edit", "write", "Glob", "mcp__db__query", "grep", "bash", "web_fetch"]
_ARGUMENTS = st.fixed_dictionaries({}, optional={name: values for name, values in _VALUES.items()})


def _key(tool: str, arguments: Any) -> str:
    return fingerprint_call(ToolCall(tool, arguments), _CONFIG).fingerprints[0].key


def _alike(tool: str, one: int, other: int) -> bool:
    """Whether the groups of two calls that share a key are as they must be."""
    return one == other or loose(tool) in (one, other)


@settings(max_examples=3000, deadline=None)
@given(tool=st.sampled_from(_TOOLS), one=_ARGUMENTS, other=_ARGUMENTS)
def test_calls_that_share_their_key_share_a_group_or_one_is_loose(
    tool: str, one: dict[str, Any], other: dict[str, Any]
) -> None:
    groups = call_group(tool, one, _IGNORED), call_group(tool, other, _IGNORED)
    if tool in ("bash", "web_fetch"):
        assert groups == (NO_GROUP, NO_GROUP)  # keys besides exact: no group
    elif _key(tool, one) == _key(tool, other):
        assert _alike(tool, *groups), (one, other)


def _respelled(name: str, value: Any, how: int) -> Any:
    """``value`` written another way that may resolve alike (paths, directories, decoys, URLs)."""
    if name == "description":
        return f"{value}!"
    if name == "url" and isinstance(value, str):
        return ["https://x.org/a", value.upper(), value + "#top", value.replace("a", "%61")][how % 4]
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
    if _key(tool, one) == _key(tool, other):
        assert _alike(tool, call_group(tool, one, _IGNORED), call_group(tool, other, _IGNORED)), (one, other)


def test_a_path_is_grouped_by_its_last_name_and_one_without_its_own_is_loose() -> None:
    group = call_group("read", {"path": "/w/src/a.py"}, _IGNORED)
    assert call_group("read", {"path": "./b/../a.py/.", "description": "again"}, _IGNORED) == group
    assert call_group("read", {"path": "/w/src/b.py"}, _IGNORED) != group
    assert call_group("read", {"path": "/w/src/a.py", "offset": 9}, _IGNORED) != group
    assert call_group("edit", {"path": "/w/src/a.py"}, _IGNORED) != group
    for spelled in ("..", "a/..", "~", "/", "", "."):
        assert call_group("read", {"path": spelled}, _IGNORED) == loose("read")
    assert call_group("read", {"old_string": ".."}, _IGNORED) != loose("read")  # no path


def test_real_calls_that_share_their_key_share_a_group_or_one_is_loose() -> None:
    present, _ = sources.real_sources()
    if not present:
        pytest.skip("../shared/real-sessions* are not there")
    calls = 0
    for source in present:
        for session in source.sessions:
            seen: dict[str, set[int]] = {}
            for event in session.events:
                call = getattr(event, "call", None)
                if call is None:
                    continue
                calls += 1
                group = call_group(call.name, call.arguments, _IGNORED)
                groups = seen.setdefault(_key(call.name, call.arguments), set())
                groups.add(group)
                assert len(groups - {loose(call.name)}) <= 1, (source.name, call)
    assert calls > 1000


#: Calls of file tools named many ways (some loose), and one shell call (no group).
_POOL: list[tuple[str, dict[str, Any]]] = [
    *[("read", {"path": path}) for path in ("/w/a.py", "./a.py", "a.py/", "/w/src/../a.py", "..", "/w/b.py")],
    ("read", {"path": "a.py", "cwd": "/w"}),
    ("read", {"path": "/w/a.py", "cwd": "/w", "description": "again"}),
    ("edit", {"path": "/w/a.py", "old_string": "x", "new_string": "y"}),
    ("edit", {"path": "/w/a.py", "old_string": "y", "new_string": "x"}),
    ("grep", {"pattern": "x", "path": "/w"}),
    ("mcp__db__query", {"sql": "select 1", "limit": 5}),
    ("bash", {"command": "cat /w/a.py"}),
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
            group = call_group(tool, call.arguments, breaker.config.ignoreArgs)
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
    named = {call_group("read", {"path": f"/w/{index}.js"}, {}) for index in range(3)}
    assert set(more.groups) == named and more.counts == (1, 1, 1)
    assert call_group("read", {"path": "/w/3.js"}, {}) not in more.groups


def test_a_group_in_the_window_has_the_room_its_calls_there_leave() -> None:
    """A read of a file read twice in the window is let through by its group while fewer than the
    room of 4 are of its group in the window and since, and stops being so at 4."""
    breaker = Breaker(load_config({}))
    same = {"path": "/w/a.js"}
    group = call_group("read", same, {})

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
