"""The seed README's acceptance list, case by case, on the real fingerprints.

Each test drives ``Breaker`` the way the shim does (``preflight`` then ``decide`` for a call,
``record_result`` for its result, ``human_message`` for a user turn) and checks the verdicts the
README promises.
"""

from __future__ import annotations

from itertools import count
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from breaker import Allow, Ask, Breaker, ConfigError, Deny, ToolCall, default_config, load_config
from breaker.core.reading.fingerprints import fingerprint_call

_ids = count()


def make(**raw: Any) -> Breaker:
    return Breaker(load_config({"preset": "seed", **(raw or {})}))


def tool(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name, arguments, f"call-{next(_ids)}")


def bash(command: str, **extra: Any) -> ToolCall:
    return tool("bash", command=command, **extra)


def guard(breaker: Breaker, call: ToolCall, agent: int | str = 1, result: str | None = None) -> Allow | Deny:
    """What the shim does for one call: preflight (answered with no approver), guard, result."""
    verdict = breaker.decide(agent, call)
    if isinstance(verdict, Deny):
        breaker.record_result(agent, call.call_id, verdict.message)
    elif result is not None:
        breaker.record_result(agent, call.call_id, result)
    return verdict


def kinds(verdict: Allow | Ask | Deny) -> set[str]:
    return {hit.fingerprint.kind for hit in verdict.hits} if isinstance(verdict, (Ask, Deny)) else set()


def keys(verdict: Allow | Ask | Deny) -> set[str]:
    return {hit.fingerprint.key for hit in verdict.hits} if isinstance(verdict, (Ask, Deny)) else set()


def allowed(verdicts: list[Allow | Deny]) -> list[bool]:
    return [isinstance(v, Allow) for v in verdicts]


def fingerprint_keys(call: ToolCall, **raw: Any) -> set[str]:
    return {
        fp.key for fp in fingerprint_call(call, load_config({"preset": "seed", **(raw or {})})).fingerprints
    }


# --- T1: host-spelling ping-pong -------------------------------------------------------------


def ping_pong(n: int) -> list[ToolCall]:
    spellings = [("https://open-data.canada.ca/", 60), ("https://open.canada.ca/", 30)]
    return [
        bash(f"curl --max-time {t} -s -o /tmp/od.html {url}", description=f"attempt {i}")
        for i, (url, t) in ((i, spellings[i % 2]) for i in range(n))
    ]


def test_t1_host_ping_pong_is_denied() -> None:
    calls = ping_pong(5)
    exact = [{k for k in fingerprint_keys(c) if k.startswith("exact:")} for c in calls[:2]]
    assert exact[0] != exact[1]  # v1 counted these; they differ, yet the loop is caught
    breaker = make()
    verdicts = [guard(breaker, c) for c in calls]
    assert allowed(verdicts) == [True, True, True, True, False]
    assert {"net:open.canada.ca/", "sink:/tmp/od.html"} <= keys(verdicts[-1])


def test_t1_the_real_model_scenario_blocks_the_second_spelling_at_cap_two() -> None:
    breaker = make(limits={"net": 2, "sink": 2})
    first = bash("curl -s -o /tmp/od.html https://open-data.canada.ca/", description="1st")
    second = bash("curl -s -o /tmp/od.html https://open.canada.ca/", description="2nd")
    assert isinstance(guard(breaker, first, result="<html>Open Government</html>"), Allow)
    verdict = guard(breaker, second)
    assert isinstance(verdict, Deny)
    assert "net:open.canada.ca/ 2/2" in verdict.message
    assert "sink:/tmp/od.html 2/2" in verdict.message


# --- T2, T3: decoy arguments -----------------------------------------------------------------


def test_t2_description_and_timeout_decoys_do_not_make_a_new_call() -> None:
    breaker = make()
    decoys = [("1st", 60000), ("2nd", 1000), ("3rd", 30000), ("4th", 5), ("5th", 120000)]
    calls = [bash("echo hello-repeat", description=d, timeoutMs=t) for d, t in decoys]
    for c, (decoy, timeout) in zip(calls, decoys, strict=True):
        for key in fingerprint_keys(c):
            assert decoy not in key
            assert str(timeout) not in key
    verdicts = [guard(breaker, c, result="hello-repeat") for c in calls]
    assert allowed(verdicts) == [True, True, True, True, False]
    assert "exact" in kinds(verdicts[-1])


def test_t2_the_real_model_scenario_blocks_the_cleaned_command_at_cap_two() -> None:
    breaker = make(limits={"exact": 2, "cmd": 2})
    guard(breaker, bash("echo hello-repeat", description="1st", timeoutMs=60000), result="hello-repeat")
    verdict = guard(breaker, bash("echo hello-repeat", description="2nd", timeoutMs=1000))
    assert isinstance(verdict, Deny)
    assert "hello-repeat" in verdict.message


def test_t3_decoys_on_any_tool_are_stripped() -> None:
    breaker = make()
    calls = [
        tool(
            "read",
            path="/src/app.py",
            offset=0,
            reason=f"look again {i}",
            title=f"t{i}",
            justification="x" * i,
        )
        for i in range(5)
    ]
    for c in calls:
        assert not any("look again" in key for key in fingerprint_keys(c))
    assert allowed([guard(breaker, c) for c in calls]) == [True, True, True, True, False]


def test_t3_a_configured_decoy_is_stripped_too() -> None:
    breaker = make(ignoreArgs={"web_fetch": ["nonce"]})
    verdicts = [guard(breaker, tool("web_fetch", url="https://example.org/x", nonce=n)) for n in range(5)]
    assert allowed(verdicts) == [True, True, True, True, False]


# --- T2b: room for the retry -----------------------------------------------------------------


def test_t2b_one_failed_attempt_leaves_room_for_the_retry() -> None:
    breaker = make()
    command = "curl -s https://data.example.org/feed.json"
    failed = guard(breaker, bash(command), result="curl: (6) Could not resolve host: data.example.org")
    retry = guard(breaker, bash(command), result='{"items": []}')
    assert isinstance(failed, Allow) and isinstance(retry, Allow)


def test_t2b_a_call_that_keeps_failing_is_stopped_on_its_fifth_attempt() -> None:
    breaker = make()
    error = "curl: (6) Could not resolve host: data.example.org"
    verdicts = [
        guard(breaker, bash("curl -s https://data.example.org/feed.json"), result=error) for _ in range(5)
    ]
    assert allowed(verdicts) == [True, True, True, True, False]
    assert isinstance(verdicts[-1], Deny)
    assert f"| {error}" in verdicts[-1].message


# --- T4: unrelated calls ---------------------------------------------------------------------


def test_t4_unrelated_calls_are_never_blocked() -> None:
    breaker = make()
    calls = [bash(f"echo step-{i}") for i in range(15)]
    calls += [tool("read", path=f"/src/module_{i}.py") for i in range(15)]
    calls += [tool("web_fetch", url=f"https://docs.example.org/page/{i}") for i in range(15)]
    calls += [bash(f"curl -s https://api.example.org/items/{i}") for i in range(15)]
    calls += [tool("write", path=f"/tmp/out-{i}.txt", content=str(i)) for i in range(15)]
    assert all(allowed([guard(breaker, c) for c in calls]))


# --- T5: swapping tools on one resource ------------------------------------------------------


def test_t5_curl_and_wget_of_one_url_to_one_file_are_the_same_action() -> None:
    breaker = make()
    url = "https://example.org/data.csv"
    calls = [
        bash(f"curl -s -o /tmp/data.csv {url}") if i % 2 == 0 else bash(f"wget -q -O /tmp/data.csv {url}")
        for i in range(5)
    ]
    verdicts = [guard(breaker, c) for c in calls]
    assert allowed(verdicts) == [True, True, True, True, False]
    assert {"net:example.org/data.csv", "sink:/tmp/data.csv"} <= keys(verdicts[-1])


def test_t5_a_shell_fetch_and_a_fetch_tool_share_the_url_budget() -> None:
    breaker = make()
    url = "https://example.org/report"
    calls = [bash(f"curl -s {url}") if i % 2 else tool("web_fetch", url=url) for i in range(5)]
    verdicts = [guard(breaker, c) for c in calls]
    assert allowed(verdicts) == [True, True, True, True, False]
    assert keys(verdicts[-1]) == {"net:example.org/report"}


# --- T6: exclusion ---------------------------------------------------------------------------


def test_t6_excluded_tools_neither_count_nor_reset() -> None:
    breaker = make()
    todo = [tool("todo_write", todos=[{"content": "x", "status": "pending"}]) for _ in range(30)]
    assert all(allowed([guard(breaker, c) for c in todo]))
    verdicts = []
    for _ in range(5):
        verdicts.append(guard(breaker, bash("make test")))
        guard(breaker, tool("todo_write", todos=[]))  # between repeats: no reset
    assert allowed(verdicts) == [True, True, True, True, False]


def test_t6_exclude_and_include_take_wildcards() -> None:
    breaker = make(exclude=["mcp__*"], include=[])
    assert not breaker.is_counted("mcp__github__list_issues")
    assert breaker.is_counted("todo_write")  # exclude replaces the default list
    only_shell = make(include=["bash", "pwsh"])
    assert all(allowed([guard(only_shell, tool("read", path="/a")) for _ in range(10)]))
    assert not all(allowed([guard(only_shell, bash("ls")) for _ in range(5)]))


# --- T7: per-agent isolation -----------------------------------------------------------------


def test_t7_one_agents_loop_never_trips_another() -> None:
    breaker = make()
    assert allowed([guard(breaker, bash("ls -la"), agent=1) for _ in range(5)])[-1] is False
    assert all(allowed([guard(breaker, bash("ls -la"), agent="subagent-7") for _ in range(4)]))
    assert all(allowed([guard(breaker, bash("ls -la"), agent=2) for _ in range(4)]))
    breaker.forget(1)
    assert isinstance(guard(breaker, bash("ls -la"), agent=1), Allow)


# --- T8: volatile flags ----------------------------------------------------------------------

VOLATILE_VARIANTS = [
    "curl https://example.org/api/status",
    "curl --max-time 10 https://example.org/api/status",
    "curl -sSL https://example.org/api/status",
    "timeout 30 curl --retry 3 https://example.org/api/status",
    "FOO=1 curl --connect-timeout 5 -m 20 --silent https://example.org/api/status",
]


def test_t8_volatile_flags_and_wrappers_do_not_make_a_new_command() -> None:
    cmd_keys = [{k for k in fingerprint_keys(bash(v)) if k.startswith("cmd:")} for v in VOLATILE_VARIANTS]
    assert all(len(k) == 1 for k in cmd_keys)
    assert len(set.union(*cmd_keys)) == 1
    breaker = make()
    verdicts = [guard(breaker, bash(v)) for v in VOLATILE_VARIANTS]
    assert allowed(verdicts) == [True, True, True, True, False]
    assert {"cmd", "net"} <= kinds(verdicts[-1])


# --- T9: normaliser units (the fingerprint tests go deep; these are the promises) -------------


def net_keys(call: ToolCall) -> set[str]:
    return {k for k in fingerprint_keys(call) if k.startswith("net:")}


def test_t9_host_spelling_folds_to_one_net_key() -> None:
    for url in (
        "https://open-data.canada.ca/",
        "https://WWW.Open.Canada.ca:443/#top",
        "open.canada.ca",
        "https://open.canada.ca./?utm_source=x&fbclid=y",
    ):
        assert net_keys(tool("web_fetch", url=url)) == {"net:open.canada.ca/"}


def test_t9_the_query_is_kept_sorted_and_page_is_a_new_resource() -> None:
    a = net_keys(tool("web_fetch", url="https://example.org/list?page=2&sort=new"))
    b = net_keys(tool("web_fetch", url="https://example.org/list?sort=new&page=2&utm_campaign=z"))
    c = net_keys(tool("web_fetch", url="https://example.org/list?page=3&sort=new"))
    assert a == b
    assert a != c


def test_t9_generic_sinks_are_not_fingerprints() -> None:
    keys_ = fingerprint_keys(bash("curl -s -o /dev/null -w '%{http_code}' https://example.org/ 2>/dev/null"))
    assert not any(k.startswith("sink:") for k in keys_)
    assert "sink:/tmp/x" in fingerprint_keys(bash("curl -s https://example.org/ > /tmp/x"))


def test_t9_the_verb_sees_through_wrappers() -> None:
    assert "verb:curl" in fingerprint_keys(bash("sudo FOO=1 timeout 30 /usr/bin/curl https://example.org/"))


# --- T10: file positions, never paths alone --------------------------------------------------


def test_t10_reading_the_same_position_again_is_a_loop() -> None:
    breaker = make()
    verdicts = [guard(breaker, tool("read", path="/src/app.py", offset=200, limit=100)) for _ in range(5)]
    assert allowed(verdicts) == [True, True, True, True, False]
    assert kinds(verdicts[-1]) == {"exact"}


def test_t10_new_offsets_and_read_write_cycles_are_never_blocked() -> None:
    breaker = make()
    pages = [tool("read", path="/src/big.py", offset=offset, limit=100) for offset in range(0, 3000, 100)]
    assert all(allowed([guard(breaker, c) for c in pages]))
    cycle = []
    for i in range(8):
        cycle.append(tool("read", path="/src/app.py", offset=i * 50))
        cycle.append(tool("edit", path="/src/app.py", old_string=f"v{i}", new_string=f"v{i + 1}"))
        cycle.append(tool("write", path="/src/notes.md", content=f"draft {i}"))
    assert all(allowed([guard(breaker, c) for c in cycle]))


# --- T11: a denial spends only what hit ------------------------------------------------------


def test_t11_denied_calls_spend_only_the_budget_that_hit() -> None:
    breaker = make()
    for i in range(4):
        guard(breaker, bash(f"echo {i} > /tmp/out.txt"))
    denied = guard(breaker, bash("curl -s -o /tmp/out.txt https://example.org/fresh"))
    assert isinstance(denied, Deny)
    assert keys(denied) == {"sink:/tmp/out.txt"}
    # The hit was committed: re-attempting the blocked call stays blocked.
    assert isinstance(guard(breaker, bash("curl -s -o /tmp/out.txt https://example.org/fresh")), Deny)
    # Nothing else was: the URL and the command still have their whole budget.
    fetches = [guard(breaker, bash(f"curl -s https://example.org/fresh | head -n {n}")) for n in range(1, 6)]
    assert allowed(fetches) == [True, True, True, True, False]


def test_a_denied_curl_does_not_spend_net_budget_on_the_url_it_never_fetched() -> None:
    breaker = make(limits={"sink": 2})
    guard(breaker, bash("echo seed > /tmp/page.html"))
    denied = guard(breaker, bash("curl -s https://example.org/ -o /tmp/page.html"))
    assert isinstance(denied, Deny) and "net" not in kinds(denied)
    fetches = [guard(breaker, tool("web_fetch", url="https://example.org/")) for _ in range(5)]
    assert allowed(fetches) == [True, True, True, True, False]


# --- T12: the guard end to end ---------------------------------------------------------------


def test_t12_the_guard_denies_quotes_survives_a_notice_and_resets_on_a_human_turn() -> None:
    breaker = make()
    for _ in range(4):
        guard(breaker, bash("cat /etc/hostname"), result="build-host-7")
    denied = guard(breaker, bash("cat /etc/hostname"))
    assert isinstance(denied, Deny)
    assert denied.message.startswith("REPEAT_TOOL_BLOCKED:")
    assert "| build-host-7" in denied.message
    # A plugin notice (the reminder's nudge) and the denial's own result are not a human turn.
    breaker.record_result(1, "notice-from-repeat-tool-reminder", "You repeated `cat /etc/hostname` 5 times.")
    again = guard(breaker, bash("cat /etc/hostname"))
    assert isinstance(again, Deny)
    assert "| build-host-7" in again.message
    assert "REPEAT_TOOL_BLOCKED" not in again.message.partition("\n")[2]
    breaker.human_message(1)
    assert isinstance(guard(breaker, bash("cat /etc/hostname")), Allow)


def test_t12_the_denial_says_why_and_what_to_do() -> None:
    breaker = make()
    verdict = [guard(breaker, bash("echo hi", description=f"try {n}")) for n in range(5)][-1]
    assert isinstance(verdict, Deny)
    assert "`bash`" in verdict.message
    assert "5/5" in verdict.message
    for phrase in ("description", "timeoutMs", "--max-time", "spelling of the host", "tell the user"):
        assert phrase in verdict.message
    assert "<tool_call" not in verdict.message


COSMETIC = "does not make this a new action"


def _fifth(*calls: ToolCall, **raw: Any) -> Deny:
    """The verdict on the last of ``calls`` (the 5th at a cap of 5), a denial."""
    breaker = make(**raw)
    verdicts = [guard(breaker, call, result="ok") for call in calls]
    assert allowed(verdicts) == [True] * (len(calls) - 1) + [False]
    verdict = verdicts[-1]
    assert isinstance(verdict, Deny)
    return verdict


def test_t12_a_repeat_that_changed_nothing_is_not_told_that_changing_a_description_does_not_help() -> None:
    same = [bash("curl -sS https://open.canada.ca/ -o /tmp/od.html", description="fetch") for _ in range(5)]
    verdict = _fifth(*same)
    assert "it repeats an action this agent already took" in verdict.message
    assert COSMETIC not in verdict.message and "spelling of the host" not in verdict.message
    assert COSMETIC not in _fifth(*(tool("read", file_path="/w/a.md") for _ in range(5))).message


@pytest.mark.parametrize(
    ("changed", "last"),
    [
        ("its description", bash("curl -sS https://open.canada.ca/ -o /tmp/od.html", description="again")),
        (
            "a decoy argument",
            bash("curl -sS https://open.canada.ca/ -o /tmp/od.html", description="fetch", timeoutMs=9),
        ),
        (
            "a volatile flag",
            bash("curl -sS --max-time 60 https://open.canada.ca/ -o /tmp/od.html", description="fetch"),
        ),
        (
            "the host's spelling",
            bash("curl -sS https://OPEN.Canada.ca/ -o /tmp/od.html", description="fetch"),
        ),
        ("a host alias", bash("curl -sS https://open-data.canada.ca/ -o /tmp/od.html", description="fetch")),
    ],
)
def test_t12_a_repeat_that_changed_only_what_is_stripped_is_told_it_does_not_help(
    changed: str, last: ToolCall
) -> None:
    same = [bash("curl -sS https://open.canada.ca/ -o /tmp/od.html", description="fetch") for _ in range(4)]
    verdict = _fifth(*same, last)
    assert COSMETIC in verdict.message, changed
    for phrase in ("description", "timeoutMs", "--max-time", "spelling of the host"):
        assert phrase in verdict.message


def test_t12_a_repeat_on_the_same_target_that_changed_the_call_itself_is_not_told_so() -> None:
    """Only the sink repeats: the URL changed, which is no cosmetic change; a web fetch whose host
    is spelled otherwise is (its net: key is the same)."""
    writes = [
        bash(f"curl -sS https://open.canada.ca/p{n} -o /tmp/od.html", description="fetch") for n in range(5)
    ]
    verdict = _fifth(*writes)
    assert {hit.fingerprint.kind for hit in verdict.hits} == {"sink"}
    assert COSMETIC not in verdict.message
    fetches = [tool("web_fetch", url="https://open.canada.ca/x") for _ in range(4)]
    verdict = _fifth(*fetches, tool("web_fetch", url="https://Open.Canada.CA/x"))
    assert COSMETIC in verdict.message


def test_t12c_the_config_fails_loud() -> None:
    for raw, key in (
        ({"window": 3}, "window"),
        ({"limits": {"exact": 1}}, "limits.exact"),
        ({"previewChars": 0}, "previewChars"),
        ({"localHosts": "sometimes"}, "localHosts"),
        ({"denyAfter": 3}, "denyAfter"),
        ({"windows": 12}, "windows"),
    ):
        with pytest.raises(ConfigError, match=key):
            load_config(raw)
    assert load_config({"pathAliases": ["path"]}) == default_config()


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
