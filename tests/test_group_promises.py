"""Promises by group (breaker/core/deciding/passes.py ``by_group``): a call let through by its
group (the conditional promise's ``groups``, ``window`` and ``room``) is never one the breaker
stops, whatever the calls, results and turns before it; it counts every call still in its window
and no call pushed out of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from breaker import Allow, Ask, Breaker, ToolCall, load_config
from breaker.core.deciding.passes import GROUPS_NAMED, UNNAMED, Conditional, by_group
from breaker.core.reading.groups import APART, NO_GROUP, call_group
from breaker.core.reading.news import breaks, digest

_IGNORED = load_config({}).ignoreArgs


def _group(tool: str, arguments: Any) -> int:
    return call_group(tool, arguments, _IGNORED, True)


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
    # Windows that calls soon pass through, with caps they can reach: which calls are still in a
    # call's window is what decides its room.
    {"window": 4, "limits": {"exact": 2, "net": 2}},
    {"window": 6, "limits": {"exact": 3}},
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
    size: int = 16  # the window's
    since: list[int] = field(default_factory=list)
    holds: bool = True

    @property
    def counts(self) -> dict[int, int]:
        return self.more.counts()

    def lets_through(self, tool: str, group: int) -> bool:
        return self.holds and by_group(self.more, tool, group, self.since, self.size)


@settings(max_examples=500, deadline=None)
@given(steps=_GROUP_STEPS, raw=st.sampled_from(_GROUP_CONFIGS))
def test_no_call_let_through_by_its_group_is_stopped_while_the_results_are_news(
    steps: list[Any], raw: dict[str, Any]
) -> None:
    _check_promises_by_group(steps, raw, _POOL)


#: Calls that leave the workspace as it was, of a few groups: a call soon comes again with the
#: same keys, and no change in between makes it another action.
_STILL = [_POOL[index] for index in (0, 1, 5, 10, 12, 13, 15, 17)]
_STILL_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("call"), st.integers(0, len(_STILL) - 1), st.just(0)),
        st.tuples(st.just("result"), st.just(0), st.integers(0, 7)),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(
    steps=_STILL_STEPS,
    raw=st.sampled_from(
        [{"window": 4, "limits": {"exact": 2, "net": 2}}, {"window": 5, "limits": {"exact": 3}}]
    ),
)
def test_a_call_let_through_by_its_group_counts_every_call_still_in_its_window(
    steps: list[Any], raw: dict[str, Any]
) -> None:
    """Calls that soon come again in a small window under low caps: a promise by group counts
    the window's calls and those sent since that the call's window still holds, none fewer."""
    _check_promises_by_group(steps, raw, _STILL)


def _check_promises_by_group(
    steps: list[Any], raw: dict[str, Any], pool: list[tuple[str, dict[str, Any]]]
) -> None:
    """Each step's call, result, human message or model step; after each, the promise the worker
    gives; every call some promise lets through by its group is allowed."""
    breaker = Breaker(load_config(raw))
    promises: list[_GroupPromise] = []
    running: list[tuple[str, str]] = []
    for index, (kind, which, pick) in enumerate(steps):
        if kind == "call":
            tool, arguments = pool[which]
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
            state = breaker._agents.get(1)
            assert len(more.window) == (0 if state is None else len(state.repeats.groups))
            promises.append(_GroupPromise(more, set(more.digests), breaker.config.window))
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
    assert set(more.groups) == named and list(more.counts().values()) == [1, 1, 1]
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
    assert more.counts()[NO_GROUP] == 2 and APART not in more.groups and UNNAMED in more.window
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


def test_a_call_counts_only_the_calls_still_in_its_window() -> None:
    """In a window of 4 under a cap of 3 (a room of 2), a read of a file read twice in the window
    waits until one of those calls is pushed out, by calls in the window's place or sent since."""
    breaker = Breaker(load_config({"window": 4, "limits": {"exact": 3}}))
    for index, path in enumerate(["/w/a.py", "/w/a.py", "/w/b.py", "/w/c.py"]):
        assert isinstance(breaker.decide(1, ToolCall("read", {"path": path}, f"c{index}")), Allow)
        breaker.record_result(1, f"c{index}", f"the text of {path}", {"isError": False})
    more = breaker.conditional(1, breaker.passes(1))
    assert more is not None and more.groups is not None and more.room == 2
    a, d = _group("read", {"path": "/w/a.py"}), _group("read", {"path": "/w/d.py"})
    assert more.window[:2] == (more.groups.index(a),) * 2
    assert not by_group(more, "read", a, [], 4)
    assert by_group(more, "read", a, [d], 4)  # the first a.py pushed out
    assert by_group(more, "read", a, [d, d, d], 4)
    assert not by_group(more, "read", a, [a], 4)  # the second a.py still in, and one sent since
    assert by_group(more, "read", a, [d, a], 4)  # both pushed out, one sent since
    assert not by_group(more, "read", a, [a, d, a], 4) and by_group(more, "read", a, [a, d, a, d, d], 4)
    # The worker's own count: a.py is stopped at the third in a window of 4, not before.
    for index, path in enumerate(["/w/d.py", "/w/e.py", "/w/a.py", "/w/a.py", "/w/a.py"], start=4):
        verdict = breaker.decide(1, ToolCall("read", {"path": path}, f"c{index}"))
        assert isinstance(verdict, Allow) == (index < 8), index
        breaker.record_result(1, f"c{index}", f"the text of {path}", {"isError": False})
