"""The replay: the live gate's Breaker run offline, call by call, over recorded events."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import zstandard

from breaker.core.config import default_config, load_config
from breaker.rtb.read.sessions import (
    ApprovalEvent,
    ResultEvent,
    find_session_files,
    group_sessions,
    parse_log,
    read_session,
)
from breaker.rtb.replay.replayer import CallReplay, replay_events, replay_session
from breaker.rtb.replay.sweep import LABELS_LINE, Setting, parse_labels, parse_loop_starts, sweep
from tests.corpus.trajectories import Trajectory

FIXTURES = Path(__file__).parent / "fixtures"


def _replay(trajectory: Trajectory, **config: object) -> list[CallReplay]:
    log, _ = parse_log(trajectory.to_jsonl().splitlines(), path=Path("t.jsonl"))
    return replay_events(log.events, load_config(config))


def test_loop_a_is_denied_at_the_fifth_identical_call_like_the_recorded_gate() -> None:
    log, _ = read_session(FIXTURES / "sessions" / "loop-a.jsonl")
    [session] = group_sessions([log])
    replay = replay_session(session, load_config({"preset": "seed"}))
    assert [(call.number, call.verdict, call.recorded) for call in replay.calls] == [
        (1, "allowed", "executed"),
        (2, "allowed", "executed"),
        (3, "allowed", "executed"),
        (4, "allowed", "executed"),
        (5, "denied", "blocked"),
        (6, "denied", "blocked"),
    ]
    first = replay.first_stop
    assert first is not None
    assert [(hit.fingerprint.key, hit.count, hit.cap) for hit in first.hits] == [
        ('exact:read:{"file_path":"/work/notes.md"}', 5, 5.0)
    ]
    assert first.message.startswith("REPEAT_TOOL_BLOCKED:")
    assert "1: # Notes" in first.message  # the previous result is quoted, as live
    assert replay.recorded_outcomes == {"executed": 4, "blocked": 2}
    assert replay.differences == 0


def test_loop_c_is_caught_on_the_folded_host_despite_volatile_flags() -> None:
    log, _ = read_session(FIXTURES / "sessions" / "loop-c.jsonl")
    [session] = group_sessions([log])
    replay = replay_session(session, load_config({"preset": "seed"}))
    first = replay.first_stop
    assert first is not None and first.number == 5
    assert {hit.fingerprint.key for hit in first.hits} >= {"net:open.canada.ca/", "sink:/tmp/od.html"}


def test_a_human_turn_clears_the_window_and_a_plugin_notice_does_not() -> None:
    log, _ = read_session(FIXTURES / "sessions" / "human-turn.jsonl")
    [session] = group_sessions([log])
    assert replay_session(session, load_config({"preset": "seed"})).stops == ()
    without_human = Trajectory()
    for _ in range(5):
        without_human.call("bash", {"command": "pytest -q"}, "1 failed")
    assert [call.verdict for call in _replay(without_human)][-1] == "denied"


def test_subagents_keep_their_own_windows_and_a_fork_seed_is_not_counted_twice() -> None:
    files, _ = find_session_files([FIXTURES / "sessions" / "subagents"])
    [session] = group_sessions([read_session(file)[0] for file in files])
    replay = replay_session(session, load_config({"limits": {"net": 4}}))
    assert replay.stops == ()  # 3 fetches each: 6 for one shared window, 5 with the seed counted
    assert [(call.agent, call.number) for call in replay.calls][-3:] == [
        ("session-child", 1),
        ("session-child", 2),
        ("session-child", 3),
    ]


def test_excluded_tools_are_not_counted_and_never_reach_the_gate() -> None:
    trajectory = Trajectory()
    for _ in range(6):
        trajectory.call("todo_write", {"todos": []}, "ok")
    assert {call.verdict for call in _replay(trajectory)} == {"not-counted"}


def test_a_call_dsh_skipped_before_dispatch_is_not_fed_to_the_gate() -> None:
    trajectory = Trajectory()
    for _ in range(4):
        trajectory.call("bash", {"command": "make"}, "ok")
    skipped = trajectory.call_only("bash", {"command": "make"})
    events = trajectory.events
    part = {
        "type": "tool-result",
        "toolCallId": skipped,
        "isError": True,
        "content": [{"type": "text", "text": "Error: tool call aborted before dispatch"}],
    }
    events.append(
        {
            "type": "tool/result",
            "data": {"message": {"content": [part]}, "error": {"code": "ABORTED_BEFORE_DISPATCH"}},
        }
    )
    trajectory.call("bash", {"command": "make"}, "ok")
    verdicts = [(call.recorded, call.verdict) for call in _replay(trajectory)]
    assert verdicts[4] == ("not-dispatched", "not-run")
    assert verdicts[5] == ("executed", "denied")  # the 5th call that really reached the gate


def _local_polls(trajectory: Trajectory, count: int) -> list[str]:
    """Different commands on one local URL: only the local target fingerprints repeat."""
    spellings = ["curl -s", "curl -sS", "curl -s -i", "curl -s -v", "curl -s -4", "curl -s -6"]
    return [
        trajectory.call("bash", {"command": f"{spellings[i]} http://localhost:3000/health"}, "ok")
        for i in range(count)
    ]


def test_a_local_repeat_is_asked_and_an_unanswered_ask_counts_as_a_stop() -> None:
    trajectory = Trajectory()
    _local_polls(trajectory, 5)
    calls = _replay(trajectory)
    assert calls[-1].verdict == "asked"
    assert calls[-1].stopped
    assert calls[-1].message


def test_a_local_repeat_whose_recorded_ask_was_approved_runs() -> None:
    trajectory = Trajectory()
    call_ids = _local_polls(trajectory, 5)
    log, _ = parse_log(trajectory.to_jsonl().splitlines(), path=Path("t.jsonl"))
    approved = (*log.events, ApprovalEvent("t", call_ids[-1], True, 99))
    assert replay_events(approved, load_config({"preset": "seed"}))[-1].verdict == "allowed"


def test_local_hosts_deny_denies_instead_of_asking() -> None:
    trajectory = Trajectory()
    _local_polls(trajectory, 5)
    assert _replay(trajectory, localHosts="deny")[-1].verdict == "denied"


def test_a_denied_call_is_quoted_to_later_denials_as_the_model_would_have_read_it() -> None:
    trajectory = Trajectory()
    for attempt in range(6):  # each answer differs only in its time: the answer does not move
        trajectory.call("bash", {"command": "make"}, f"nothing to do at 10:00:0{attempt}")
    sixth = _replay(trajectory)[5]
    assert sixth.verdict == "denied"
    assert "10:00:03" in sixth.message  # the last result that really ran, never the replayed denial


def test_sweep_marks_the_setting_that_catches_every_loop_with_no_false_positive() -> None:
    files, _ = find_session_files([FIXTURES / "sessions"])
    sessions = group_sessions([read_session(file)[0] for file in files])
    labels, problems = parse_labels((FIXTURES / "labels.tsv").read_text())
    assert problems == []
    grid = [Setting(12, 3), Setting(12, 5), Setting(12, 9)]
    scores = sweep(sessions, grid, {"preset": "seed"}, labels)
    by_cap = {score.setting.cap: score for score in scores}
    assert (by_cap[3].loops_caught, by_cap[3].false_positives) == (3, 2)
    assert (by_cap[5].loops_caught, by_cap[5].false_positives, by_cap[5].mean_catch) == (3, 0, 5.0)
    assert (by_cap[9].loops_caught, by_cap[9].false_positives) == (0, 0)
    assert [score.setting.cap for score in scores if score.best] == [5]


def test_labels_name_the_lines_they_cannot_read() -> None:
    labels, problems = parse_labels("# comment\n\nloop-a\tloop\treason\nloop-b\tmaybe\nbare\n")
    assert labels == {"loop-a": "loop"}
    assert problems == [
        (4, "label must be loop or ok, got 'maybe'"),
        (5, LABELS_LINE + ": this line has no TAB (spaces do not separate the columns)"),
    ]


def test_a_loop_start_counts_catches_from_the_loop_and_stops_before_it_as_false_positives() -> None:
    text = "late\tloop\tfive good calls, then the loop\t6\nbad\tloop\treason\tzero\n"
    labels, problems = parse_labels(text)
    assert labels == {"late": "loop"}
    assert problems == [(2, "the loop start must be a call number >= 1, got 'zero'")]
    assert parse_loop_starts(text) == {"late": 6}
    trajectory = Trajectory()
    for step in range(5):
        trajectory.call("read", {"file_path": f"/src/m{step}.py"}, "1\tx")
    for _ in range(6):
        trajectory.call("bash", {"command": "make"}, "make: *** [all] Error 2\n[exit code: 2]")
    session = group_sessions([parse_log(trajectory.to_jsonl().splitlines(), path=Path("late.jsonl"))[0]])
    grid = [Setting(12, 3), Setting(12, 9)]
    [at_cap_3, at_cap_9] = sweep(session, grid, {"preset": "seed"}, labels, loop_starts={"late": 6})
    assert (at_cap_3.loops_caught, at_cap_3.mean_catch, at_cap_3.false_positives) == (1, 3.0, 0)
    assert (at_cap_9.loops_caught, at_cap_9.false_positives) == (0, 0)
    [early] = sweep(session, [Setting(12, 3)], {"preset": "seed"}, labels, loop_starts={"late": 9})
    assert (early.loops_caught, early.mean_catch, early.false_positives) == (1, 1.0, 1)


EXAMPLES = sorted((Path(__file__).parent.parent / "examples" / "sessions").glob("*.jsonl.zstd"))


def _recorded_ask_reasons(path: Path) -> dict[str, str]:
    """The reason of every ``approval/asked`` in a real log, by call id (read apart from the reader)."""
    data, text = path.read_bytes(), b""
    while data:
        frame = zstandard.ZstdDecompressor().decompressobj()
        text += frame.decompress(data)
        data = frame.unused_data
    events = [json.loads(line) for line in text.splitlines()]
    return {e["data"]["callId"]: e["data"]["reason"] for e in events if e["type"] == "approval/asked"}


@pytest.mark.skipif(not EXAMPLES, reason="no recorded sessions under examples/sessions")
@pytest.mark.parametrize("path", EXAMPLES, ids=[path.name for path in EXAMPLES])
def test_replaying_a_real_dsh_session_gives_the_live_gates_verdicts_and_texts(path: Path) -> None:
    log, problems = read_session(path)
    assert problems == []
    [session] = group_sessions([log])
    recorded_texts = {event.call_id: event.text for event in session.events if isinstance(event, ResultEvent)}
    asks = _recorded_ask_reasons(path)
    replay = replay_session(session, default_config())
    assert replay.calls
    for call in replay.calls:
        if call.recorded == "blocked":
            assert call.verdict == "denied"
            assert recorded_texts[call.call_id] == "Error: " + call.message
        elif call.recorded == "approval-required":
            assert call.verdict == "asked"
            assert asks[call.call_id] == call.message
        else:
            assert (call.recorded, call.verdict) == ("executed", "allowed")


@pytest.mark.skipif(not EXAMPLES, reason="no recorded sessions under examples/sessions")
def test_the_streamed_replay_of_rtb_gives_what_the_whole_session_replay_gives(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`rtb replay` reads each log twice as a stream (first only the lines a verdict needs from
    later: approvals, calls never dispatched; then every event), never the whole session at once;
    every verdict, count and text is what replaying the whole session at once gives."""
    from breaker.rtb.cli import main

    assert main(["replay", "--format", "json", *map(str, EXAMPLES)]) == 0
    streamed = {s["session"]: s for s in json.loads(capsys.readouterr().out)["sessions"]}
    for path in EXAMPLES:
        log, _ = read_session(path)
        [session] = group_sessions([log])
        whole = replay_session(session, default_config(), counts=True)
        calls = streamed[session.session_id]["verdicts"]
        assert [(c["call"], c["verdict"], c["recorded"]) for c in calls] == [
            (call.number, call.verdict, call.recorded) for call in whole.calls
        ]
        assert [[h["count"] for h in c["counts"]] for c in calls] == [
            [count.count for count in call.measured] for call in whole.calls
        ]
        assert [c["message"] for c in calls] == [call.message for call in whole.calls]
    assert any(
        call["verdict"] == "asked" or call["recorded"] == "approval-required"
        for session in streamed.values()
        for call in session["verdicts"]
    )


def test_the_counts_of_calls_that_ran_are_the_windows_own_after_a_workspace_change() -> None:
    """``--calls`` and the timeline count what the window counts: under state-aware identity a read
    after an edit is keyed by the workspace, and its count climbs 1, 2, 3 to the stop (it read 0)."""
    trajectory = Trajectory("keyed")
    trajectory.human("read it again")
    trajectory.call("edit", {"file_path": "/w/a.txt", "old_string": "a", "new_string": "b"}, "Edited.")
    for _ in range(3):
        trajectory.call("read", {"file_path": "/w/a.txt"}, "1: b")
    log, _ = parse_log(trajectory.to_jsonl().splitlines(), path=Path("t.jsonl"))
    [session] = group_sessions([log])
    reads = replay_session(session, default_config(), counts=True).calls[1:]
    assert [call.verdict for call in reads] == ["allowed"] * 3
    counted = [next(c for c in call.measured if c.key.startswith("exact:read:")) for call in reads]
    assert [(count.count, count.limit) for count in counted] == [(1, 5), (2, 5), (3, 5)]
    assert all(" @workspace:" in count.key for count in counted)
