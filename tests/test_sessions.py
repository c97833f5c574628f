"""The session reader: dsh's compressed logs, hand-written .jsonl, seeds, subagents, bad lines."""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
import zstandard

from breaker.rtb.read.logstream import MissingZstandard
from breaker.rtb.read.sessions import (
    ApprovalEvent,
    CallEvent,
    HumanTurn,
    ResultEvent,
    find_session_files,
    group_sessions,
    parse_log,
    read_session,
    session_id_for,
)
from tests.corpus.trajectories import Trajectory

FIXTURES = Path(__file__).parent / "fixtures"


def _write_zstd(path: Path, events: list[dict[str, Any]], *, frames: int = 3) -> None:
    """Like dsh: the header line in a frame of its own, then one frame per batch of events."""
    header, *rest = [json.dumps(event).encode() + b"\n" for event in events]
    size = -(-len(rest) // frames) or 1
    batches = [[header]] + [rest[start : start + size] for start in range(0, len(rest), size)]
    compressor = zstandard.ZstdCompressor()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(compressor.compress(b"".join(batch)) for batch in batches))


def _header(session_id: str, **extra: object) -> dict[str, Any]:
    return {"type": "session", "version": 0, "id": session_id, "createdAt": 1, "delegationDepth": 0, **extra}


def test_session_id_is_the_folder_of_a_dsh_log_and_the_stem_of_a_plain_file() -> None:
    assert session_id_for(Path("/x/--work--/session-1f2e/session.jsonl.zstd")) == "session-1f2e"
    assert session_id_for(Path("/x/session-1f2e/session.jsonl")) == "session-1f2e"
    assert session_id_for(Path("/corpus/loop-a.jsonl")) == "loop-a"
    assert session_id_for(Path("/corpus/loop-a.jsonl.zstd")) == "loop-a"


def test_a_compressed_log_of_several_frames_reads_every_line(tmp_path: Path) -> None:
    trajectory = Trajectory()
    trajectory.human("go")
    for attempt in range(4):
        trajectory.call("bash", {"command": "make", "description": str(attempt)}, "ok")
    path = tmp_path / "--work--" / "session-abc" / "session.jsonl.zstd"
    _write_zstd(path, [_header("session-abc"), *trajectory.events])

    log, problems = read_session(path)

    assert problems == []
    assert log.session_id == "session-abc"
    assert log.agent == "session-abc"
    calls = [event for event in log.events if isinstance(event, CallEvent)]
    assert [call.call.call_id for call in calls] == ["call-1", "call-2", "call-3", "call-4"]
    assert calls[0].call.arguments == {"command": "make", "description": "0"}
    assert isinstance(log.events[0], HumanTurn)


def test_a_truncated_compressed_log_keeps_the_lines_before_the_break(tmp_path: Path) -> None:
    trajectory = Trajectory()
    for _ in range(30):
        trajectory.call("read", {"file_path": "/a"}, "x" * 50)
    path = tmp_path / "session-cut" / "session.jsonl.zstd"
    _write_zstd(path, [_header("session-cut"), *trajectory.events], frames=3)
    path.write_bytes(path.read_bytes()[:-40])

    log, problems = read_session(path)

    assert len(problems) == 1
    assert problems[0].path == path
    assert problems[0].reason == "the last compressed frame is incomplete (cut mid-write?)"
    assert problems[0].line == 1 + 2 * 20 + 1  # the header and two whole batches were read
    assert len(log.events) == 40


def test_only_user_sourced_messages_are_human_turns() -> None:
    lines = [
        json.dumps({"type": "user/message", "data": {"source": {"kind": "user"}}}),
        json.dumps(
            {
                "type": "user/message",
                "data": {"source": {"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt"}},
            }
        ),
        json.dumps(
            {"type": "user/message", "data": {"source": {"kind": "plugin", "form": "notice", "summary": "x"}}}
        ),
    ]
    log, problems = parse_log(lines, path=Path("t.jsonl"))
    assert problems == []
    assert log.events == (HumanTurn("t", 1),)


def test_a_result_is_tied_to_its_call_by_the_tool_result_block() -> None:
    part = {
        "type": "tool-result",
        "toolCallId": "c9",
        "isError": True,
        "content": [
            {"type": "text", "text": "Error: REPEAT_TOOL_BLOCKED: x"},
            {"type": "image", "data": "..."},
            {"type": "text", "text": "second block"},
        ],
    }
    line = json.dumps(
        {"type": "tool/result", "data": {"message": {"content": [part]}, "error": {"code": "E1"}}}
    )
    log, _ = parse_log([line], path=Path("t.jsonl"))
    assert log.events == (
        ResultEvent("t", "c9", "Error: REPEAT_TOOL_BLOCKED: x\nsecond block", True, 1, "E1"),
    )


def test_the_message_source_names_the_call_when_the_block_does_not() -> None:
    part = {"type": "tool-result", "content": [{"type": "text", "text": "ok"}]}
    line = json.dumps(
        {
            "type": "tool/result",
            "data": {"message": {"content": [part], "source": {"kind": "tool", "callId": "c2"}}},
        }
    )
    log, _ = parse_log([line], path=Path("t.jsonl"))
    assert log.events == (ResultEvent("t", "c2", "ok", False, 1),)


def test_an_approval_decision_is_paired_with_the_call_its_ask_named() -> None:
    lines = [
        json.dumps({"type": "approval/asked", "data": {"id": "q1", "toolName": "bash", "callId": "c1"}}),
        json.dumps({"type": "approval/asked", "data": {"id": "q2", "toolName": "bash", "callId": "c2"}}),
        json.dumps({"type": "approval/decided", "data": {"id": "q2", "outcome": "unavailable"}}),
        json.dumps({"type": "approval/decided", "data": {"id": "q1", "outcome": "allowed-once"}}),
    ]
    log, _ = parse_log(lines, path=Path("t.jsonl"))
    assert log.events == (ApprovalEvent("t", "c2", False, 3), ApprovalEvent("t", "c1", True, 4))


def test_unreadable_lines_are_reported_with_their_line_and_reading_goes_on() -> None:
    log, problems = read_session(FIXTURES / "broken.jsonl")
    assert [(problem.line, problem.reason) for problem in problems] == [
        (2, "not a JSON event (Expecting ',' delimiter)"),
        (3, "tool/call has no name"),
    ]
    assert str(problems[0]).startswith(f"{FIXTURES / 'broken.jsonl'}:2: ")
    assert [type(event) for event in log.events] == [HumanTurn, CallEvent, ResultEvent]


def test_arguments_that_are_not_json_are_a_problem_of_that_line() -> None:
    line = json.dumps({"type": "tool/call", "data": {"callId": "c1", "name": "bash", "arguments": "{oops"}})
    log, problems = parse_log(["", line], path=Path("t.jsonl"))
    assert log.events == ()
    assert [(problem.line, problem.reason) for problem in problems] == [
        (2, "tool/call c1: arguments are not JSON (Expecting property name enclosed in double quotes)")
    ]


def test_a_missing_file_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    files, problems = find_session_files([tmp_path / "nope"])
    assert files == []
    assert [str(problem) for problem in problems] == [f"{tmp_path / 'nope'}: no such file or folder"]


def test_a_pipe_or_a_device_is_named_as_such_not_as_missing(tmp_path: Path) -> None:
    """`rtb replay <(zstdcat log)` names a pipe: a log is read twice, so a pipe cannot be one."""
    pipe = tmp_path / "fifo"
    os.mkfifo(pipe)
    files, problems = find_session_files([pipe, Path("/dev/null")])
    assert files == []
    said = "not a file or folder (a pipe or a device): rtb reads a log twice, so save it to a file first"
    assert [str(problem) for problem in problems] == [f"{pipe}: {said}", f"/dev/null: {said}"]


def test_a_folder_is_searched_recursively_for_logs_only(tmp_path: Path) -> None:
    (tmp_path / "a" / "session-1").mkdir(parents=True)
    (tmp_path / "a" / "session-1" / "session.jsonl.zstd").write_bytes(b"")
    (tmp_path / "b.jsonl").write_text("")
    (tmp_path / "notes.txt").write_text("")
    files, problems = find_session_files([tmp_path])
    assert problems == []
    assert files == [tmp_path / "a" / "session-1" / "session.jsonl.zstd", tmp_path / "b.jsonl"]


def test_a_forked_subagent_skips_the_events_it_inherited_from_its_parent() -> None:
    child = FIXTURES / "sessions" / "subagents" / "session-child" / "session.jsonl"
    log, problems = read_session(child)
    assert problems == []
    assert log.agent == "session-child"
    assert log.parent == "session-root"
    call_ids = [event.call.call_id for event in log.events if isinstance(event, CallEvent)]
    assert call_ids == ["c1", "c2", "c3"]  # r1 and r2 are the seed: the parent's own calls
    assert not any(isinstance(event, HumanTurn) for event in log.events)


def test_subagent_logs_are_folded_into_their_root_session_as_their_own_agents() -> None:
    files, _ = find_session_files([FIXTURES / "sessions" / "subagents"])
    grouped = group_sessions([read_session(file)[0] for file in files])
    assert len(grouped) == 1
    session = grouped[0]
    assert session.session_id == "session-root"
    assert session.agents == ("session-root", "session-child")
    agents = [event.agent for event in session.events if isinstance(event, CallEvent)]
    assert agents == ["session-root"] * 4 + ["session-child"] * 3


def test_a_subagent_whose_parent_was_not_given_is_a_session_of_its_own() -> None:
    child = FIXTURES / "sessions" / "subagents" / "session-child" / "session.jsonl"
    grouped = group_sessions([read_session(child)[0]])
    assert [session.session_id for session in grouped] == ["session-child"]


def test_a_missing_zstandard_names_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "session-z" / "session.jsonl.zstd"
    _write_zstd(path, [_header("session-z")])
    real_import = importlib.import_module

    def without_zstandard(name: str, package: str | None = None) -> object:
        if name == "zstandard":
            raise ImportError(name)
        return real_import(name, package)

    monkeypatch.setattr(importlib, "import_module", without_zstandard)
    with pytest.raises(MissingZstandard, match=r"pip install zstandard"):
        read_session(path)


def test_a_trajectory_written_by_hand_reads_back_as_the_same_calls(tmp_path: Path) -> None:
    trajectory = Trajectory()
    trajectory.human("fetch")
    first = trajectory.call("web_fetch", {"url": "https://example.org/"}, "<html>")
    pending = trajectory.call_only("bash", {"command": "ls"})
    trajectory.result(pending, "boom", is_error=True)
    path = tmp_path / "hand.jsonl"
    path.write_text(trajectory.to_jsonl())

    log, problems = read_session(path)

    assert problems == []
    assert [type(event) for event in log.events] == [
        HumanTurn,
        CallEvent,
        ResultEvent,
        CallEvent,
        ResultEvent,
    ]
    results = [event for event in log.events if isinstance(event, ResultEvent)]
    assert (results[0].call_id, results[0].text, results[0].is_error) == (first, "<html>", False)
    assert (results[1].call_id, results[1].text, results[1].is_error) == (pending, "boom", True)


EXAMPLES = Path(__file__).parent.parent / "examples" / "sessions"


@pytest.mark.skipif(not (EXAMPLES / "local-loop.jsonl.zstd").exists(), reason="no recorded sessions")
def test_a_real_dsh_log_reads_into_its_agent_turns_calls_results_and_approvals() -> None:
    log, problems = read_session(EXAMPLES / "local-loop.jsonl.zstd")
    assert problems == []
    assert log.session_id == "local-loop"
    assert log.agent.startswith("session-")  # the header's id: the live agent's id
    kinds = [type(event).__name__ for event in log.events]
    assert kinds.count("HumanTurn") == 1  # the runtime-context snapshot is a plugin message
    assert kinds.count("CallEvent") == kinds.count("ResultEvent") == 7
    [approval] = [event for event in log.events if isinstance(event, ApprovalEvent)]
    assert not approval.approved
    calls = [event for event in log.events if isinstance(event, CallEvent)]
    arguments = calls[0].call.arguments
    assert isinstance(arguments, dict)
    assert arguments["description"] == "Check the local health endpoint"  # parsed from dsh's JSON string


def test_written_subagent_trajectories_fold_into_their_root(tmp_path: Path) -> None:
    root = Trajectory("session-main")
    root.human("split the work")
    root.call("subagent", {"prompt": "fetch"}, "done")
    child = Trajectory("session-helper", parent="session-main")
    child.call("web_fetch", {"url": "https://example.org/"}, "<html>")
    (tmp_path / "main.jsonl").write_text(root.to_jsonl())
    (tmp_path / "helper.jsonl").write_text(child.to_jsonl())

    files, _ = find_session_files([tmp_path])
    [session] = group_sessions([read_session(file)[0] for file in files])

    assert session.session_id == "main"
    assert session.agents == ("session-main", "session-helper")
    with pytest.raises(ValueError, match="session_id"):
        Trajectory(parent="session-main")
