"""Issue 8's escalation on the Breaker: advisory stages, the failure track, and onLimit: ask.

Calls use a fake fingerprinter (as in test_decision.py): ``{"keys": [...], "local": bool}`` are
the call's fingerprint keys, the kind being the text before the first colon.
"""

from __future__ import annotations

from itertools import count
from typing import Any

import pytest

from breaker import Allow, Ask, Breaker, BreakerConfig, Deny, ToolCall, load_config
from breaker.core.judging.verdicts import Notice
from breaker.core.reading.fingerprints import CallFingerprints, Fingerprint
from breaker.core.wording.messages import NOTICE_PREFIX, PREFIX, summarize_notice, warn_notice

TARGETS = frozenset({"net", "host", "site", "sink", "family", "verb"})
FAILED = {"kind": "foreground", "exitCode": 2, "signal": None, "timedOut": False, "aborted": False}
WORKED = {"kind": "foreground", "exitCode": 0, "signal": None, "timedOut": False, "aborted": False}
_ids = count()


def fake_fingerprints(call: ToolCall, config: BreakerConfig) -> CallFingerprints:
    args: Any = call.arguments
    local = bool(args.get("local", False))
    kinds = [(key.partition(":")[0], key) for key in args["keys"]]
    fps = tuple(Fingerprint(kind, key, local and kind in TARGETS) for kind, key in kinds)
    return CallFingerprints(fps, is_local=local)


def make(**raw: Any) -> Breaker:
    return Breaker(load_config({"preset": "seed", **raw}), fingerprinter=fake_fingerprints)


def call(*keys: str, local: bool = False, tool: str = "bash") -> ToolCall:
    return ToolCall(tool, {"keys": list(keys), "local": local}, f"c{next(_ids)}")


def run(
    breaker: Breaker, *keys: str, outcome: dict[str, Any] | None = None, text: str = "out"
) -> tuple[Allow | Deny, tuple[Notice, ...]]:
    """One call through the guard and, when it ran, its result; the verdict and the notices."""
    this = call(*keys)
    verdict = breaker.decide(1, this)
    notices = breaker.record_result(1, this.call_id, text, outcome if isinstance(verdict, Allow) else None)
    return verdict, notices


# --- advisory stages ----------------------------------------------------------------------------


def test_no_notice_by_default_however_often_a_call_repeats() -> None:
    breaker = make()
    assert all(notices == () for _, notices in (run(breaker, "exact:a") for _ in range(4)))


def test_warn_at_gives_one_light_notice_at_exactly_that_count() -> None:
    breaker = make(warnAt=3)
    results = [run(breaker, "exact:a") for _ in range(4)]
    assert [len(notices) for _, notices in results] == [0, 0, 1, 0]
    notice = results[2][1][0]
    assert notice.text.startswith(NOTICE_PREFIX)
    assert "`exact:a` has come up 3 times in your last 12 tool calls" in notice.text
    assert "blocked at 5" in notice.text
    assert notice.summary == "exact:a x3"


@pytest.mark.parametrize(
    ("evidence", "stop"),
    [
        ({}, "blocked at 5, or sooner while they keep failing or answering alike)"),
        ({"failLimit": None}, "blocked at 5, or sooner while they keep answering alike)"),
        ({"sameResultLimit": None}, "blocked at 5, or sooner while they keep failing)"),
        ({"failLimit": None, "sameResultLimit": None}, "blocked at 5)"),
    ],
)
def test_a_notice_says_where_calls_are_stopped_the_cap_or_sooner_by_their_results(
    evidence: dict[str, Any], stop: str
) -> None:
    config = load_config({"warnAt": 2, **evidence})
    assert stop in warn_notice("exact:a", 2, 5, config).text
    assert stop in summarize_notice("exact:a", 3, 5, config).text


def test_the_notice_is_decided_with_the_allow_and_delivered_with_the_result() -> None:
    breaker = make(warnAt=2)
    run(breaker, "exact:a")
    second = call("exact:a")
    verdict = breaker.decide(1, second)
    assert isinstance(verdict, Allow) and verdict.notice is not None
    assert breaker.record_result(1, second.call_id, "out") == (verdict.notice,)
    assert breaker.record_result(1, second.call_id, "out") == ()  # owed once


def test_summarize_at_demands_a_summary_and_untried_approaches() -> None:
    breaker = make(warnAt=2, summarizeAt=4)
    results = [run(breaker, "exact:a")[1] for _ in range(4)]
    assert [len(notices) for notices in results] == [0, 1, 0, 1]
    text = results[3][0].text
    assert "summarise your progress" in text
    assert "approaches you have not tried yet" in text


def test_when_both_stages_fall_on_one_count_the_summary_wins() -> None:
    breaker = make(warnAt=3, summarizeAt=3)
    notices = [run(breaker, "exact:a")[1] for _ in range(3)]
    assert len(notices[2]) == 1 and "summarise" in notices[2][0].text


def test_a_stage_at_or_above_the_cap_never_speaks() -> None:
    breaker = make(warnAt=5)
    results = [run(breaker, "exact:a") for _ in range(6)]
    assert all(notices == () for _, notices in results)
    assert isinstance(results[4][0], Deny)


def test_uncapped_fingerprints_earn_no_notice() -> None:
    breaker = make(warnAt=2)
    assert [run(breaker, "site:example.org", "family:http-fetch")[1] for _ in range(3)] == [(), (), ()]


def test_several_crossing_at_once_give_one_notice_naming_a_target_before_exact() -> None:
    breaker = make(warnAt=3)
    keys = ("exact:bash:curl x", "cmd:curl:curl x", "net:x.org/", "sink:/tmp/o")
    notices = [run(breaker, *keys)[1] for _ in range(3)][2]
    assert len(notices) == 1
    assert "`net:x.org/`" in notices[0].text


@pytest.mark.parametrize(
    ("keys", "named"),
    [
        (("exact:e", "cmd:c"), "cmd:c"),
        (("exact:e", "verb:v"), "verb:v"),
        (("sink:/s", "net:n/"), "net:n/"),
        (("net:n/", "host:h"), "host:h"),
    ],
)
def test_tie_breaking_between_measures(keys: tuple[str, ...], named: str) -> None:
    breaker = make(warnAt=2, limits={"verb": 5, "host": 5})
    notices = [run(breaker, *keys)[1] for _ in range(2)][1]
    assert [f"`{named}`" in notice.text for notice in notices] == [True]


def test_the_stronger_stage_is_named_over_a_more_actionable_measure() -> None:
    breaker = make(warnAt=2, summarizeAt=3)
    run(breaker, "exact:e")
    run(breaker, "exact:e")  # exact:e at 2 (warned)
    _, notices = run(breaker, "exact:e", "net:n/")  # exact:e reaches 3 (summary), net:n/ is at 1
    assert len(notices) == 1 and "`exact:e`" in notices[0].text and "summarise" in notices[0].text


def test_a_notice_never_resets_the_window() -> None:
    """A notice reaches dsh as a plugin message; only a human message clears the window."""
    breaker = make(warnAt=2, summarizeAt=3)
    verdicts = [run(breaker, "exact:a")[0] for _ in range(6)]
    assert [type(v) for v in verdicts] == [Allow, Allow, Allow, Allow, Deny, Deny]
    breaker.human_message(1)
    assert isinstance(run(breaker, "exact:a")[0], Allow)


# --- the failure track --------------------------------------------------------------------------


def test_failures_are_not_judged_by_default() -> None:
    breaker = make()
    results = [run(breaker, "exact:a", outcome=FAILED) for _ in range(4)]
    assert all(isinstance(verdict, Allow) and notices == () for verdict, notices in results)


def test_fail_warn_at_warns_once_at_exactly_that_streak_and_quotes_the_reason() -> None:
    breaker = make(failWarnAt=2)
    notices = [run(breaker, "exact:a", "net:h/", outcome=FAILED)[1] for _ in range(3)]
    assert [len(n) for n in notices] == [0, 1, 0]
    text = notices[1][0].text
    assert "`net:h/` has failed 2 times in a row" in text and "exited with code 2" in text
    assert notices[1][0].summary == "net:h/ failed x2"


def test_fail_limit_blocks_the_failing_fingerprint_and_says_why() -> None:
    breaker = make(failLimit=3)
    for _ in range(3):
        verdict, _ = run(breaker, "exact:ls", outcome=FAILED, text="ls: no such dir\n[exit code: 2]")
        assert isinstance(verdict, Allow)
    verdict, _ = run(breaker, "exact:ls", outcome=WORKED)
    assert isinstance(verdict, Deny)
    assert verdict.hits == () and [f.fingerprint.key for f in verdict.failures] == ["exact:ls"]
    assert verdict.message.startswith(PREFIX)
    assert "exact:ls 3/3" in verdict.message
    assert "The last failure: the command exited with code 2." in verdict.message
    assert "| ls: no such dir" in verdict.message


def test_a_call_not_carrying_the_failing_fingerprint_is_never_blocked_by_it() -> None:
    breaker = make(failLimit=2)
    run(breaker, "exact:build", "cmd:make", outcome=FAILED)
    run(breaker, "exact:build", "cmd:make", outcome=FAILED)
    assert isinstance(run(breaker, "exact:cat-log", outcome=WORKED)[0], Allow)
    assert isinstance(run(breaker, "exact:build2", "cmd:make-other", outcome=WORKED)[0], Allow)
    assert isinstance(run(breaker, "exact:build", "cmd:make")[0], Deny)


def test_a_success_clears_the_streak() -> None:
    breaker = make(failLimit=3, limits={"exact": 10})
    run(breaker, "exact:a", outcome=FAILED)
    run(breaker, "exact:a", outcome=FAILED)
    run(breaker, "exact:a", outcome=WORKED)
    run(breaker, "exact:a", outcome=FAILED)
    assert isinstance(run(breaker, "exact:a", outcome=FAILED)[0], Allow)  # the streak is 1, then 2


def test_a_success_of_another_fingerprint_does_not_clear_the_streak() -> None:
    breaker = make(failLimit=2, limits={"exact": 10})
    run(breaker, "exact:build", outcome=FAILED)
    run(breaker, "exact:read-log", outcome=WORKED)
    run(breaker, "exact:build", outcome=FAILED)
    assert isinstance(run(breaker, "exact:build")[0], Deny)


def test_an_undecided_result_neither_grows_nor_clears_a_streak() -> None:
    breaker = make(failLimit=3, limits={"exact": 10})
    run(breaker, "exact:a", outcome=FAILED)
    run(breaker, "exact:a", outcome={"isError": True})  # a thrown error: isError alone is no failure
    run(breaker, "exact:a", outcome={**FAILED, "aborted": True})  # a cancelled call
    run(breaker, "exact:a", outcome=None)  # an older shim sends no facts
    run(breaker, "exact:a", outcome=FAILED)
    assert isinstance(run(breaker, "exact:a", outcome=FAILED)[0], Allow)  # the streak was 2
    assert isinstance(run(breaker, "exact:a")[0], Deny)  # now 3


def test_a_denial_by_the_breaker_is_not_a_failure() -> None:
    breaker = make(failLimit=2, limits={"exact": 3})
    run(breaker, "exact:a", outcome=WORKED)
    run(breaker, "exact:a", outcome=WORKED)
    denied = call("exact:a")
    assert isinstance(breaker.decide(1, denied), Deny)
    breaker.record_result(1, denied.call_id, f"Error: {PREFIX} …", {"isError": True, "exitCode": 1})
    assert breaker._agents[1].failures.streaks.get("exact:a") is None


def test_only_capped_fingerprints_have_streaks() -> None:
    breaker = make(failLimit=2)
    run(breaker, "exact:a1", "verb:ls", outcome=FAILED)
    run(breaker, "exact:a2", "verb:ls", outcome=FAILED)
    assert isinstance(run(breaker, "exact:a3", "verb:ls")[0], Allow)


def test_a_failure_denial_commits_the_failing_fingerprint_and_a_human_turn_clears_the_streak() -> None:
    breaker = make(failLimit=2)
    run(breaker, "exact:a", "net:h/", outcome=FAILED)
    run(breaker, "exact:a", "net:h/", outcome=FAILED)
    verdict, _ = run(breaker, "exact:a", "net:h/", "sink:/tmp/x")
    assert isinstance(verdict, Deny)
    state = breaker._agents[1]
    assert state.window.count("exact:a") == 3 and state.window.count("sink:/tmp/x") == 0
    breaker.human_message(1)
    assert isinstance(run(breaker, "exact:a", "net:h/")[0], Allow)


def test_a_streak_ends_when_its_fingerprint_leaves_the_window() -> None:
    breaker = make(failLimit=2, window=4)
    run(breaker, "exact:a", outcome=FAILED)
    for n in range(4):
        run(breaker, f"exact:other{n}", outcome=WORKED)
    run(breaker, "exact:a", outcome=FAILED)
    assert isinstance(run(breaker, "exact:a")[0], Allow)


def test_both_tracks_can_deny_one_call_and_the_denial_names_both() -> None:
    breaker = make(failLimit=3, limits={"exact": 4})
    for _ in range(3):
        run(breaker, "exact:a", outcome=FAILED)
    verdict, _ = run(breaker, "exact:a")
    assert isinstance(verdict, Deny)
    assert verdict.message.count(PREFIX) == 1
    assert "exact:a 4/4" in verdict.message and "exact:a 3/3" in verdict.message


def test_the_failure_notice_comes_before_the_repetition_notice() -> None:
    breaker = make(warnAt=2, failWarnAt=2)
    run(breaker, "exact:a", outcome=FAILED)
    _, notices = run(breaker, "exact:a", outcome=FAILED)
    assert [("failed" in n.text, "come up" in n.text) for n in notices] == [(True, False), (False, True)]


# --- onLimit: ask -------------------------------------------------------------------------------


def ask_then(breaker: Breaker, answer: str, *keys: str, local: bool = False) -> Allow | Ask | Deny:
    """One call: preflight; when it asks, the operator answers (approve / decline); then the guard."""
    this = call(*keys, local=local)
    question = breaker.preflight(1, this)
    if isinstance(question, Ask) and answer == "decline":
        breaker.record_result(1, this.call_id, "Error: the user rejected tool", None)
        return question
    verdict = breaker.decide(1, this)
    breaker.record_result(1, this.call_id, "out", WORKED)
    return question if isinstance(question, Ask) else verdict


def test_on_limit_deny_never_asks_about_a_public_repeat() -> None:
    breaker = make()
    verdicts = [ask_then(breaker, "approve", "exact:a") for _ in range(5)]
    assert isinstance(verdicts[4], Deny)


def test_on_limit_ask_asks_at_the_cap_and_an_approval_exempts_the_measure_for_the_turn() -> None:
    breaker = make(onLimit="ask")
    verdicts = [ask_then(breaker, "approve", "exact:a", "net:h/") for _ in range(8)]
    assert [type(v) for v in verdicts] == [Allow] * 4 + [Ask] + [Allow] * 3
    question = verdicts[4]
    assert isinstance(question, Ask)
    assert "reached a limit" in question.reason and "exact:a 5/5" in question.reason
    assert breaker._agents[1].asks.exempt == {"exact:a", "net:h/"}


def test_on_limit_ask_once_per_measure_per_turn_and_a_decline_keeps_it_blocked() -> None:
    breaker = make(onLimit="ask")
    verdicts = [ask_then(breaker, "decline", "exact:a") for _ in range(7)]
    assert [type(v) for v in verdicts] == [Allow] * 4 + [Ask, Deny, Deny]
    denial = verdicts[5]
    assert isinstance(denial, Deny) and "did not approve" in denial.message
    # Another measure gets its own ask; a human message opens the asking again.
    assert isinstance([ask_then(breaker, "decline", "exact:b") for _ in range(5)][4], Ask)
    breaker.human_message(1)
    assert isinstance([ask_then(breaker, "approve", "exact:a") for _ in range(5)][4], Ask)


def test_on_limit_ask_covers_the_failure_gate() -> None:
    breaker = make(onLimit="ask", failLimit=2)
    for _ in range(2):
        run(breaker, "exact:a", outcome=FAILED)
    question = breaker.preflight(1, call("exact:a"))
    assert isinstance(question, Ask) and "exact:a 2/2 failures in a row" in question.reason


def test_local_hosts_ask_keeps_the_local_ask_under_on_limit_ask() -> None:
    """Local repeats alone follow localHosts: ask (once per turn, exempting every local target);
    everything else follows onLimit."""
    breaker = make(onLimit="ask")
    verdicts = [ask_then(breaker, "approve", f"exact:{n}", "net:localhost/", local=True) for n in range(6)]
    question = verdicts[4]
    assert isinstance(question, Ask) and "repeats a local target" in question.reason
    assert breaker._agents[1].asks.approved and not breaker._agents[1].asks.exempt


def test_local_hosts_ask_refused_is_not_asked_again_through_on_limit() -> None:
    breaker = make(onLimit="ask")
    verdicts = [ask_then(breaker, "decline", f"exact:{n}", "net:localhost/", local=True) for n in range(6)]
    assert [type(v) for v in verdicts] == [Allow] * 4 + [Ask, Deny]


def test_on_limit_ask_under_local_hosts_deny_asks_about_local_repeats_per_measure() -> None:
    breaker = make(onLimit="ask", localHosts="deny")
    verdicts = [ask_then(breaker, "approve", f"exact:{n}", "net:localhost/", local=True) for n in range(6)]
    question = verdicts[4]
    assert isinstance(question, Ask) and "reached a limit" in question.reason
    assert breaker._agents[1].asks.exempt == {"net:localhost/"}


def test_the_defaults_keep_the_seed_verdicts() -> None:
    """With every escalation key at its default, a long mixed session gives the same verdicts as
    the seed rules (no notices, no failure gate, no onLimit ask)."""
    seed = make()
    escalated_off = make(onLimit="deny", warnAt=0, summarizeAt=None, failWarnAt=-1, failLimit=None)
    for n in range(40):
        keys = (f"exact:{n % 3}", f"net:h{n % 2}/")
        assert type(run(seed, *keys, outcome=FAILED)[0]) is type(run(escalated_off, *keys, outcome=FAILED)[0])


@pytest.mark.parametrize(("on_limit", "local"), [("deny", True), ("ask", False)])
def test_a_declined_ask_tells_the_model_why_the_call_did_not_run(on_limit: str, local: bool) -> None:
    """The harness words the result of a call whose ask was declined or had no one to answer (a
    headless dsh: "no approval channel is available"), not why the breaker asked: a notice with
    that result says it, what stays blocked and what to do."""
    breaker = make(onLimit=on_limit)
    for n in range(4):
        run(breaker, f"exact:{n}" if local else "exact:a", "net:localhost/" if local else "net:h/")
    asked = call("exact:4" if local else "exact:a", "net:localhost/" if local else "net:h/", local=local)
    assert isinstance(breaker.preflight(1, asked), Ask)
    unavailable = 'Error: tool "bash" requires approval, but no approval channel is available'
    (notice,) = breaker.record_result(1, asked.call_id, unavailable, None)
    assert notice.text.startswith(f"{NOTICE_PREFIX} the call above was not run")
    assert ("localHosts: 'ask'" if local else "onLimit: 'ask'") in notice.text
    assert "no one to ask" in notice.text and "until the next user message" in notice.text
    assert local or "exact:a, net:h/" in notice.text


def test_a_call_that_was_not_asked_about_gets_no_declined_ask_notice() -> None:
    breaker = make(onLimit="ask")
    assert run(breaker, "exact:a")[1] == ()
