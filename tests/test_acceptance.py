"""The seed README's acceptance list, case by case, on the real fingerprints: T1-T12 (host
spellings, decoys, retries, unrelated calls, tools swapped on one resource, exclusion, agents,
volatile flags, the normaliser, file positions, what a denial spends, the guard end to end).
tests/test_acceptance_local.py holds the rest.

Each test drives ``Breaker`` the way the shim does (``preflight`` then ``decide`` for a call,
``record_result`` for its result, ``human_message`` for a user turn) and checks the verdicts the
README promises.
"""

from __future__ import annotations

from typing import Any

import pytest

from breaker import Allow, ConfigError, Deny, ToolCall, default_config, load_config
from tests.seed_calls import allowed, bash, fingerprint_keys, guard, keys, kinds, make, ping_pong, tool

# --- T1: host-spelling ping-pong -------------------------------------------------------------


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
