"""Agent runs kept as one call a line replay like dsh logs: each call with its result and turns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from breaker.core.config import load_config
from breaker.rtb.read.sessions import CallEvent, HumanTurn, ResultEvent, StepStart
from breaker.rtb.replay.replayer import replay_session
from tests.corpus.call_logs import CallLogError, read_call_log


def write_log(path: Path, *records: object) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def call(number: int, command: str, result: str, **extra: object) -> dict[str, object]:
    return {"call": number, "tool": "bash", "arguments": {"command": command}, "result": result, **extra}


def test_each_line_is_a_call_then_its_result_and_a_human_turn_comes_first(tmp_path: Path) -> None:
    log = write_log(
        tmp_path / "mini-demo.jsonl",
        call(1, "ls", "a\nb"),
        call(2, "pytest", "1 failed\n[exit code: 1]", human_before=True, is_error=False, raw="ignored"),
    )
    session = read_call_log(log)
    assert session.session_id == "mini-demo" and session.agents == ("mini-demo",)
    kinds = [type(event) for event in session.events]
    # a line without a step is a model turn of its own
    assert kinds == [StepStart, CallEvent, ResultEvent, HumanTurn, StepStart, CallEvent, ResultEvent]
    last = session.events[-1]
    assert isinstance(last, ResultEvent) and last.call_id == "call-2" and last.text.endswith("[exit code: 1]")


def test_calls_of_one_step_are_one_model_turn(tmp_path: Path) -> None:
    log = write_log(
        tmp_path / "rounds.jsonl",
        call(1, "ls a", "x", step=0),
        call(2, "ls b", "x", step=0),
        call(3, "ls c", "y", step=1),
    )
    kinds = [type(event).__name__ for event in read_call_log(log).events]
    assert kinds == ["StepStart", *["CallEvent", "ResultEvent"] * 2, "StepStart", "CallEvent", "ResultEvent"]


def test_a_converted_run_replays_to_the_same_stop_as_the_gate(tmp_path: Path) -> None:
    log = write_log(tmp_path / "loop.jsonl", *(call(n, "true", "") for n in range(1, 8)))
    first = replay_session(read_call_log(log), load_config({"preset": "seed"})).first_stop
    assert first is not None and first.number == 5


@pytest.mark.parametrize(
    ("line", "reason"),
    [("{not json", "not JSON"), ("[1, 2]", "expected an object"), ('{"tool": "bash"}', "'result' must be")],
)
def test_a_line_that_is_not_a_call_names_the_file_and_line(tmp_path: Path, line: str, reason: str) -> None:
    log = tmp_path / "bad.jsonl"
    log.write_text(json.dumps(call(1, "ls", "")) + "\n" + line + "\n")
    with pytest.raises(CallLogError, match=rf"bad\.jsonl:2: {reason}"):
        read_call_log(log)
