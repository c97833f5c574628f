"""Passes: ``Breaker.passes`` says how many more calls of an agent surely go through, so the shim
lets that many through without waiting for the worker (node-shim/call/ahead.js) and sends them after.
A pass is only a promise about verdicts the worker still makes: these pin that the promise holds
whatever the calls are, and that it is as wide as the caps allow.
"""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from breaker import Allow, Ask, Breaker, ToolCall, load_config
from breaker.core.decision import UNLIMITED_PASSES
from breaker.core.history.cycles import MAX_PERIOD, cycle_room
from breaker.core.history.peaked import Peaked
from breaker.core.history.streaks import Streaks
from breaker.core.reading.outcomes import Failure
from tests.test_decision import call, fake_fingerprints, repeating_fingerprints


def make(**raw: Any) -> Breaker:
    return Breaker(load_config({"preset": "seed", **(raw or {})}), fingerprinter=fake_fingerprints)


def test_a_fresh_agent_passes_one_call_fewer_than_the_tightest_cap() -> None:
    assert make().passes(1) == 4  # the fifth identical call is the first that can be stopped
    assert make(limits={"net": 3}).passes(1) == 2
    assert make(limits={"verb:curl": 2}).passes(1) == 1


def test_repeats_use_up_the_passes_and_a_denial_leaves_none() -> None:
    breaker = make()
    seen = []
    for _ in range(5):
        seen.append(breaker.passes(1))
        breaker.decide(1, call("exact:a"))
    assert seen == [4, 3, 2, 1, 0]
    assert breaker.passes(1) == 0  # exact:a counts 5 now: the next repeat is stopped


def test_distinct_calls_keep_three_passes_under_the_default_caps() -> None:
    breaker = make()
    for index in range(30):
        breaker.decide(1, call(f"exact:{index}", "family:fetch"))  # family: is uncapped
        assert breaker.passes(1) == 3


def test_passes_come_back_as_repeats_leave_the_window() -> None:
    breaker = make(window=4)
    for _ in range(3):
        breaker.decide(1, call("exact:a"))
    assert breaker.passes(1) == 1
    for index in range(4):
        breaker.decide(1, call(f"exact:other{index}"))
    assert breaker.passes(1) == 3


def test_a_human_turn_gives_every_pass_back() -> None:
    breaker = make()
    for _ in range(4):
        breaker.decide(1, call("exact:a"))
    breaker.human_message(1)
    assert breaker.passes(1) == 4


def test_agents_have_their_own_passes() -> None:
    breaker = make()
    for _ in range(4):
        breaker.decide(1, call("exact:a"))
    assert (breaker.passes(1), breaker.passes(2)) == (0, 4)


def test_nothing_capped_passes_every_call() -> None:
    breaker = make(limits={"exact": None, "cmd": None, "net": None, "sink": None})
    assert breaker.passes(1) == UNLIMITED_PASSES


def test_failures_in_a_row_and_results_still_awaited_use_up_passes() -> None:
    breaker = make(failLimit=3)
    assert breaker.passes(1) == 3
    breaker.decide(1, call("exact:build", call_id="b1"))
    assert breaker.passes(1) == 2  # its result may be a failure
    breaker.record_result(1, "b1", "error: build failed", {"exitCode": 1})
    assert breaker.passes(1) == 2  # a streak of one
    breaker.decide(1, call("exact:other", call_id="o1"))
    breaker.record_result(1, "o1", "fine", {"exitCode": 0})
    assert breaker.passes(1) == 2


def test_a_result_still_awaited_counts_as_one_more_failure() -> None:
    breaker = make(failLimit=2)
    breaker.decide(1, call("exact:build", call_id="b1"))
    assert breaker.passes(1) == 1
    breaker.record_result(1, "b1", "error", {"exitCode": 1})
    assert isinstance(breaker.decide(1, call("exact:build", call_id="b2")), Allow)  # the one pass
    breaker.record_result(1, "b2", "error", {"exitCode": 1})
    assert not isinstance(breaker.decide(1, call("exact:build", call_id="b3")), Allow)


def test_a_run_of_identical_results_uses_up_passes() -> None:
    breaker = make(sameResultLimit=4, limits={"exact": 10, "cmd": 10, "net": 10, "sink": 10})
    for index in range(3):
        breaker.decide(1, call("exact:poll", call_id=f"p{index}"))
        breaker.record_result(1, f"p{index}", "still pending")
    assert breaker.passes(1) == 1  # a run of three: one more identical result ends it
    breaker.decide(1, call("exact:poll", call_id="p3"))
    assert breaker.passes(1) == 0


def test_notices_leave_passes_alone_they_come_with_results() -> None:
    assert make(warnAt=2, summarizeAt=3, failWarnAt=1).passes(1) == 4


_KEYS = st.sampled_from(["exact:a", "exact:b", "cmd:c", "net:h/", "net:localhost/", "sink:s", "verb:v"])
_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("call"), st.lists(_KEYS, min_size=1, max_size=3), st.booleans()),
        st.tuples(st.just("result"), st.sampled_from(["same", "other", ""]), st.booleans()),
        st.tuples(st.just("human"), st.just([]), st.booleans()),
        st.tuples(st.just("ask"), st.lists(_KEYS, min_size=1, max_size=3), st.booleans()),
    ),
    max_size=80,
)
_CONFIGS = [
    {},
    {"localHosts": "deny"},
    {"localHosts": "allow"},
    {"onLimit": "ask"},
    {"window": 4, "limits": {"net": 3, "verb:v": 2}},
    {"limits": {"exact": 2, "cmd": None}},
    {"warnAt": 2, "summarizeAt": 3, "failWarnAt": 1},
    {"failLimit": 2},
    {"sameResultLimit": 2},
    {"failLimit": 2, "sameResultLimit": 3, "limits": {"exact": 3}},
]


#: Shrunk failures, kept: one key twice in a call, then a failure (its streak once grew by two).
_KEY_TWICE_THEN_A_FAILURE = [
    ("call", ["exact:a", "exact:a"], False),
    ("result", "same", True),
    ("call", ["exact:a"], False),
]


@settings(max_examples=300, deadline=None)
@given(steps=_STEPS, raw=st.sampled_from(_CONFIGS))
@example(steps=_KEY_TWICE_THEN_A_FAILURE, raw={"failLimit": 2})
@example(steps=_KEY_TWICE_THEN_A_FAILURE, raw={"failLimit": 2, "sameResultLimit": 3, "limits": {"exact": 3}})
def test_every_call_within_its_passes_is_allowed_unasked(steps: list[Any], raw: dict[str, Any]) -> None:
    """Whatever came before (denials, asks, approvals, results, failures, human turns), the next
    ``passes`` calls are each allowed by the guard and never asked about."""
    breaker = make(**raw)
    promises = [breaker.passes(1)]  # calls each promise still covers
    last_call = ""
    for index, (kind, keys, local) in enumerate(steps):
        if kind in ("call", "ask"):
            tool_call = ToolCall("bash", {"keys": keys, "local": local}, f"c{index}")
            asked = breaker.preflight(1, tool_call)
            if kind == "ask" and isinstance(asked, Ask):
                continue  # declined: the call never reaches the guard
            verdict = breaker.decide(1, tool_call)
            if any(promises):
                assert not isinstance(asked, Ask)
                assert isinstance(verdict, Allow)
            promises = [left - 1 for left in promises if left > 1]
            last_call = tool_call.call_id
        elif kind == "result":
            breaker.record_result(1, last_call, keys, {"exitCode": 1 if local else 0})
        else:
            breaker.human_message(1)
        promises.append(breaker.passes(1))


def test_a_failed_call_grows_the_streak_of_a_key_it_carries_twice_by_one() -> None:
    streaks = Streaks()
    failure = Failure("exit", "1")
    assert streaks.fail(["exact:a", "exact:a", "net:h/"], failure, "") == {"exact:a": 1, "net:h/": 1}
    assert streaks.fail(["exact:a", "exact:a"], failure, "") == {"exact:a": 2}


@settings(max_examples=300, deadline=None)
@given(steps=_STEPS, raw=st.sampled_from(_CONFIGS))
@example(steps=_KEY_TWICE_THEN_A_FAILURE, raw={"failLimit": 2})
@example(steps=[("call", ["exact:a"], False)] * 2, raw={"limits": {"exact": 2, "cmd": None}})
@example(steps=[("call", ["exact:a"], False)] * 3, raw={"warnAt": 2, "summarizeAt": 3, "failWarnAt": 1})
def test_a_key_a_call_carries_twice_counts_once_everywhere(steps: list[Any], raw: dict[str, Any]) -> None:
    """The one rule for a key repeated within a call (``fingerprints.distinct``): verdicts, denial
    texts, notices and passes are those of the call carrying it once."""
    once = Breaker(load_config({"preset": "seed", **(raw or {})}), fingerprinter=fake_fingerprints)
    twice = Breaker(load_config({"preset": "seed", **(raw or {})}), fingerprinter=repeating_fingerprints)
    last_call = ""
    for index, (kind, keys, local) in enumerate(steps):
        if kind in ("call", "ask"):
            tool_call = ToolCall("bash", {"keys": keys, "local": local}, f"c{index}")
            assert once.preflight(1, tool_call) == twice.preflight(1, tool_call)
            if kind == "call":
                assert once.decide(1, tool_call) == twice.decide(1, tool_call)
                last_call = tool_call.call_id
        elif kind == "result":
            outcome = {"exitCode": 1 if local else 0}
            notices = once.record_result(1, last_call, keys, outcome)
            assert twice.record_result(1, last_call, keys, outcome) == notices
        else:
            once.human_message(1)
            twice.human_message(1)
        assert once.passes(1) == twice.passes(1)


_PROGRESS_CALLS = [
    ("edit", {"file_path": "a.py", "old_string": "<lines 1-1>", "new_string": "x = ("}),
    ("edit", {"file_path": "a.py", "old_string": "<lines 1-2>", "new_string": "x = ("}),
    ("read", {"file_path": "a.py", "offset": 1}),
    ("read", {"file_path": "b.py"}),
    ("bash", {"command": "ps -ef --args"}),
    ("bash", {"command": "ps -ef --args -y"}),
    ("web_fetch", {"url": "https://api.example.com/s?t=1"}),
    ("web_fetch", {"url": "https://api.example.com/s?t=2"}),
    ("submit", {"flag": "a"}),
]
_PROGRESS_RESULTS = [
    ("Error: rejected", {"isError": True}),
    ("same", {"exitCode": 0}),
    ("", {"exitCode": 0}),
    ("boom\n[exit code: 1]", {"exitCode": 1}),
    ("other", {"exitCode": 0}),
]
_PROGRESS_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("call"), st.integers(0, len(_PROGRESS_CALLS) - 1)),
        st.tuples(st.just("result"), st.integers(0, len(_PROGRESS_RESULTS) - 1)),
        st.tuples(st.just("human"), st.just(0)),
        st.tuples(st.just("step"), st.just(0)),
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(steps=_PROGRESS_STEPS, raw=st.sampled_from([{"identity": "state-aware"}, {"sameResultLimit": 2}]))
def test_no_call_within_its_passes_is_stopped_for_no_progress(steps: list[Any], raw: dict[str, Any]) -> None:
    """The evidence of results (same result, cycles, rewordings) keeps the promise too, with real
    fingerprints, file tools whose errors stop sooner, and results that arrive late or never."""
    breaker = Breaker(load_config(raw))
    promises = [breaker.passes(1)]
    running: list[str] = []
    for index, (kind, which) in enumerate(steps):
        if kind == "call":
            tool, arguments = _PROGRESS_CALLS[which]
            verdict = breaker.decide(1, ToolCall(tool, dict(arguments), f"c{index}"))
            if any(promises):
                assert isinstance(verdict, Allow)
            promises = [left - 1 for left in promises if left > 1]
            if isinstance(verdict, Allow):
                running.append(f"c{index}")
        elif kind == "result" and running:
            text, facts = _PROGRESS_RESULTS[which]
            breaker.record_result(1, running.pop(0), text, facts)
        elif kind == "human":
            breaker.human_message(1)
        elif kind == "step":
            breaker.new_step(1)
        promises.append(breaker.passes(1))


_RECORD_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("set"), st.sampled_from("abcd"), st.tuples(st.integers(0, 6), st.integers(0, 6))),
        st.tuples(st.just("pop"), st.sampled_from("abcde"), st.just((0, 0))),
        st.tuples(st.just("del"), st.sampled_from("abcd"), st.just((0, 0))),
        st.tuples(st.just("clear"), st.just(""), st.just((0, 0))),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(ops=_RECORD_OPS)
def test_the_highest_measures_are_those_of_the_records_held(ops: list[Any]) -> None:
    """``passes`` reads the evidence's highest measures from tallies kept as records come and go
    (``Peaked``): after any sets, pops, deletions and clears they are those of what is held, and
    the highest second measure of the marked keys (``b`` and ``d`` here) is theirs."""
    records: Peaked[tuple[int, int]] = Peaked(lambda record: record, lambda key: key in "bd")
    for op, key, record in ops:
        if op == "set":
            records[key] = record
        elif op == "pop":
            records.pop(key)
        elif op == "del" and key in records:
            del records[key]
        elif op == "clear":
            records.clear()
        held = list(records.values())
        expected = (max(a for a, _ in held), max(b for _, b in held)) if held else None
        assert records.highest() == expected
        marked = [second for key, (_, second) in records.items() if key in "bd"]
        assert records.highest_marked() == (max(marked) if marked else None)


def _may_match(one: Any, other: Any) -> bool:
    """The same call with the same result, or may turn out so (a result still awaited)."""
    return one[1] is None or other[1] is None or one[:2] == other[:2]


def _cycle_room_by_trying(recent: list[Any]) -> int:
    """The room before a cycle, found the slow way: for each period, try every number of calls
    to come, fewest first, until the last ``2p`` calls could be a repeated cycle."""
    room = 2 * MAX_PERIOD
    for period in range(2, MAX_PERIOD + 1):
        for added in range(max(0, 2 * period - len(recent)), min(period, room)):
            fixed = recent[len(recent) - (2 * period - added) :]
            if all(_may_match(fixed[i], fixed[i + period]) for i in range(len(fixed) - period)):
                room = added
                break
        room = min(room, max(period, 2 * period - len(recent)))
    return room


_RECENT = st.lists(
    st.tuples(
        st.sampled_from([frozenset({"exact:a"}), frozenset({"exact:b"})]),
        st.sampled_from([None, b"x", b"y"]),
        st.just("c"),
        st.just(0),
    ),
    max_size=2 * MAX_PERIOD,
)


@settings(max_examples=500, deadline=None)
@given(recent=_RECENT)
def test_the_room_before_a_cycle_is_the_fewest_calls_that_could_close_one(recent: list[Any]) -> None:
    assert cycle_room(list(recent)) == _cycle_room_by_trying(recent)
