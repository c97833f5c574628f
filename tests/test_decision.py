"""The Breaker's rules on a fake fingerprinter, so each rule is tested apart from normalisation.

A call's arguments are ``{"keys": [...], "local": bool}``: its fingerprint keys as given, the
kind being the text before the first colon; with ``local`` the target kinds are marked local.
"""

from __future__ import annotations

from typing import Any

import pytest

from breaker import Allow, Breaker, BreakerConfig, Deny, ToolCall, load_config
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
