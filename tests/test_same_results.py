"""sameResultLimit: the same answer again and again, and the same call once more, is no progress.

Once one tool returned one result ``sameResultLimit`` times in a row, a call that repeats the
agent's previous call is denied before it runs: nothing it could do differently this time. Off in
the defaults; ``identity: state-aware`` brings it at 4.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from breaker.core.config import ConfigError, default_config, load_config
from breaker.core.decision import Breaker
from breaker.core.fingerprints import ToolCall
from breaker.core.verdicts import Allow, Deny
from breaker.rtb.replay import replay_events
from breaker.rtb.sessions import parse_log
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

    def run(self, tool: str, arguments: dict[str, object], result: str) -> Allow | Deny:
        self.calls += 1
        call = ToolCall(tool, arguments, f"c{self.calls}")
        verdict = self.breaker.decide(self.agent, call)
        text = "Error: " + verdict.message if isinstance(verdict, Deny) else result
        self.breaker.record_result(self.agent, call.call_id, text)
        return verdict

    def submit(self, flag: str, result: str = "Wrong flag!") -> Allow | Deny:
        return self.run("submit", {"flag": flag}, result)

    def bash(self, command: str, result: str = "") -> Allow | Deny:
        return self.run("bash", {"command": command, "description": f"attempt {self.calls}"}, result)


def test_it_is_off_in_the_defaults_and_validated() -> None:
    assert default_config().sameResultLimit is None
    assert load_config({"sameResultLimit": 3}).sameResultLimit == 3
    assert load_config({"sameResultLimit": None}).sameResultLimit is None
    for bad in (1, 0, -2, "4", True, float("inf")):
        with pytest.raises(ConfigError, match="sameResultLimit"):
            load_config({"sameResultLimit": bad})


def test_the_same_call_after_four_identical_results_is_denied_before_it_runs() -> None:
    agent = Agent(Breaker(ONLY_SAME_RESULTS))
    verdicts = [agent.submit("flag{x}") for _ in range(6)]
    assert [type(verdict) for verdict in verdicts] == [Allow, Allow, Allow, Allow, Deny, Deny]


def test_a_near_identical_call_with_the_same_answer_counts_towards_the_run() -> None:
    """The recorded loop: one variant, then the same wrong flag three times, then once more."""
    agent = Agent(Breaker(ONLY_SAME_RESULTS))
    verdicts = [agent.submit("flat{x}"), *(agent.submit("flag{x}") for _ in range(4))]
    assert isinstance(verdicts[-1], Deny)
    assert all(isinstance(verdict, Allow) for verdict in verdicts[:-1])


def test_a_new_call_after_the_run_is_allowed() -> None:
    agent = Agent(Breaker(ONLY_SAME_RESULTS))
    for _ in range(4):
        agent.submit("flag{x}")
    assert isinstance(agent.submit("'flag{x}'"), Allow)


def test_a_different_result_starts_a_new_run() -> None:
    agent = Agent(Breaker(ONLY_SAME_RESULTS))
    results = ["Machines: 1 pending", "Machines: 1 pending", "Machines: 1 pending", "Machines: 2 started"]
    for result in results:
        assert isinstance(agent.bash("fly status", result), Allow)
    for _ in range(3):
        assert isinstance(agent.bash("fly status", "Machines: 2 started"), Allow)
    assert isinstance(agent.bash("fly status"), Deny)


def test_another_tool_in_between_ends_the_run() -> None:
    agent = Agent(Breaker(ONLY_SAME_RESULTS))
    for _ in range(3):
        agent.submit("flag{x}")
    agent.run("read", {"file_path": "notes.txt"}, "Wrong flag!")
    assert all(isinstance(agent.submit("flag{x}"), Allow) for _ in range(4))


def test_decoy_arguments_do_not_make_a_call_new() -> None:
    agent = Agent(Breaker(ONLY_SAME_RESULTS))
    for _ in range(4):
        assert isinstance(agent.bash("true"), Allow)  # the description changes every time
    assert isinstance(agent.bash("true"), Deny)


def test_a_human_message_starts_afresh() -> None:
    breaker = Breaker(ONLY_SAME_RESULTS)
    agent = Agent(breaker)
    for _ in range(4):
        agent.submit("flag{x}")
    breaker.human_message("a")
    assert all(isinstance(agent.submit("flag{x}"), Allow) for _ in range(4))


def test_agents_keep_their_own_runs() -> None:
    breaker = Breaker(ONLY_SAME_RESULTS)
    first, second = Agent(breaker, "a"), Agent(breaker, "b")
    for _ in range(3):
        first.submit("flag{x}")
        second.submit("flag{x}")
    assert isinstance(first.submit("flag{x}"), Allow)
    assert isinstance(second.submit("flag{x}"), Allow)
    assert isinstance(first.submit("flag{x}"), Deny)


def test_a_result_that_arrives_after_a_later_call_does_not_extend_the_run() -> None:
    """Parallel calls: only the result of the latest call that ran can continue the run."""
    breaker = Breaker(ONLY_SAME_RESULTS)
    for n in range(1, 5):
        call = ToolCall("submit", {"flag": "flag{x}"}, f"p{n}")
        assert isinstance(breaker.decide("a", call), Allow)
    for n in range(1, 5):
        breaker.record_result("a", f"p{n}", "Wrong flag!")
    assert isinstance(breaker.decide("a", ToolCall("submit", {"flag": "flag{x}"}, "p5")), Allow)


def test_a_denied_call_leaves_the_run_as_it_was() -> None:
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
    assert "the same result 4 times in a row" in verdict.message
    assert "| Wrong flag!" in verdict.message
    assert verdict.stall is not None and verdict.stall.count == 4


def test_an_undecided_result_is_still_a_result() -> None:
    """The rule reads the text the model read, not a judgement of it: 'Wrong flag!' is no error."""
    agent = Agent(Breaker(ONLY_SAME_RESULTS))
    for _ in range(4):
        agent.run("bash", {"command": "sed -i 's/a/b/' f.txt"}, "")
    assert isinstance(agent.run("bash", {"command": "sed -i 's/a/b/' f.txt"}, ""), Deny)


# --- the rule as a property: a denial exactly when the oracle says so ---------------------------

ACTIONS = [
    ("submit", {"flag": "a"}),
    ("submit", {"flag": "b"}),
    ("bash", {"command": "true"}),
    ("read", {"file_path": "x"}),
]
RESULTS = ["", "Wrong flag!", "ok"]


def expected_denials(steps: list[tuple[int, int]], limit: int) -> list[bool]:
    """The rule written plainly: the previous call that ran, and its tool's run of one result."""
    denied: list[bool] = []
    previous: int | None = None
    tool, result, count = "", "", 0
    for action, outcome in steps:
        name = ACTIONS[action][0]
        if previous == action and name == tool and count >= limit:
            denied.append(True)
            continue
        denied.append(False)
        previous = action
        if name == tool and count and RESULTS[outcome] == result:
            count += 1
        else:
            tool, result, count = name, RESULTS[outcome], 1
    return denied


@settings(max_examples=300)
@given(st.lists(st.tuples(st.integers(0, len(ACTIONS) - 1), st.integers(0, len(RESULTS) - 1)), max_size=30))
def test_a_call_is_denied_exactly_when_its_tool_gave_one_result_limit_times_and_it_repeats_the_last_call(
    steps: list[tuple[int, int]],
) -> None:
    breaker = Breaker(ONLY_SAME_RESULTS)
    agent = Agent(breaker)
    denied = [
        isinstance(agent.run(ACTIONS[action][0], dict(ACTIONS[action][1]), RESULTS[outcome]), Deny)
        for action, outcome in steps
    ]
    assert denied == expected_denials(steps, 4)


def test_a_harness_that_reuses_one_call_id_gets_the_same_verdicts() -> None:
    """The denial's own result (under the reused id) is neither a result of the run nor quoted."""
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
    assert "the same result 4 times in a row" in replayed[4].message
