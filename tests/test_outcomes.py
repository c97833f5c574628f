"""outcomes.judge: structured facts first, a status code definitive both ways, then the result's
shape for every tool, the text fallback for shell tools only, and neither isError alone nor a
cancellation ever a failure."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from breaker.core.history import sooner
from breaker.core.reading import outcomes
from breaker.core.reading.outcomes import FAILURE_MARKS, Failure, Settled, judge, shell_end

BASH = {"kind": "foreground", "exitCode": 0, "signal": None, "timedOut": False, "aborted": False}


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        ({**BASH, "exitCode": 2}, Failure("exit", "2")),
        ({**BASH, "exitCode": None, "signal": "SIGKILL"}, Failure("signal", "SIGKILL")),
        ({**BASH, "exitCode": None, "signal": "SIGTERM", "timedOut": True}, Failure("timeout")),
        (BASH, Settled.SUCCEEDED),
        ({**BASH, "exitCode": 1, "aborted": True}, Settled.UNDECIDED),
        ({"kind": "background", "jobId": "j1"}, Settled.UNDECIDED),
        ({"isError": True}, Settled.UNDECIDED),
        (None, Settled.UNDECIDED),
        ({**BASH, "exitCode": "2"}, Settled.SUCCEEDED),  # a field of the wrong type is absent
        ({**BASH, "exitCode": True}, Settled.SUCCEEDED),
    ],
)
def test_bash_is_judged_from_its_structured_value(facts: Any, expected: Failure | Settled) -> None:
    assert judge("bash", facts, "(no output)") == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("curl: (7) Failed to connect to 127.0.0.1 port 9", Failure("curl", "7")),
        (
            'Traceback (most recent call last):\n  File "x.py", line 1\nurllib.error.URLError: <urlopen>',
            Failure("exception", "urllib.error.URLError"),
        ),
        ("Traceback (most recent call last):\n  ...\nKeyError: 'a'\n", Failure("exception", "KeyError")),
        ("fetch failed: HTTP Error 404: Not Found", Failure("http", "404")),
        ("HTTP Error 200 is not a thing", Settled.SUCCEEDED),
        ("all good", Settled.SUCCEEDED),
        ("the word Traceback (most recent call last) mid-line", Settled.SUCCEEDED),
    ],
)
def test_a_shell_that_exited_zero_falls_back_to_its_text(text: str, expected: Failure | Settled) -> None:
    assert judge("bash", BASH, text) == expected


def test_the_text_fallback_is_for_shell_tools_only() -> None:
    assert judge("read", {"isError": False}, "curl: (7) Failed\nHTTP Error 500") is Settled.SUCCEEDED


def test_an_errored_call_without_an_exit_is_judged_by_its_shape_like_any_tool() -> None:
    assert judge("bash", {"isError": True}, "Error: curl: (7) in a denial text") == Failure(
        "tool", "curl: (7) in a denial text"
    )
    assert judge("bash", {"isError": True}, "denied by the sandbox") is Settled.UNDECIDED


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (404, Failure("http", "404")),
        (503, Failure("http", "503")),
        (200, Settled.SUCCEEDED),
        (301, Settled.SUCCEEDED),
    ],
)
def test_an_http_status_is_definitive_both_ways(status: int, expected: Failure | Settled) -> None:
    page = "HTTP Error 500 in the page"
    assert judge("web_fetch", {"isError": False, "statusCode": status}, page) == expected
    assert judge("bash", {**BASH, "status": status}, "curl: (22) in the text") == expected


def test_a_thrown_web_fetch_failed_by_its_shape_and_a_flag_alone_is_undecided() -> None:
    assert judge("web_fetch", {"isError": True}, "Error: fetch failed") == Failure("tool", "fetch failed")
    assert judge("web_fetch", {"isError": True}, "fetch failed") is Settled.UNDECIDED


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '{"error": "cd: \'x\': No such file or directory"}',
            Failure("tool", "cd: 'x': No such file or directory"),
        ),
        (
            "Error during execution: invalid syntax (<string>, line 1)",
            Failure("tool", "Error during execution: invalid syntax (<string>, line 1)"),
        ),
        ('{"error": {"code": 404}}', Failure("tool", '{"code": 404}')),
        ("boom\n[exit code: 3]", Failure("exit", "3")),
        ("slept\n[killed by signal: SIGTERM]", Failure("signal", "SIGTERM")),
        ('{"error": null, "result": "moved"}', Settled.SUCCEEDED),
        ('{"error": ""}', Settled.SUCCEEDED),
        ('{"current_working_directory": "workspace"}', Settled.SUCCEEDED),
        ("None", Settled.SUCCEEDED),
        ("a page that mentions an Error and an error key", Settled.SUCCEEDED),
        ('{"error": "cut' + " x" * 9000, Failure("tool", "cut" + " x" * 30 + " ")),
    ],
)
def test_any_tool_fails_by_the_shape_of_its_result(text: str, expected: Failure | Settled) -> None:
    """One rule for every tool: a function-calling agent's failures count as dsh's do."""
    assert judge("startEngine", {"isError": False}, text) == expected
    assert judge("startEngine", None, text) is Settled.UNDECIDED  # no facts at all: an old shim


def test_a_tool_that_said_it_exited_zero_is_not_read_by_its_shape() -> None:
    assert judge("bash", BASH, '{"error": "in the file it printed"}') is Settled.SUCCEEDED


def test_details_from_a_tool_are_cut() -> None:
    failure = judge("bash", {**BASH, "exitCode": None, "signal": "S" * 500}, "")
    assert isinstance(failure, Failure) and len(failure.detail) == 64


@pytest.mark.parametrize(
    ("failure", "words"),
    [
        (Failure("exit", "2"), "the command exited with code 2"),
        (Failure("signal", "SIGKILL"), "killed by signal SIGKILL"),
        (Failure("timeout"), "timed out"),
        (Failure("http", "404"), "HTTP 404"),
        (Failure("curl", "7"), "curl failed with error 7"),
        (Failure("exception", "KeyError"), "raised KeyError"),
    ],
)
def test_each_failure_describes_itself(failure: Failure, words: str) -> None:
    assert words in failure.describe()


def test_a_long_output_is_judged_in_linear_time() -> None:
    text = "Traceback (most recent call last):\n" + ("a" * 150 + "\n") * 20000
    assert judge("bash", BASH, text) == Failure("exception", "")


@pytest.mark.parametrize(
    ("text", "ended"),
    [
        ("ok", (0, None)),
        ("boom\n[exit code: 2]", (2, None)),
        ("boom\n[exit code: 2]\n", (2, None)),  # whitespace after the marker
        ("slept\n[killed by signal: SIGTERM]", (None, "SIGTERM")),
        ("[exit code: 2]", (0, None)),  # the marker is a line of its own, after the output
        ("boom\n[exit code: 2]\nmore", (0, None)),  # and the last one
        ("x" * 500 + "\n[exit code: 1]", (1, None)),
    ],
)
def test_the_shell_end_is_read_from_dshs_last_line(text: str, ended: tuple[int | None, str | None]) -> None:
    assert shell_end(text) == ended


# Each failure pattern of a shell's text is searched for only in a text holding a literal part of
# every match it can make (a substring test is a fraction of the search): a text the pattern
# matches must always hold that part, or the test would skip a failure the pattern finds.
_SHELL_PIECES = (
    "curl: (",
    "curl: (7)",
    "xcurl: (6) x",
    "Traceback (most recent call last):",
    "\nValueError: bad",
    "HTTP Error ",
    "HTTP Error 404",
    "bash: line 1: ",
    "sh: ",
    "/bin/sh: 1: ",
    "-c: line 3: syntax error near unexpected token",
    "unexpected EOF while looking for matching `''",
    "sh: 2: Syntax error: ",
    "zsh: command not found: x",
    "\n",
    " ",
    "x",
    "✓",
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_SHELL_PIECES) | st.text(max_size=6), max_size=12).map("".join))
def test_a_shell_failure_pattern_matches_only_texts_holding_its_literal_part(text: str) -> None:
    for pattern, part in zip(
        (outcomes._CURL, outcomes._TRACEBACK, outcomes._HTTP_ERROR), FAILURE_MARKS, strict=False
    ):
        if pattern.search(text) is not None:
            assert part in text
    if sooner._SHELL_COMPLAINT.search(text) is not None:
        assert sooner._SHELL_COMPLAINT_PART in text
    if sooner._PARSE_ERROR.search(text) is not None:
        assert any(part in text for part in sooner._PARSE_ERROR_PARTS)


def test_a_shell_text_failure_is_found_with_the_literal_parts_tested_first() -> None:
    traceback = 'Traceback (most recent call last):\n  File "x.py"\nKeyError: 1'
    assert judge("bash", BASH, traceback) == Failure("exception", "KeyError")
    assert judge("bash", BASH, "  ✓ case 1\ncurl: (7) Failed to connect") == Failure("curl", "7")
    assert judge("bash", BASH, "✓ urllib.error.HTTP Error 503: down") == Failure("http", "503")
    assert judge("bash", BASH, "✓ HTTP Error 302 then fine") == Settled.SUCCEEDED
    assert sooner.stops_sooner(None, "bash", "✓\nbash: -c: line 1: syntax error near `('") == sooner.SOONEST
    assert sooner.stops_sooner(None, "bash", "✓\n/bin/sh: 1: nosuch: not found") == 1
    assert sooner.stops_sooner(None, "bash", "✓ all 40 cases pass") == 0
