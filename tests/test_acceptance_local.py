"""The seed README's acceptance list, case by case, on the real fingerprints: T14 onward (volume is
not a loop, the ``localHosts`` matrix), the three loops, the README's singled-out assertions and
properties of the real fingerprints. tests/test_acceptance.py holds T1-T12, the same way.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from breaker import Allow, Ask, Breaker, Deny, ToolCall, default_config
from breaker.core.reading.fingerprints import fingerprint_call
from tests.seed_calls import allowed, bash, guard, keys, kinds, make, ping_pong, tool

# --- T14: volume is not a loop signal --------------------------------------------------------


def test_t14_four_status_code_checks_of_four_urls_are_all_allowed() -> None:
    breaker = make()
    urls = ["https://example.org/", "https://example.com/", "https://open.canada.ca/", "https://github.com/"]
    checks = [bash(f"curl -s -o /dev/null -w '%{{http_code}}' {url}") for url in urls]
    assert all(allowed([guard(breaker, c, result="200") for c in checks]))


def test_t14b_one_site_fetched_many_times_is_not_a_loop_by_default() -> None:
    breaker = make()
    calls = [tool("web_fetch", url=f"https://api.github.com/repos/o/r/commits/{i}") for i in range(15)]
    calls += [bash(f"curl -s https://github.com/o/r/blob/main/f{i}.py") for i in range(15)]
    assert all(allowed([guard(breaker, c) for c in calls]))


def test_t14b_volume_budgets_are_opt_in() -> None:
    breaker = make(limits={"site": 3})
    calls = [tool("web_fetch", url=f"https://github.com/o/r/page{i}") for i in range(3)]
    verdicts = [guard(breaker, c) for c in calls]
    assert allowed(verdicts) == [True, True, False]
    assert keys(verdicts[-1]) == {"site:github.com"}


def test_t14c_every_page_is_a_new_resource() -> None:
    breaker = make()
    pages = [
        tool("web_fetch", url=f"https://api.github.com/repos/o/r/commits?page={n}") for n in range(1, 25)
    ]
    assert all(allowed([guard(breaker, c) for c in pages]))


def test_t14c_refetching_one_page_is_a_loop() -> None:
    breaker = make()
    url = "https://api.github.com/repos/o/r/commits?page=3"
    calls = [
        tool("web_fetch", url=url),
        bash(f"curl -s '{url}'"),
        bash(f"curl -s '{url}' | jq length"),
        tool("web_fetch", url=url + "&utm_source=agent"),
        bash(f"wget -qO- '{url}'"),
    ]
    verdicts = [guard(breaker, c) for c in calls]
    assert allowed(verdicts) == [True, True, True, True, False]
    assert "net" in kinds(verdicts[-1])


# --- T17-T22: the localHosts matrix ----------------------------------------------------------

LOCAL_URL = "http://localhost:8080/health"
PIPES = ["head -c 200", "jq .status", "grep ok", "wc -c", "tail -n 1", "cat", "jq .", "head -n 3"]


def local_call(n: int, url: str = LOCAL_URL) -> ToolCall:
    """The n-th of several different commands (distinct exact:/cmd:) against one local target."""
    return bash(f"curl -s {url} | {PIPES[n]}")


def warm_up(breaker: Breaker, url: str = LOCAL_URL) -> None:
    """Four calls on one local target: the next one would be its fifth."""
    for n in range(4):
        assert isinstance(shim(breaker, local_call(n, url)), Allow)


def shim(breaker: Breaker, call: ToolCall, approve: bool | None = None) -> Allow | Ask | Deny:
    """preflight → (operator answers an ask) → guard, as the shim drives one call.

    ``approve=None`` means no answer is given: an Ask is returned and left pending.
    """
    question = breaker.preflight(1, call)
    if isinstance(question, Ask):
        if approve is None:
            return question
        if not approve:
            breaker.record_result(1, call.call_id, "Error: tool call requires approval (rejected)")
            return question
    return guard(breaker, call)


@pytest.mark.parametrize(
    "url", [LOCAL_URL, "http://127.0.0.1:5000/v1/models", "http://192.168.1.20/api", "http://[::1]:3000/"]
)
def test_t17_ask_a_local_target_that_is_the_only_reason_to_deny(url: str) -> None:
    breaker = make()
    warm_up(breaker, url)
    question = breaker.preflight(1, local_call(4, url))
    assert isinstance(question, Ask)
    assert all(hit.fingerprint.local for hit in question.hits)
    assert "net:" in question.reason and "rest of this turn" in question.reason


def test_t18_deny_counts_local_calls_and_names_the_knob() -> None:
    breaker = make(localHosts="deny")
    warm_up(breaker)
    verdict = shim(breaker, local_call(4))
    assert isinstance(verdict, Deny)
    assert "localHosts" in verdict.message and "'allow'" in verdict.message


def test_t19_allow_never_fingerprints_local_targets() -> None:
    breaker = make(localHosts="allow")
    assert all(isinstance(shim(breaker, local_call(n % len(PIPES))), Allow) for n in range(7))
    assert breaker._agents[1].window.count("net:localhost:8080/health") == 0  # never counted
    # exact: and cmd: still count.
    same = [shim(breaker, bash("curl -s http://localhost:8080/metrics")) for _ in range(5)]
    assert [isinstance(v, Allow) for v in same] == [True, True, True, True, False]


def test_t20_a_mixed_call_is_never_askable() -> None:
    breaker = make()
    mixed = [bash(f"curl -s {LOCAL_URL} https://example.org/ | {PIPES[n]}") for n in range(5)]
    verdicts = [shim(breaker, c) for c in mixed]
    assert [type(v) for v in verdicts] == [Allow, Allow, Allow, Allow, Deny]
    assert "net:example.org/" in keys(verdicts[-1])


def test_t21_approval_exempts_local_targets_but_not_exact_or_cmd() -> None:
    breaker = make()
    warm_up(breaker)
    assert isinstance(shim(breaker, local_call(4), approve=True), Allow)
    assert all(isinstance(shim(breaker, local_call(n)), Allow) for n in range(len(PIPES)))
    same = [shim(breaker, bash(f"curl -s {LOCAL_URL}")) for _ in range(5)]
    assert [type(v) for v in same] == [Allow, Allow, Allow, Allow, Deny]
    assert kinds(same[-1]) <= {"exact", "cmd"}


def test_t21_the_approval_lasts_until_the_next_human_turn() -> None:
    breaker = make()
    warm_up(breaker)
    shim(breaker, local_call(4), approve=True)
    breaker.human_message(1)
    warm_up(breaker)
    assert isinstance(shim(breaker, local_call(4)), Ask)


def test_t22_a_refusal_stops_the_asking_until_the_next_human_turn() -> None:
    breaker = make()
    warm_up(breaker)
    assert isinstance(shim(breaker, local_call(4), approve=False), Ask)
    after = shim(breaker, local_call(5))
    assert isinstance(after, Deny)
    assert after.message.startswith("REPEAT_TOOL_BLOCKED:")
    assert "localHosts" in after.message
    assert isinstance(shim(breaker, local_call(6)), Deny)
    breaker.human_message(1)
    warm_up(breaker)
    assert isinstance(shim(breaker, local_call(4)), Ask)


def test_t22_ask_only_once_per_turn() -> None:
    breaker = make()
    warm_up(breaker)
    assert isinstance(shim(breaker, local_call(4)), Ask)  # nobody answers
    second = shim(breaker, local_call(5))
    assert isinstance(second, Deny)


# --- the three loops -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call_factory",
    [
        lambda: tool("read", path="/src/app.py"),
        lambda: tool("write", path="/src/app.py", content="print('hi')\n"),
        lambda: bash("npm test"),
    ],
)
def test_loop_a_the_same_arguments_verbatim(call_factory: Any) -> None:
    breaker = make()
    verdicts = [guard(breaker, call_factory()) for _ in range(5)]
    assert allowed(verdicts) == [True, True, True, True, False]
    assert "exact" in kinds(verdicts[-1])


def test_loop_b_a_changing_description_on_an_unchanged_command() -> None:
    breaker = make()
    verdicts = [
        guard(breaker, bash("python train.py", description=d)) for d in ("1st", "2nd", "3rd", "4th", "5th")
    ]
    assert allowed(verdicts) == [True, True, True, True, False]
    assert "exact" in kinds(verdicts[-1])


def test_loop_c_max_time_churn_with_host_ping_pong() -> None:
    breaker = make()
    verdicts = [guard(breaker, c) for c in ping_pong(6)]
    assert allowed(verdicts) == [True, True, True, True, False, False]
    assert {"net", "sink"} <= kinds(verdicts[4])


# --- the README's singled-out assertions -----------------------------------------------------


def test_four_different_urls_writing_to_dev_null_are_all_allowed() -> None:
    breaker = make()
    urls = [
        "https://a.example.org/",
        "https://b.example.org/x",
        "https://example.com/y",
        "https://example.net/",
    ]
    verdicts = [
        guard(breaker, bash(f"curl -s -o /dev/null -w '%{{http_code}}' {u}"), result="200") for u in urls
    ]
    assert all(allowed(verdicts))


# --- properties on the real fingerprints -----------------------------------------------------

POOL: list[tuple[str, dict[str, Any]]] = [
    ("bash", {"command": "curl -s -o /tmp/od.html https://open-data.canada.ca/", "description": "1st"}),
    ("bash", {"command": "curl --max-time 9 -s -o /tmp/od.html https://open.canada.ca/"}),
    ("bash", {"command": "wget -q -O /tmp/od.html https://www.open.canada.ca/"}),
    ("bash", {"command": "echo hi > /tmp/od.html", "timeoutMs": 5}),
    ("bash", {"command": f"curl -s {LOCAL_URL} | jq ."}),
    ("bash", {"command": "ls -la"}),
    ("web_fetch", {"url": "https://open.canada.ca/?utm_source=x"}),
    ("web_fetch", {"url": "https://api.github.com/repos/o/r/commits?page=2"}),
    ("read", {"path": "/src/app.py", "offset": 0}),
    ("todo_write", {"todos": []}),
]
SEQUENCES = st.lists(st.tuples(st.integers(0, len(POOL) - 1), st.sampled_from([1, 2])), max_size=40)


def replay(
    sequence: list[tuple[int, int]], **raw: Any
) -> tuple[Breaker, list[tuple[ToolCall, int, Allow | Deny]]]:
    breaker = make(**raw)
    out = []
    for n, (index, agent) in enumerate(sequence):
        name, arguments = POOL[index]
        call = ToolCall(name, arguments, f"p{n}")
        verdict = breaker.decide(agent, call)
        breaker.record_result(
            agent, call.call_id, verdict.message if isinstance(verdict, Deny) else f"out {n}"
        )
        out.append((call, agent, verdict))
    return breaker, out


@settings(max_examples=150, deadline=None)
@given(SEQUENCES)
def test_property_the_first_occurrence_of_anything_is_allowed(sequence: list[tuple[int, int]]) -> None:
    config = default_config()
    seen: dict[int, set[str]] = {1: set(), 2: set()}
    for call, agent, verdict in replay(sequence)[1]:
        fps = {fp.key for fp in fingerprint_call(call, config).fingerprints}
        if not fps & seen[agent]:
            assert isinstance(verdict, Allow)
        seen[agent] |= fps


@settings(max_examples=150, deadline=None)
@given(SEQUENCES)
def test_property_a_denied_call_never_commits_a_fingerprint_that_did_not_hit(
    sequence: list[tuple[int, int]],
) -> None:
    breaker = make(window=1000)
    config = breaker.config
    for n, (index, agent) in enumerate(sequence):
        name, arguments = POOL[index]
        call = ToolCall(name, arguments, f"p{n}")
        fps = {fp.key for fp in fingerprint_call(call, config).fingerprints}
        state = breaker._agents.get(agent)
        before = {key: state.window.count(key) if state else 0 for key in fps}
        verdict = breaker.decide(agent, call)
        if isinstance(verdict, Deny):
            hit = keys(verdict)
            for key in fps:
                assert breaker._agents[agent].window.count(key) == before[key] + (key in hit)


@settings(max_examples=100, deadline=None)
@given(SEQUENCES)
def test_property_the_same_sequence_replays_to_the_same_verdicts(sequence: list[tuple[int, int]]) -> None:
    assert [v for _, _, v in replay(sequence)[1]] == [v for _, _, v in replay(sequence)[1]]
