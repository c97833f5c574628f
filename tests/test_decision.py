"""The Breaker's rules on a fake fingerprinter, so each rule is tested apart from normalisation.

A call's arguments are ``{"keys": [...], "local": bool}``: its fingerprint keys as given, the
kind being the text before the first colon; with ``local`` the target kinds are marked local.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from breaker import Allow, Ask, Breaker, BreakerConfig, Deny, ToolCall, load_config
from breaker.core.reading.fingerprints import CallFingerprints, Fingerprint
from breaker.core.wording.messages import REDACTION_MARGIN

TARGET_KINDS = frozenset({"net", "site", "sink", "family", "verb"})


def fake_fingerprints(call: ToolCall, config: BreakerConfig) -> CallFingerprints:
    """Each key once, in the order given, as ``fingerprint_call`` gives them."""
    args: Any = call.arguments
    local = bool(args.get("local", False))
    fps = tuple(
        Fingerprint(key.partition(":")[0], key, local and key.partition(":")[0] in TARGET_KINDS)
        for key in dict.fromkeys(args["keys"])
    )
    return CallFingerprints(fps, is_local=local)


def repeating_fingerprints(call: ToolCall, config: BreakerConfig) -> CallFingerprints:
    """``fake_fingerprints`` with every key given twice, as no real fingerprinter does."""
    once = fake_fingerprints(call, config)
    return CallFingerprints(once.fingerprints + once.fingerprints, is_local=once.is_local)


def make(**raw: Any) -> Breaker:
    return Breaker(load_config(raw or None), fingerprinter=fake_fingerprints)


_ids = iter(range(10**9))


def call(*keys: str, tool: str = "bash", local: bool = False, call_id: str | None = None) -> ToolCall:
    return ToolCall(tool, {"keys": list(keys), "local": local}, call_id or f"c{next(_ids)}")


def count(breaker: Breaker, agent: int | str, key: str) -> int:
    state = breaker._agents.get(agent)
    return 0 if state is None else state.window.count(key)


def run(breaker: Breaker, times: int, *keys: str, agent: int | str = 1, **kw: Any) -> list[Allow | Deny]:
    return [breaker.decide(agent, call(*keys, **kw)) for _ in range(times)]


# --- the cap ---------------------------------------------------------------------------------


def test_the_fifth_identical_call_is_denied_with_count_five_of_five() -> None:
    verdicts = run(make(), 6, "exact:a")
    assert all(isinstance(v, Allow) for v in verdicts[:4])
    fifth = verdicts[4]
    assert isinstance(fifth, Deny)
    assert [(h.fingerprint.key, h.count, h.cap) for h in fifth.hits] == [("exact:a", 5, 5.0)]
    assert isinstance(verdicts[5], Deny)


def test_a_fractional_cap_denies_when_the_prior_count_reaches_cap_minus_one() -> None:
    verdicts = run(make(limits={"exact": 2.5}), 3, "exact:a")
    assert [type(v) for v in verdicts] == [Allow, Allow, Deny]
    assert isinstance(verdicts[2], Deny)
    assert verdicts[2].hits[0].count == 3


def test_an_uncapped_fingerprint_never_hits() -> None:
    assert all(isinstance(v, Allow) for v in run(make(), 40, "site:example.org", "family:http-fetch"))


def test_a_full_key_limit_wins_over_its_kind() -> None:
    breaker = make(limits={"verb:curl": 2})
    assert [type(v) for v in run(breaker, 2, "verb:curl")] == [Allow, Deny]
    assert all(isinstance(v, Allow) for v in run(breaker, 8, "verb:wget"))


def test_every_capped_fingerprint_at_its_cap_is_reported() -> None:
    breaker = make()
    run(breaker, 4, "net:h/", "sink:/tmp/o", "cmd:x")
    verdict = breaker.decide(1, call("net:h/", "sink:/tmp/o", "cmd:y", "site:h"))
    assert isinstance(verdict, Deny)
    assert [h.fingerprint.key for h in verdict.hits] == ["net:h/", "sink:/tmp/o"]


def test_calls_leaving_the_window_free_their_budget() -> None:
    breaker = make(window=4)
    run(breaker, 3, "exact:a")
    run(breaker, 4, "exact:other")  # pushes every exact:a out; exact:other 4/5
    assert all(isinstance(v, Allow) for v in run(breaker, 3, "exact:a"))


# --- what is committed -----------------------------------------------------------------------


def test_an_allowed_call_commits_every_fingerprint() -> None:
    breaker = make()
    breaker.decide(1, call("exact:a", "net:h/", "site:h"))
    assert [count(breaker, 1, k) for k in ("exact:a", "net:h/", "site:h")] == [1, 1, 1]


def test_a_denied_call_commits_only_the_fingerprints_that_hit() -> None:
    breaker = make()
    run(breaker, 4, "sink:/tmp/o")
    verdict = breaker.decide(1, call("sink:/tmp/o", "net:never-fetched/", "exact:z"))
    assert isinstance(verdict, Deny)
    assert count(breaker, 1, "sink:/tmp/o") == 5
    assert count(breaker, 1, "net:never-fetched/") == 0
    assert count(breaker, 1, "exact:z") == 0


def test_preflight_never_commits() -> None:
    breaker = make()
    for _ in range(10):
        assert isinstance(breaker.preflight(1, call("exact:a")), Allow)
    assert breaker.stats() == {"agents": 0, "entries": 0}


# --- which tools count -----------------------------------------------------------------------


def test_excluded_tools_neither_count_nor_reset() -> None:
    breaker = make()
    run(breaker, 4, "exact:a")
    assert all(isinstance(v, Allow) for v in run(breaker, 30, "exact:t", tool="todo_write"))
    assert isinstance(breaker.decide(1, call("exact:a")), Deny)
    assert count(breaker, 1, "exact:t") == 0


@pytest.mark.parametrize(
    ("raw", "tool", "counted"),
    [
        ({}, "bash", True),
        ({}, "todo_write", False),
        ({"exclude": ["mcp__*"]}, "mcp__github__list", False),
        ({"exclude": ["mcp__*"]}, "todo_write", True),  # exclude replaces the default outright
        ({"include": ["bash", "web_*"]}, "web_fetch", True),
        ({"include": ["bash", "web_*"]}, "read", False),
        ({"include": ["*"], "exclude": ["read"]}, "read", False),
        ({"exclude": ["a.b"]}, "axb", True),  # only * is a wildcard
        ({"exclude": ["*_write"]}, "todo_write_extra", True),  # patterns match the whole name
    ],
)
def test_include_and_exclude_with_wildcards(raw: dict[str, Any], tool: str, counted: bool) -> None:
    assert make(**raw).is_counted(tool) is counted


# --- agents and turns ------------------------------------------------------------------------


def test_agents_have_separate_windows() -> None:
    breaker = make()
    run(breaker, 4, "exact:a", agent=1)
    assert isinstance(breaker.decide(2, call("exact:a")), Allow)
    assert isinstance(breaker.decide(1, call("exact:a")), Deny)


def test_a_human_message_clears_the_window() -> None:
    breaker = make()
    run(breaker, 5, "exact:a")
    breaker.human_message(1)
    assert all(isinstance(v, Allow) for v in run(breaker, 4, "exact:a"))


def test_a_human_message_for_an_unknown_agent_creates_nothing() -> None:
    breaker = make()
    breaker.human_message(7)
    breaker.record_result(7, "c", "text")
    assert breaker.stats() == {"agents": 0, "entries": 0}


def test_forget_drops_the_agent_and_stats_count_what_is_held() -> None:
    breaker = make(window=4)
    run(breaker, 10, "exact:a", agent=1)
    run(breaker, 2, "exact:b", agent="sub-agent")
    assert breaker.stats() == {"agents": 2, "entries": 6}
    breaker.forget(1)
    assert breaker.stats() == {"agents": 1, "entries": 2}
    assert isinstance(breaker.decide(1, call("exact:a")), Allow)


# --- quoting results -------------------------------------------------------------------------


def test_the_denial_quotes_the_latest_allowed_call_sharing_a_hit() -> None:
    breaker = make()
    for n in range(4):
        c = call("net:h/", f"exact:{n}")
        breaker.decide(1, c)
        breaker.record_result(1, c.call_id, f"fetch {n}")
    other = call("exact:unrelated")
    breaker.decide(1, other)
    breaker.record_result(1, other.call_id, "unrelated result")
    verdict = breaker.decide(1, call("net:h/", "exact:9"))
    assert isinstance(verdict, Deny)
    assert "| fetch 3" in verdict.message
    assert "unrelated result" not in verdict.message


def test_the_denial_falls_back_to_the_agents_latest_result() -> None:
    breaker = make()
    run(breaker, 4, "exact:a")  # no results recorded for these
    other = call("exact:b")
    breaker.decide(1, other)
    breaker.record_result(1, other.call_id, "latest output")
    verdict = breaker.decide(1, call("exact:a"))
    assert isinstance(verdict, Deny)
    assert "| latest output" in verdict.message


def test_a_denials_own_result_is_never_stored_or_quoted() -> None:
    breaker = make()
    first = call("exact:a")
    breaker.decide(1, first)
    breaker.record_result(1, first.call_id, "the real output")
    run(breaker, 3, "exact:a")
    denied = call("exact:a")
    verdict = breaker.decide(1, denied)
    assert isinstance(verdict, Deny)
    breaker.record_result(1, denied.call_id, verdict.message)
    again = breaker.decide(1, call("exact:a"))
    assert isinstance(again, Deny)
    assert "| the real output" in again.message
    assert "REPEAT_TOOL_BLOCKED" not in again.message.partition("\n")[2]


def test_a_harness_that_reuses_one_call_id_still_gets_the_result_quoted_in_every_denial() -> None:
    breaker = make()
    for _ in range(4):
        assert isinstance(breaker.decide(1, call("exact:a", call_id="same")), Allow)
        breaker.record_result(1, "same", "the same output")
    for _ in range(3):
        verdict = breaker.decide(1, call("exact:a", call_id="same"))
        assert isinstance(verdict, Deny)
        assert "| the same output" in verdict.message
        breaker.record_result(1, "same", verdict.message)  # the denial comes back as its result


def test_results_leave_with_their_calls_and_are_cut_to_result_preview_chars() -> None:
    breaker = make(window=4, resultPreviewChars=10)
    first = call("exact:a")
    breaker.decide(1, first)
    breaker.record_result(1, first.call_id, "y" * 10_000)
    kept, length = breaker._agents[1].results.kept[first.call_id] or ("", 0)
    assert (len(kept), length) == (10 + REDACTION_MARGIN, 10_000), "only what quoting it reads is kept"
    assert (
        breaker._agents[1].results.previous(breaker._agents[1].window, (), 10)
        == "y" * 10 + "… [cut at 10 of 10000 characters]"
    )
    run(breaker, 4, "exact:b")
    assert first.call_id not in breaker._agents[1].results.kept
    breaker.record_result(1, "unknown-id", "ignored")
    assert "unknown-id" not in breaker._agents[1].results.kept


def test_without_any_result_the_denial_says_so() -> None:
    verdict = run(make(), 5, "exact:a")[-1]
    assert isinstance(verdict, Deny)
    assert "No result of the earlier attempt was recorded." in verdict.message


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
