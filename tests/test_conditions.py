"""Conditional passes: ``Breaker.conditional`` promises more calls than ``passes`` while every
result that comes is news (breaker/core/reading/news.py: ``breaks``). These pin that the promise
holds over every rule, whatever the calls are and in whatever order their results come, as long
as no result since the answer broke the condition; and what a result must be to break it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from breaker import Allow, Ask, Breaker, ToolCall, load_config
from breaker.core.reading.news import BREAKS, breaks, digest
from breaker.core.reading.outcomes import FAILURE_MARKS, Failure, judge, result_digest
from tests.test_passes import _PROGRESS_CALLS

_CALLS: list[tuple[str, Any]] = [
    *_PROGRESS_CALLS,
    ("bash", {"command": "curl -s http://localhost:8080/health"}),
    ("bash", {"command": "echo hello | tr a-z A-Z"}),
]
#: Results, "{n}" made distinct by the step that returns it (news, unless the condition says not).
_RESULTS: list[tuple[str, dict[str, Any] | None]] = [
    ("same", {"exitCode": 0}),
    ("news {n}", {"isError": False, "exitCode": 0}),
    ("news {n}", {"isError": False, "kind": "foreground", "exitCode": 0, "timedOut": False}),
    ("news {n}", None),
    ("same", {"isError": False}),
    ("", {"exitCode": 0}),
    ("(no output)", {"isError": False}),
    ("Error: rejected", {"isError": True}),
    ("boom {n}\n[exit code: 1]", {"exitCode": 1}),
    ("curl: (7) Failed to connect {n}", {"exitCode": 0}),
    ("Traceback (most recent call last):\n  x\nValueError: {n}", {"exitCode": 0}),
    ("Fetched https://api.example.com/s?t={n} (HTTP 200)\npage", {"isError": False}),
    ("page {n}", {"statusCode": 404}),
    ("page {n}", {"statusCode": 200}),
    ("timed out {n}", {"timedOut": True}),
    ('{{"id": {n}, "status": "open"}}', {"isError": False}),
    ('{{"error": "no such order {n}"}}', {"isError": False}),
    ('  {{"e\\u0072ror": "locked {n}"}}', None),
    ('{{"error": null, "id": {n}}}', None),
]
_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("call"), st.integers(0, len(_CALLS) - 1)),
        st.tuples(st.just("result"), st.integers(0, len(_RESULTS) - 1), st.integers(0, 7)),
        st.tuples(st.just("again"), st.integers(0, len(_RESULTS) - 1)),
        st.tuples(st.just("human"), st.just(0)),
        st.tuples(st.just("step"), st.just(0)),
    ),
    max_size=70,
)
#: No cap at all: only what results say limits a conditional promise.
_UNCAPPED = {"limits": {"exact": None, "cmd": None, "net": None, "sink": None}}
_CONFIGS = [
    {},
    {"failLimit": 2},
    {"onLimit": "ask"},
    {"window": 4, "limits": {"exact": 3, "cmd": 3}},
    {"sameResultLimit": 5, "limits": {"exact": 9, "cmd": 9, "net": 9}},
    {"sameResultLimit": 3},
    {"identity": "exact"},
    _UNCAPPED,
    {**_UNCAPPED, "failLimit": None},
    {**_UNCAPPED, "sameResultLimit": 6},
]


@dataclass
class _Promise:
    """A conditional promise as the shim holds it: calls left, digests news must not have."""

    left: int
    forbidden: set[int]
    holds: bool = True
    results: list[str] = field(default_factory=list)


#: One call returning the same result again and again, with no cap to stop it first.
_SAME_AGAIN = [("call", 2), *[("again", 0)] * 6]


@settings(max_examples=500, deadline=None)
@given(steps=_STEPS, raw=st.sampled_from(_CONFIGS))
@example(steps=_SAME_AGAIN, raw=_UNCAPPED)
@example(
    steps=[("call", 4), ("again", 0), ("call", 5), ("again", 0), *[("call", 4), ("call", 5)] * 3],
    raw=_UNCAPPED,
)
def test_no_call_within_a_conditional_promise_is_stopped_while_the_results_are_news(
    steps: list[Any], raw: dict[str, Any]
) -> None:
    """After any history, the next ``conditional.passes`` calls are allowed and never asked about,
    as long as no result since the answer broke its condition (results in any order)."""
    breaker = Breaker(load_config(raw))
    promises: list[_Promise] = []
    running: list[tuple[str, str]] = []
    last = 0
    for index, step in enumerate(steps):
        if step[0] in ("call", "again"):  # again: the last call once more, its result at once
            last = step[1] if step[0] == "call" else last
            tool, arguments = _CALLS[last]
            call = ToolCall(tool, dict(arguments), f"c{index}")
            asked = breaker.preflight(1, call)
            verdict = breaker.decide(1, call)
            promised = [promise for promise in promises if promise.holds and promise.left > 0]
            if promised:
                assert not isinstance(asked, Ask), promised[0].results
                assert isinstance(verdict, Allow), (verdict, promised[0].results)
            for promise in promises:
                promise.left -= 1
            if isinstance(verdict, Allow):
                running.append((call.call_id, tool))
        if (step[0] == "result" or step[0] == "again") and running:
            call_id, tool = running.pop(step[2] % len(running) if step[0] == "result" else -1)
            text, facts = _RESULTS[step[1]]
            text = text.replace("{n}", str(index))
            for promise in promises:
                if breaks(tool, text, facts, promise.forbidden):
                    promise.holds = False
                promise.forbidden.add(digest(tool, text))
                promise.results.append(text)
            breaker.record_result(1, call_id, text, facts)
        if step[0] == "human":
            breaker.human_message(1)
        elif step[0] == "step":
            breaker.new_step(1)
        now = breaker.passes(1)
        more = breaker.conditional(1, now)
        if more is not None:
            assert more.passes > now or (more.passes == now and more.groups is not None)
            promises.append(_Promise(more.passes, set(more.digests)))
        promises = [promise for promise in promises if promise.holds and promise.left > 0]


#: JSON objects as a function-calling tool returns them: keys that are or spell ``error`` (through an
#: escape) or are not it, values that say nothing, and some space before the object.
_JSON_KEYS = st.sampled_from(["error", "Error", "errors", "id", "err\\u006fr", "\\u0065rror", "e\\rr"])
_JSON_VALUES: st.SearchStrategy[Any] = (
    st.none() | st.booleans() | st.integers() | st.text(max_size=12) | st.just({}) | st.just([])
)


def _json_object(space: str, pairs: list[tuple[str, Any]]) -> str:
    return space + "{" + ", ".join(f'"{key}": {json.dumps(value)}' for key, value in pairs) + "}"


_JSON_TEXTS = st.builds(
    _json_object,
    st.sampled_from(["", " ", "\n  "]),
    st.lists(st.tuples(_JSON_KEYS, _JSON_VALUES), max_size=3),
)


@given(
    tool=st.sampled_from(["bash", "read", "edit", "web_fetch", "grep", "mcp__shop__get_order"]),
    text=st.text(max_size=80) | st.sampled_from([f"x {mark} y" for mark in FAILURE_MARKS]) | _JSON_TEXTS,
    facts=st.dictionaries(
        st.sampled_from(["isError", "exitCode", "signal", "timedOut", "statusCode", "status", "kind"]),
        st.none() | st.booleans() | st.integers(-2, 600) | st.sampled_from(["", "SIGTERM", "0"]),
        max_size=4,
    ),
)
def test_a_result_that_breaks_no_condition_is_judged_no_failure(
    tool: str, text: str, facts: dict[str, Any]
) -> None:
    """What ``breaks`` lets through, ``outcomes.judge`` finds no failure in."""
    if not breaks(tool, text, facts, frozenset()):
        assert not isinstance(judge(tool, facts, text), Failure)


@given(tool=st.sampled_from(["bash", "web_fetch"]), text=st.text(max_size=60), other=st.text(max_size=60))
def test_two_results_compared_alike_have_one_digest_unless_a_condition_breaks_on_them(
    tool: str, text: str, other: str
) -> None:
    """``digest`` is the start of the evidence's own digest for any text a condition does not
    break on at its start, so a result the evidence finds the same is found among the digests."""
    for one in (text, f"Fetched {other} (HTTP 200){text}"):
        if not one.startswith(BREAKS.prefixes):
            assert digest(tool, one).to_bytes(6, "big") == result_digest(tool, one)[:6]


def test_a_json_object_breaks_the_condition_only_with_the_name_of_an_error_key_or_an_escape() -> None:
    """A function-calling tool's JSON answer is news unless it may hold an ``error`` key."""
    assert not breaks("mcp__shop__get_order", '{"id": 7, "status": "open"}', None, frozenset())
    assert not breaks("mcp__shop__get_order", '{"faults_seen": 0}', None, frozenset())
    assert breaks("mcp__shop__get_order", '{"error": "no such order"}', None, frozenset())
    assert breaks("mcp__shop__get_order", '{"e\\u0072ror": "locked"}', None, frozenset())
    assert breaks("mcp__shop__get_order", '{"id": 7, "note": "no error"}', None, frozenset())  # anywhere
    assert not breaks("read", "an error, not a JSON object", None, frozenset())
    escaped = judge("mcp__shop__get_order", {"isError": False}, '{"e\\u0072ror": "locked"}')
    assert isinstance(escaped, Failure)


def test_a_value_of_another_type_breaks_the_condition() -> None:
    assert not breaks("bash", "ok", {"exitCode": 0, "isError": False, "kind": "x"}, frozenset())
    assert breaks("bash", "ok", {"exitCode": False}, frozenset())  # False is not 0
    assert breaks("bash", "ok", {"isError": 0}, frozenset())
    assert breaks("bash", "ok", {"statusCode": 404}, frozenset())
    assert breaks("bash", "ok", None, frozenset({digest("bash", "ok")}))
    assert not breaks("read", "ok", None, frozenset({digest("bash", "ok")}))  # another tool's


def test_distinct_results_after_distinct_calls_promise_the_caps_room() -> None:
    """Under the defaults, a result's answer promises the next call only; while results are news,
    as many as the caps leave (5 - 1 - 1 for distinct calls)."""
    breaker = Breaker(load_config({}))
    for index in range(3):
        call = ToolCall("read", {"path": f"/w/{index}.js"}, f"c{index}")
        assert isinstance(breaker.decide(1, call), Allow)
        breaker.record_result(1, call.call_id, f"line {index}", {"isError": False})
    assert breaker.passes(1) == 1
    more = breaker.conditional(1, 1)
    assert more is not None
    assert more.passes == 3
    assert digest("read", "line 2") in more.digests
