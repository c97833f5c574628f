"""What a reply tells of a verdict (``Breaker.denial``): the denial's text, and under ``logDenials``
what it counted, in the words of the stderr line the shim prints (``messages.denial_counts``):
the caps reached, the failures in a row, else no progress; never an argument."""

from __future__ import annotations

from breaker import Breaker, ToolCall, load_config


def _calls(
    breaker: Breaker, tool: str, arguments: dict[str, object], result: str, times: int, exit_code: int = 0
) -> object:
    """The verdict of the last of ``times`` identical calls, each answered with ``result``."""
    verdict: object = None
    for n in range(times):
        verdict = breaker.decide(1, ToolCall(tool, arguments, f"c{n}"))
        breaker.record_result(1, f"c{n}", result, {"exitCode": exit_code} if exit_code else None)
    return verdict


def test_a_cap_reached_is_named_by_kind_and_count_never_by_its_arguments() -> None:
    breaker = Breaker(load_config({"logDenials": True, "sameResultLimit": None}))
    verdict = _calls(breaker, "read", {"file_path": "/w/secret-name.txt"}, "a new answer", 5)
    fields = breaker.denial(verdict)  # type: ignore[arg-type]
    assert str(fields["deny"]).startswith("REPEAT_TOOL_BLOCKED")
    assert fields["counted"] == "reached exact 5/5"


def test_failures_in_a_row_are_named_apart_from_the_caps() -> None:
    breaker = Breaker(load_config({"logDenials": True}))
    verdict = _calls(breaker, "bash", {"command": "ls /missing"}, "ls: no such\n[exit code: 2]", 4, 2)
    assert breaker.denial(verdict)["counted"] == "failed in a row exact 3/3, cmd 3/3"  # type: ignore[arg-type]


def test_a_stop_for_no_progress_alone_says_so() -> None:
    breaker = Breaker(load_config({"logDenials": True, "limits": {"exact": None, "cmd": None}}))
    verdict = _calls(breaker, "bash", {"command": "cat notes.txt"}, "the same notes", 8)
    fields = breaker.denial(verdict)  # type: ignore[arg-type]
    assert fields["deny"] is not None
    assert fields["counted"] == "no progress: the same result again"


def test_without_log_denials_a_reply_carries_the_text_alone() -> None:
    breaker = Breaker(load_config(None))
    verdict = _calls(breaker, "read", {"file_path": "/w/a.txt"}, "text", 5)
    assert set(breaker.denial(verdict)) == {"deny"}  # type: ignore[arg-type]
    assert breaker.denial(None) == {"deny": None}
