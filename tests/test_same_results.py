"""sameResultLimit: the result of a call is evidence (breaker/core/history/progress.py).

The same call with the same result is no progress; the same call with a changing result is
polling. Three rules read it, before a call runs: the same result (N times; N - 1 after a
failure, a shell complaint, an empty result or a settled answer; N - 2 after a file tool's
error), a cycle (the
last 2 to 5 calls repeated, result for result) and the same answer reworded (N identical answers
in a row on one target; N + 1 for a command line). Off in the defaults; ``identity: state-aware``
brings it at 4.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from breaker.core.config import ConfigError, default_config, load_config
from breaker.core.decision import Breaker
from breaker.core.history.cycles import CYCLE_ROUND
from breaker.core.judging.verdicts import Allow, Deny, Reached
from breaker.core.reading.fingerprints import ToolCall
from breaker.rtb.read.sessions import parse_log
from breaker.rtb.replay.replayer import replay_events
from tests.corpus.trajectories import Trajectory

#: Only the no-progress rule decides: the caps are off.
UNCAPPED = {"exact": None, "cmd": None, "net": None, "sink": None}
ONLY_SAME_RESULTS = load_config({"sameResultLimit": 4, "limits": UNCAPPED})


class Agent:
    """One agent: each call is decided, then (when it ran) its result recorded."""

    def __init__(self, breaker: Breaker, agent: str = "a") -> None:
        self.breaker = breaker
        self.agent = agent
        self.calls = 0

    def run(
        self,
        tool: str,
        arguments: Mapping[str, object],
        result: str,
        facts: Mapping[str, object] | None = None,
    ) -> Allow | Deny:
        self.calls += 1
        call = ToolCall(tool, dict(arguments), f"c{self.calls}")
        verdict = self.breaker.decide(self.agent, call)
        text = "Error: " + verdict.message if isinstance(verdict, Deny) else result
        self.breaker.record_result(self.agent, call.call_id, text, facts)
        return verdict

    def submit(self, flag: str, result: str = "Wrong flag!") -> Allow | Deny:
        return self.run("submit", {"flag": flag}, result)

    def bash(self, command: str, result: str = "") -> Allow | Deny:
        return self.run("bash", {"command": command, "description": f"attempt {self.calls}"}, result)


def test_it_is_off_in_the_defaults_and_validated() -> None:
    assert load_config({"preset": "seed"}).sameResultLimit is None
    assert default_config().sameResultLimit == 4
    assert load_config({"sameResultLimit": 3}).sameResultLimit == 3
    assert load_config({"sameResultLimit": None}).sameResultLimit is None
    for bad in (1, 0, -2, "4", True, float("inf")):
        with pytest.raises(ConfigError, match="sameResultLimit"):
            load_config({"sameResultLimit": bad})


def kinds(verdicts: list[Allow | Deny]) -> list[type]:
    return [type(verdict) for verdict in verdicts]


# --- the same result ----------------------------------------------------------------------------


def test_the_same_call_after_four_identical_results_is_denied_before_it_runs() -> None:
    agent = Agent(Breaker(ONLY_SAME_RESULTS))
    verdicts = [agent.submit("flag{x}") for _ in range(6)]
    assert kinds(verdicts) == [Allow, Allow, Allow, Allow, Deny, Deny]


def test_a_failure_an_empty_result_or_a_shell_complaint_stops_the_fourth() -> None:
    for result in ("boom\n[exit code: 1]", "", "/bin/bash: line 1: pwd: -p: invalid option"):
        agent = Agent(Breaker(ONLY_SAME_RESULTS))
        facts = {"exitCode": 1 if "exit code" in result else 0}
        verdicts = [agent.run("bash", {"command": "pwd -p"}, result, facts) for _ in range(5)]
        assert kinds(verdicts) == [Allow, Allow, Allow, Deny, Deny], result


def test_a_settled_answer_stops_the_third_a_status_that_could_change_the_fifth() -> None:
    """Literal text through text filters prints the same every time (a weak model's trim
    pipeline sent ten times): two alike answers say all a third run could; a status query's
    answer could change between two polls."""
    trim = "echo \"hello world!\" | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//'"
    calendar = "cal 12 2120 | grep -v \"^$\" | awk '{print $1}' | uniq -c | sort -r | head -n 1"
    cases = ((trim, 3), ('echo "Session closed."', 3), (calendar, 3), ("fly status -a acme-web", 5))
    for command, expected in cases:
        agent = Agent(Breaker(ONLY_SAME_RESULTS))
        verdicts = [agent.run("bash", {"command": command}, "hello") for _ in range(6)]
        assert kinds(verdicts).index(Deny) + 1 == expected, command
        assert verdicts[expected - 1].stall.rule == "same"  # type: ignore[union-attr]


def test_a_file_tool_rejected_twice_with_the_same_error_is_not_sent_a_third_time() -> None:
    """GPT-4 resending the edit the linter rejected, word for word: the same rejection each time."""
    agent = Agent(Breaker(ONLY_SAME_RESULTS))
    edit = {"file_path": "a.py", "old_string": "<lines 3-3>", "new_string": "x = (1"}
    rejected = "Error: Your proposed edit has introduced new syntax error(s)."
    verdicts = [agent.run("edit", dict(edit), rejected, {"isError": True}) for _ in range(3)]
    assert kinds(verdicts) == [Allow, Allow, Deny]
    assert verdicts[2].stall is not None and verdicts[2].stall.rule == "same"  # type: ignore[union-attr]


def test_a_call_in_between_does_not_start_the_count_over() -> None:
    agent = Agent(Breaker(ONLY_SAME_RESULTS))
    for _ in range(3):
        agent.submit("flag{x}")
    agent.run("read", {"file_path": "notes.txt"}, "the notes")
    assert isinstance(agent.submit("flag{x}"), Allow)
    assert isinstance(agent.submit("flag{x}"), Deny)


def test_polling_is_left_alone_the_same_call_with_a_changing_result() -> None:
    agent = Agent(Breaker(ONLY_SAME_RESULTS))
    assert all(isinstance(agent.bash("fly status", f"Machines: {n} started"), Allow) for n in range(12))


def test_a_different_result_starts_a_new_count() -> None:
    agent = Agent(Breaker(ONLY_SAME_RESULTS))
    results = ["Machines: 1 pending", "Machines: 1 pending", "Machines: 1 pending", "Machines: 2 started"]
    for result in results:
        assert isinstance(agent.bash("fly status", result), Allow)
    for _ in range(3):
        assert isinstance(agent.bash("fly status", "Machines: 2 started"), Allow)
    assert isinstance(agent.bash("fly status"), Deny)


def test_decoy_arguments_do_not_make_a_call_new() -> None:
    agent = Agent(Breaker(ONLY_SAME_RESULTS))
    for _ in range(3):
        assert isinstance(agent.bash("true"), Allow)  # the description changes every time
    assert isinstance(agent.bash("true"), Deny)  # the fourth empty result


def test_a_repeat_counts_only_within_the_window_of_the_one_before() -> None:
    agent = Agent(Breaker(load_config({"sameResultLimit": 4, "window": 4, "limits": UNCAPPED})))
    for round_ in range(6):
        assert isinstance(agent.submit("flag{x}"), Allow)
        for other in range(4):
            agent.run("read", {"file_path": f"f{round_}-{other}"}, f"text {round_} {other}")


def test_a_human_message_starts_afresh() -> None:
    breaker = Breaker(ONLY_SAME_RESULTS)
    agent = Agent(breaker)
    for _ in range(4):
        agent.submit("flag{x}")
    breaker.human_message("a")
    assert all(isinstance(agent.submit("flag{x}"), Allow) for _ in range(4))


def test_agents_keep_their_own_evidence() -> None:
    breaker = Breaker(ONLY_SAME_RESULTS)
    first, second = Agent(breaker, "a"), Agent(breaker, "b")
    for _ in range(3):
        first.submit("flag{x}")
        second.submit("flag{x}")
    assert isinstance(first.submit("flag{x}"), Allow)
    assert isinstance(second.submit("flag{x}"), Allow)
    assert isinstance(first.submit("flag{x}"), Deny)


def test_identical_calls_in_parallel_each_bring_their_result() -> None:
    breaker = Breaker(ONLY_SAME_RESULTS)
    for n in range(1, 5):
        assert isinstance(breaker.decide("a", ToolCall("submit", {"flag": "flag{x}"}, f"p{n}")), Allow)
    for n in range(1, 5):
        breaker.record_result("a", f"p{n}", "Wrong flag!")
    assert isinstance(breaker.decide("a", ToolCall("submit", {"flag": "flag{x}"}, "p5")), Deny)


def test_a_denied_call_leaves_the_evidence_as_it_was() -> None:
    agent = Agent(Breaker(ONLY_SAME_RESULTS))
    for _ in range(4):
        agent.submit("flag{x}")
    assert isinstance(agent.submit("flag{x}"), Deny)
    assert isinstance(agent.submit("flag{x}"), Deny)


def test_the_denial_says_what_came_back_and_how_often() -> None:
    agent = Agent(Breaker(ONLY_SAME_RESULTS))
    for _ in range(4):
        agent.submit("flag{x}")
    verdict = agent.submit("flag{x}")
    assert isinstance(verdict, Deny)
    assert verdict.message.startswith("REPEAT_TOOL_BLOCKED:")
    assert "the same call already returned the same result 4 times" in verdict.message
    assert "| Wrong flag!" in verdict.message
    assert verdict.stall is not None and verdict.stall.count == 4


# --- a cycle ------------------------------------------------------------------------------------


def test_a_two_call_cycle_with_the_same_results_is_stopped_when_it_goes_round_a_third_time() -> None:
    agent = Agent(Breaker(ONLY_SAME_RESULTS))
    pair = [("bash", {"command": "ls -l $(which c++)"}, "total 52"), ("bash", {"command": "which c++"}, "x")]
    verdicts = [agent.run(*pair[n % 2]) for n in range(5)]
    assert kinds(verdicts) == [Allow, Allow, Allow, Allow, Deny]
    assert verdicts[4].stall is not None and verdicts[4].stall.rule == "cycle"  # type: ignore[union-attr]


def test_a_ring_of_five_reads_is_stopped_on_its_third_round() -> None:
    agent = Agent(Breaker(ONLY_SAME_RESULTS))
    ring = [("read", {"file_path": f"part{n}.md"}, f"part {n}") for n in range(5)]
    verdicts = [agent.run(*ring[n % 5]) for n in range(11)]
    assert kinds(verdicts) == [Allow] * 10 + [Deny]
    # What a report shows of it: the round the call would begin (the 11th call begins the 3rd).
    assert verdicts[10].reached == (Reached("sameResultLimit", "cycle", CYCLE_ROUND, CYCLE_ROUND),)  # type: ignore[union-attr]
    assert 10 // len(ring) + 1 == CYCLE_ROUND


def test_a_cycle_whose_results_change_is_polling() -> None:
    agent = Agent(Breaker(ONLY_SAME_RESULTS))
    for n in range(12):
        pods, log = ("bash", {"command": "kubectl get pods"}), ("read", {"file_path": "log"})
        tool, arguments = pods if n % 2 else log
        assert isinstance(agent.run(tool, arguments, f"state {n}"), Allow)


def test_one_call_repeated_is_no_cycle_and_stops_at_the_sameresultlimit_configured() -> None:
    # A long job polled every 5 minutes: a profile that allows 8 alike answers gets 8, not a
    # "cycle" of one call going round a third time at the 5th.
    config = load_config({"sameResultLimit": 8, "limits": {"exact": 12, "cmd": 12, "net": 12}})
    agent = Agent(Breaker(config))
    poll = "sleep 300 && curl -s https://api.example.com/jobs/7"
    verdicts = [agent.bash(poll, '{"status": "running"}') for _ in range(9)]
    assert kinds(verdicts) == [Allow] * 8 + [Deny]
    assert verdicts[-1].stall is not None and verdicts[-1].stall.rule == "same"  # type: ignore[union-attr]


# --- the same answer, reworded ------------------------------------------------------------------


def test_a_variant_with_the_same_answer_counts_towards_the_run() -> None:
    """The recorded loop: one variant, then the same wrong flag three times, then once more."""
    agent = Agent(Breaker(ONLY_SAME_RESULTS))
    verdicts = [agent.submit("flat{x}"), *(agent.submit("flag{x}") for _ in range(4))]
    assert kinds(verdicts) == [Allow] * 4 + [Deny]
    assert verdicts[-1].stall is not None and verdicts[-1].stall.rule == "reworded"  # type: ignore[union-attr]


def test_a_cache_buster_query_does_not_make_a_poll_new() -> None:
    agent = Agent(Breaker(ONLY_SAME_RESULTS))
    verdicts = [
        agent.run("web_fetch", {"url": f"https://api.example.com/status?t={n}"}, "queued")
        for n in range(1, 7)
    ]
    assert kinds(verdicts) == [Allow] * 4 + [Deny, Deny]


def test_a_cache_buster_poll_whose_answer_changes_runs_on() -> None:
    agent = Agent(Breaker(ONLY_SAME_RESULTS))
    for n in range(1, 12):
        url = f"https://api.example.com/status?_={1700000000 + n}"
        assert isinstance(agent.run("web_fetch", {"url": url}, f"{n} jobs left"), Allow)


def test_a_command_with_a_flag_appended_each_time_is_stopped_one_later() -> None:
    agent = Agent(Breaker(ONLY_SAME_RESULTS))
    error = "error: unknown gnu long option\n\nUsage:\n ps [options]"
    flags = ["--args", "--no-headers", "--sort cmd", "-ww", "-y", "--columns", "--cols 9"]
    command = "ps -ef --forest"
    verdicts = []
    for flag in flags:
        command += " " + flag
        verdicts.append(agent.bash(command, error))
    assert kinds(verdicts) == [Allow] * 5 + [Deny, Deny]


def test_different_commands_that_print_nothing_are_not_rewordings() -> None:
    agent = Agent(Breaker(ONLY_SAME_RESULTS))
    assert all(isinstance(agent.bash(f"grep -rn name{n} src"), Allow) for n in range(10))


@pytest.mark.parametrize(
    "ending", ["(no output)\n[exit code: 1]", "\n[exit code: 1]\n", "[killed by signal: SIGTERM]"]
)
def test_different_searches_that_find_nothing_are_not_rewordings(ending: str) -> None:
    """A search that matches nothing prints nothing: dsh's line saying how it ended is no answer,
    so ten searches for ten different names all run (the same search resent is still stopped,
    one sooner: nothing can be read from nothing)."""
    agent = Agent(Breaker(ONLY_SAME_RESULTS))
    assert all(isinstance(agent.bash(f"grep -rn 'def name{n}' src", ending), Allow) for n in range(10))
    fresh = Agent(Breaker(ONLY_SAME_RESULTS))
    resent = [fresh.bash("grep -rn 'def other' src", ending) for _ in range(4)]
    assert kinds(resent) == [Allow] * 3 + [Deny]


# --- what changes the workspace starts over (identity: state-aware) -----------------------------


def test_an_edit_that_lands_starts_the_evidence_over() -> None:
    agent = Agent(Breaker(load_config({"identity": "state-aware"})))
    for round_ in range(4):
        for _ in range(3):
            assert isinstance(agent.bash("pytest -q", "1 failed\n[exit code: 1]"), Allow)
        edit = {"file_path": "app.py", "old_string": f"v{round_}", "new_string": f"v{round_ + 1}"}
        assert isinstance(agent.run("edit", edit, "ok"), Allow)


def test_a_harness_that_reuses_one_call_id_gets_the_same_verdicts() -> None:
    """The denial's own result (under the reused id) is neither evidence nor quoted."""
    breaker = Breaker(ONLY_SAME_RESULTS)
    verdicts = []
    for _ in range(7):
        verdict = breaker.decide("a", ToolCall("submit", {"flag": "flag{x}"}, "same-id"))
        text = "Error: " + verdict.message if isinstance(verdict, Deny) else "Wrong flag!"
        breaker.record_result("a", "same-id", text)
        verdicts.append(verdict)
    assert [type(verdict) for verdict in verdicts] == [Allow] * 4 + [Deny] * 3
    last = verdicts[-1]
    assert isinstance(last, Deny) and "| Wrong flag!" in last.message


def test_a_replayed_session_is_stopped_where_the_live_gate_stops_it() -> None:
    """rtb replay feeds recorded results through the same record_result: the same call is stopped."""
    trajectory = Trajectory()
    trajectory.human("find the flag")
    for flag in ["flat{x}"] + ["flag{x}"] * 5:
        trajectory.call("submit", {"flag": flag}, "Wrong flag!")
    log, _ = parse_log(trajectory.to_jsonl().splitlines(), path=Path("eps.jsonl"))
    replayed = replay_events(log.events, load_config({"identity": "state-aware"}))
    assert [call.verdict for call in replayed] == ["allowed"] * 4 + ["denied"] * 2
    assert "returned the identical result" in replayed[4].message
