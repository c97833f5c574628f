"""Verdicts given ahead of the guard: ``Breaker.precheck`` answers at pre-execute with what
``decide`` would say, and ``commit`` applies it when the guard uses it. The shim uses a kept
verdict only while nothing else happened to that agent (node-shim/call/ahead.js); these pin that the
kept verdict then is exactly ``decide``'s, and that anything in between drops it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from breaker import Allow, Ask, Breaker, Deny, ToolCall, load_config
from tests.test_decision import call, count, fake_fingerprints


def make(**raw: Any) -> Breaker:
    return Breaker(load_config(raw or None), fingerprinter=fake_fingerprints)


def ahead(breaker: Breaker, agent: int, tool_call: ToolCall) -> Allow | Deny | Ask:
    """What the shim does for a call whose guard uses the preflight's verdict (no ask)."""
    answer = breaker.precheck(agent, tool_call)
    if isinstance(answer, Ask) or answer is None:
        return breaker.decide(agent, tool_call) if answer is None else answer
    assert breaker.commit(agent, tool_call.call_id) == answer
    return answer


def test_a_denied_kept_verdict_commits_only_its_hits() -> None:
    breaker = make(localHosts="deny")
    for _ in range(4):
        assert isinstance(ahead(breaker, 1, call("exact:a", "net:h/")), Allow)
    fifth = ahead(breaker, 1, call("exact:a", "net:h/", "sink:s"))
    assert isinstance(fifth, Deny)
    assert count(breaker, 1, "exact:a") == 5
    assert count(breaker, 1, "sink:s") == 0


def test_a_precheck_whose_guard_never_comes_spends_nothing() -> None:
    breaker = make()
    for _ in range(10):
        assert isinstance(breaker.precheck(1, call("exact:a")), Allow)
    assert count(breaker, 1, "exact:a") == 0
    verdicts = [ahead(breaker, 1, call("exact:a")) for _ in range(5)]
    assert [isinstance(v, Allow) for v in verdicts] == [True, True, True, True, False]


def test_any_change_to_what_a_verdict_reads_drops_the_kept_verdicts() -> None:
    changes: dict[str, Callable[[Breaker], object]] = {
        "a result": lambda b: b.record_result(1, "other", "text"),
        "a human turn": lambda b: b.human_message(1),
        "a guard": lambda b: b.decide(1, call("exact:z")),
        "a commit": lambda b: b.commit(1, "other"),
    }
    for label, change in changes.items():
        breaker = make()
        breaker.decide(1, call("exact:seed"))
        kept = call("exact:a")
        assert isinstance(breaker.precheck(1, kept), Allow)
        other = call("exact:b", call_id="other")
        if label == "a commit":
            breaker.precheck(1, other)
        change(breaker)
        assert breaker.commit(1, kept.call_id) is None, label
        assert count(breaker, 1, "exact:a") == 0, label


def test_prechecks_that_do_not_ask_keep_each_others_verdicts_until_one_commits() -> None:
    breaker = make()
    first, second = call("exact:a"), call("exact:a")
    assert isinstance(breaker.precheck(1, first), Allow)
    assert isinstance(breaker.precheck(1, second), Allow)
    assert isinstance(breaker.commit(1, first.call_id), Allow)
    # The second was planned before the first committed: the shim sends its guard instead.
    assert breaker.commit(1, second.call_id) is None
    assert isinstance(breaker.decide(1, second), Allow)
    assert count(breaker, 1, "exact:a") == 2


def test_an_asked_call_keeps_no_verdict_and_reaching_the_guard_approves_it() -> None:
    breaker = make(localHosts="ask")
    for _ in range(4):
        breaker.decide(1, call("net:localhost/", local=True))
    asked = call("net:localhost/", local=True)
    assert isinstance(breaker.precheck(1, asked), Ask)
    assert breaker.commit(1, asked.call_id) is None
    assert isinstance(breaker.decide(1, asked), Allow), "the guard of an asked call is its approval"


def test_a_commit_this_breaker_never_prechecked_changes_nothing() -> None:
    breaker = make()
    assert breaker.commit(1, "c-from-a-lost-worker") is None
    assert breaker.stats() == {"agents": 0, "entries": 0}


_KEYS = st.sampled_from(["exact:a", "exact:b", "cmd:c", "net:h/", "net:localhost/", "sink:s"])
_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("call"), st.lists(_KEYS, min_size=1, max_size=3), st.booleans()),
        st.tuples(st.just("result"), st.text(max_size=30), st.booleans()),
        st.tuples(st.just("human"), st.just([]), st.booleans()),
    ),
    max_size=60,
)


_CONFIGS = [{}, {"localHosts": "deny"}, {"warnAt": 3}, {"onLimit": "ask"}, {"sameResultLimit": 2}]


@settings(max_examples=150, deadline=None)
@given(steps=_STEPS, raw=st.sampled_from(_CONFIGS))
def test_verdicts_given_ahead_are_the_verdicts_decide_gives(steps: list[Any], raw: dict[str, Any]) -> None:
    """preflight-then-decide (as rtb replay drives it) and precheck-then-commit agree on every
    verdict, every denial text and every notice, with results and human turns in between."""
    live, replayed = make(**raw), make(**raw)
    last_call = ""
    for index, (kind, payload, flag) in enumerate(steps):
        if kind == "call":
            tool_call = ToolCall("bash", {"keys": payload, "local": flag}, f"c{index}")
            expected: Allow | Deny | Ask = replayed.preflight(1, tool_call)
            if not isinstance(expected, Ask):
                expected = replayed.decide(1, tool_call)
            assert ahead(live, 1, tool_call) == expected
            last_call = tool_call.call_id
        elif kind == "result":
            assert live.record_result(1, last_call, payload) == replayed.record_result(1, last_call, payload)
        else:
            live.human_message(1)
            replayed.human_message(1)
    assert live.stats() == replayed.stats()
