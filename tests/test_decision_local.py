"""The breaker on local targets (`localHosts`: ask, deny, allow; approvals and refusals) and the
properties of `Breaker` over drawn histories, on fake fingerprints (tests/test_decision.py's
`fake_fingerprints`: a call's arguments are its keys and whether it is local)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from breaker import Allow, Ask, Breaker, BreakerConfig, Deny, ToolCall, load_config
from breaker.core.reading.fingerprints import CallFingerprints, Fingerprint
from tests.test_decision import call, count, make, run

# --- localHosts ------------------------------------------------------------------------------


LOCAL_NET = "net:localhost:8080/health"


def local_variants(breaker: Breaker, n: int, agent: int = 1) -> list[Allow | Deny]:
    """``n`` different commands (distinct exact/cmd) against one local target."""
    return [breaker.decide(agent, call(LOCAL_NET, f"exact:v{i}", local=True)) for i in range(n)]


def test_allow_drops_local_targets_but_still_counts_exact() -> None:
    breaker = make(localHosts="allow")
    assert all(isinstance(v, Allow) for v in local_variants(breaker, 20))
    assert count(breaker, 1, LOCAL_NET) == 0
    verdicts = run(breaker, 5, LOCAL_NET, "exact:same", local=True)
    assert isinstance(verdicts[-1], Deny)
    assert [h.fingerprint.key for h in verdicts[-1].hits] == ["exact:same"]


def test_deny_counts_local_targets_and_names_the_knob() -> None:
    breaker = make(localHosts="deny")
    local_variants(breaker, 4)
    probe = call(LOCAL_NET, "exact:next", local=True)
    assert isinstance(breaker.preflight(1, probe), Allow)
    verdict = breaker.decide(1, probe)
    assert isinstance(verdict, Deny)
    assert "localHosts is 'deny'" in verdict.message


def test_ask_when_only_local_targets_hit_then_approval_exempts_them_for_the_turn() -> None:
    breaker = make()
    local_variants(breaker, 4)
    asked = call(LOCAL_NET, "exact:asked", local=True)
    question = breaker.preflight(1, asked)
    assert isinstance(question, Ask)
    assert [h.fingerprint.key for h in question.hits] == [LOCAL_NET]
    assert LOCAL_NET in question.reason
    assert isinstance(breaker.decide(1, asked), Allow)  # reaching the guard = approved
    assert all(isinstance(v, Allow) for v in local_variants(breaker, 10))
    # ... but never exact:
    verdicts = run(breaker, 5, LOCAL_NET, "exact:same", local=True)
    assert isinstance(verdicts[-1], Deny)
    assert [h.fingerprint.key for h in verdicts[-1].hits] == ["exact:same"]
    # The exemption lasts for the turn only.
    breaker.human_message(1)
    local_variants(breaker, 4)
    assert isinstance(breaker.preflight(1, call(LOCAL_NET, "exact:n", local=True)), Ask)


def test_a_declined_ask_stops_the_asking_until_the_next_human_message() -> None:
    breaker = make()
    local_variants(breaker, 4)
    asked = call(LOCAL_NET, "exact:asked", local=True)
    assert isinstance(breaker.preflight(1, asked), Ask)
    breaker.record_result(1, asked.call_id, "Error: requires approval")  # never reached the guard
    nxt = call(LOCAL_NET, "exact:next", local=True)
    assert isinstance(breaker.preflight(1, nxt), Allow)
    verdict = breaker.decide(1, nxt)
    assert isinstance(verdict, Deny)
    assert verdict.message.startswith("REPEAT_TOOL_BLOCKED:")
    assert "localHosts" in verdict.message
    assert "requires approval" not in verdict.message  # the declined call's result is not kept
    breaker.human_message(1)
    local_variants(breaker, 4)
    assert isinstance(breaker.preflight(1, call(LOCAL_NET, "exact:n", local=True)), Ask)


def test_only_one_ask_per_turn_and_decide_never_asks() -> None:
    breaker = make()
    local_variants(breaker, 4)
    first = call(LOCAL_NET, "exact:a1", local=True)
    assert isinstance(breaker.preflight(1, first), Ask)
    second = call(LOCAL_NET, "exact:a2", local=True)  # while the first ask is unanswered
    assert isinstance(breaker.preflight(1, second), Allow)
    assert isinstance(breaker.decide(1, second), Deny)


def test_a_call_whose_hits_are_not_all_local_is_denied_not_asked() -> None:
    breaker = make()
    run(breaker, 4, LOCAL_NET, "exact:same", local=True)
    same = call(LOCAL_NET, "exact:same", local=True)
    assert isinstance(breaker.preflight(1, same), Allow)
    assert isinstance(breaker.decide(1, same), Deny)


@pytest.mark.parametrize("policy", ["ask", "deny"])
def test_an_identical_local_repeat_is_denied_without_the_local_note(policy: str) -> None:
    """Its exact: and cmd: keys stop it whatever localHosts says: the denial neither says an
    approval was wanted nor that another localHosts would let it run."""
    breaker = Breaker(load_config({"localHosts": policy}))
    verdicts = []
    for n in range(5):
        same = ToolCall("bash", {"command": "curl -s http://127.0.0.1:8000/health"}, f"c{n}")
        verdicts.append(breaker.decide(1, same))
        breaker.record_result(1, same.call_id, "ok")
    denied = verdicts[-1]
    assert isinstance(denied, Deny) and any(hit.fingerprint.key.startswith("exact:") for hit in denied.hits)
    assert "localHosts" not in denied.message and "local address" not in denied.message


def test_a_call_without_an_id_is_never_asked() -> None:
    breaker = make()
    local_variants(breaker, 4)
    assert isinstance(breaker.preflight(1, ToolCall("bash", {"keys": [LOCAL_NET], "local": True})), Allow)


# --- properties ------------------------------------------------------------------------------

KEYS = ["exact:a", "exact:b", "cmd:a", "net:h/", "net:g/", "sink:/o", "site:h", "verb:curl"]
CALLS = st.lists(
    st.tuples(st.integers(1, 2), st.lists(st.sampled_from(KEYS), min_size=1, max_size=4, unique=True)),
    max_size=60,
)
LIMITS = st.fixed_dictionaries(
    {
        "exact": st.sampled_from([2, 3, 5]),
        "net": st.sampled_from([2, 3.5, 5]),
        "site": st.sampled_from([None, 4]),
    }
)


def reference(config: BreakerConfig, calls: list[tuple[int, list[str]]]) -> list[list[str]]:
    """The counting rules by rescanning plain lists: the hit keys of each call."""
    history: dict[int, list[set[str]]] = defaultdict(list)
    verdicts = []
    for agent, keys in calls:
        recent = history[agent][-config.window :]
        hits = [
            key
            for key in keys
            if (cap := config.limit_for(key.partition(":")[0], key)) is not None
            and sum(key in entry for entry in recent) >= cap - 1
        ]
        history[agent].append(set(hits or keys))
        verdicts.append(hits)
    return verdicts


@settings(max_examples=200)
@given(calls=CALLS, limits=LIMITS, window=st.integers(4, 8))
def test_verdicts_match_a_rescanning_reference(
    calls: list[tuple[int, list[str]]], limits: dict[str, Any], window: int
) -> None:
    breaker = make(limits=limits, window=window)
    expected = reference(breaker.config, calls)
    for (agent, keys), hits in zip(calls, expected, strict=True):
        verdict = breaker.decide(agent, call(*keys))
        got = [h.fingerprint.key for h in verdict.hits] if isinstance(verdict, Deny) else []
        assert got == hits


@given(calls=CALLS, limits=LIMITS)
def test_the_first_occurrence_of_anything_is_allowed(
    calls: list[tuple[int, list[str]]], limits: dict[str, Any]
) -> None:
    breaker = make(limits=limits)
    seen: dict[int, set[str]] = defaultdict(set)
    for agent, keys in calls:
        verdict = breaker.decide(agent, call(*keys))
        if not seen[agent] & set(keys):
            assert isinstance(verdict, Allow)
        seen[agent] |= set(keys)


@given(calls=CALLS, limits=LIMITS)
def test_a_denied_call_never_commits_a_fingerprint_that_did_not_hit(
    calls: list[tuple[int, list[str]]], limits: dict[str, Any]
) -> None:
    breaker = make(limits=limits, window=1000)  # no eviction: counts only ever grow by commits
    for agent, keys in calls:
        before = {key: count(breaker, agent, key) for key in keys}
        verdict = breaker.decide(agent, call(*keys))
        hit = {h.fingerprint.key for h in verdict.hits} if isinstance(verdict, Deny) else set(keys)
        for key in keys:
            assert count(breaker, agent, key) == before[key] + (key in hit)


@given(calls=CALLS, limits=LIMITS)
def test_the_same_sequence_gives_the_same_verdicts(
    calls: list[tuple[int, list[str]]], limits: dict[str, Any]
) -> None:
    def replay() -> list[Allow | Deny]:
        breaker = make(limits=limits)
        out = []
        for n, (agent, keys) in enumerate(calls):
            c = ToolCall("bash", {"keys": keys}, f"id{n}")
            out.append(breaker.decide(agent, c))
            breaker.record_result(agent, c.call_id, f"result {n}")
        return out

    assert replay() == replay()


def test_past_max_agents_the_idlest_agent_is_forgotten() -> None:
    breaker = Breaker(load_config({"maxAgents": 2}))
    call = ToolCall("bash", {"command": "echo hi"}, "c")
    for _ in range(4):
        breaker.decide("busy", call)
    breaker.decide("idle", call)
    breaker.decide("busy", call)  # busy is now the most recently active
    breaker.decide("new", call)  # evicts "idle", not "busy"
    assert breaker.stats()["agents"] == 2
    assert isinstance(breaker.decide("busy", call), Deny)  # its window survived: 6th identical call
    assert isinstance(breaker.decide("idle", call), Allow)  # a fresh window


def test_the_guard_reuses_the_fingerprints_of_the_preflight_of_the_same_call() -> None:
    from breaker.core.reading.fingerprints import fingerprint_call

    computed: list[str] = []

    def counting(call: ToolCall, config: BreakerConfig) -> CallFingerprints:
        computed.append(call.call_id)
        return fingerprint_call(call, config)

    breaker = Breaker(load_config(None), counting)
    breaker.decide(1, ToolCall("bash", {"command": "ls"}, "c0"))  # the agent exists from here on
    call = ToolCall("bash", {"command": "curl https://example.org/"}, "c1")
    breaker.preflight(1, call)
    breaker.decide(1, call)
    assert computed == ["c0", "c1"]  # once for c1, not twice
    # Same call id, other arguments: fingerprinted afresh, never confused with the preflight's.
    other = ToolCall("bash", {"command": "curl https://example.com/"}, "c2")
    breaker.preflight(1, other)
    changed = ToolCall("bash", {"command": "curl https://example.net/"}, "c2")
    breaker.decide(1, changed)
    assert computed == ["c0", "c1", "c2", "c2"]


def test_repeated_short_calls_reuse_their_analysis_and_values_keep_their_type() -> None:
    seen: list[ToolCall] = []

    def counting(tool_call: ToolCall, config: BreakerConfig) -> CallFingerprints:
        seen.append(tool_call)
        args: Any = tool_call.arguments
        return CallFingerprints((Fingerprint("exact", f"exact:{args['key']}"),), is_local=False)

    breaker = Breaker(load_config(None), fingerprinter=counting)
    for index in range(3):
        breaker.decide(1, ToolCall("bash", {"key": "a", "n": 1}, f"same-{index}"))
    assert len(seen) == 1, "the repeats were not analysed again"
    assert count(breaker, 1, "exact:a") == 3
    breaker.decide(1, ToolCall("bash", {"key": "a", "n": True}, "typed"))
    breaker.decide(1, ToolCall("bash", {"key": "a", "n": 1.0}, "floated"))
    assert len(seen) == 3, "1, true and 1.0 are different arguments"
    breaker.decide(1, ToolCall("bash", {"key": "a", "n": [1]}, "nested"))
    breaker.decide(1, ToolCall("bash", {"key": "a", "n": [1]}, "nested-again"))
    assert len(seen) == 5, "arguments that are not flat are analysed every time"


def test_the_analysis_cache_is_bounded() -> None:
    from breaker.core.decision import ANALYSED_CALLS

    breaker = Breaker(load_config(None))
    for index in range(ANALYSED_CALLS + 50):
        breaker.decide(1, ToolCall("bash", {"command": f"echo {index}"}, f"c{index}"))
    assert len(breaker._analysis.analysed) == ANALYSED_CALLS
