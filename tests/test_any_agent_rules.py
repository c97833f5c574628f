"""No progress, read so that it holds for any agent (breaker/core/history/progress.py, asked.py).

Each rule reads only evidence that means what it claims: a call's target is what it names, never
the tool alone; the calls of one model turn were sent before any of their answers; the same
answer counts only for calls that ask the same thing; a failure counts against what failed; an
answer that changes is progress.
"""

from __future__ import annotations

from collections.abc import Mapping

from breaker.core.config import load_config
from breaker.core.decision import Breaker
from breaker.core.judging.verdicts import Allow, Deny
from breaker.core.reading.fingerprints import ToolCall

UNCAPPED = {"exact": None, "cmd": None, "net": None, "sink": None}
NOT_FOUND = "Could not find class Router in the codebase."
NO_MATCH = "Error: None of the edits can match the original program."
IMPRECISE = "Error: The locations are not precise."


class Agent:
    """One agent of a harness that tells its model turns (``new_step``)."""

    def __init__(self, config: Mapping[str, object] | None = None) -> None:
        raw = {"sameResultLimit": 4, "limits": UNCAPPED} if config is None else config
        self.breaker = Breaker(load_config(raw))
        self.calls = 0

    def turn(self) -> None:
        self.breaker.new_step("a")

    def run(
        self, tool: str, arguments: Mapping[str, object], result: str, error: bool = False
    ) -> Allow | Deny:
        self.calls += 1
        call = ToolCall(tool, dict(arguments), f"c{self.calls}")
        verdict = self.breaker.decide("a", call)
        if isinstance(verdict, Allow):
            self.breaker.record_result("a", call.call_id, result, {"isError": True} if error else None)
        return verdict

    def search(self, pattern: str, result: str = NOT_FOUND, **more: str) -> Allow | Deny:
        return self.run("grep", {"pattern": pattern, **more}, result)


def allowed(verdicts: list[Allow | Deny]) -> list[bool]:
    return [isinstance(verdict, Allow) for verdict in verdicts]


def test_different_searches_answering_alike_are_different_targets() -> None:
    agent = Agent()
    agent.turn()
    verdicts = [agent.search(f"def method_{n}", cls="Router") for n in range(6)]
    assert allowed(verdicts) == [True] * 6


def test_calls_of_one_turn_answering_alike_are_not_repeats() -> None:
    """Sent together before any answer came back: one turn of the same search counts once."""
    agent = Agent()
    agent.turn()
    verdicts = [agent.search("class Router") for _ in range(5)]
    agent.turn()
    verdicts.append(agent.search("class Router"))
    assert allowed(verdicts) == [True] * 6


def test_the_same_call_in_turns_of_its_own_is_still_stopped() -> None:
    agent = Agent()
    verdicts: list[Allow | Deny] = []
    for _ in range(6):
        agent.turn()
        verdicts.append(agent.search("class Router"))
    # a read of the agent's files asked again right after itself: 3 alike answers say all a 4th could
    assert allowed(verdicts) == [True, True, True, False, False, False]


def test_without_turns_told_each_call_is_its_own_turn() -> None:
    agent = Agent()
    verdicts = [agent.search("class Router") for _ in range(5)]
    assert allowed(verdicts) == [True, True, True, False, False]


def test_the_same_unmatched_original_with_a_new_body_is_not_tried_a_third_time() -> None:
    agent = Agent()
    original = "    # a comment block that is not in the file\n"
    verdicts: list[Allow | Deny] = []
    for body in ("fix one", "fix two", "fix three"):
        agent.turn()
        edit = {"file_path": "app/writer.py", "old_string": original, "new_string": body}
        verdicts.append(agent.run("edit", edit, NO_MATCH, error=True))
    assert allowed(verdicts) == [True, True, False]
    assert isinstance(verdicts[-1], Deny) and "failed" in verdicts[-1].message


def test_one_body_resent_is_one_attempt_at_the_original() -> None:
    """The same edit sent twice is counted by its own keys; the original counts distinct bodies."""
    agent = Agent()
    original = "<lines 26-26>"
    bodies = ("body a", "body a", "body b")
    verdicts: list[Allow | Deny] = []
    for body in bodies:
        agent.turn()
        edit = {"file_path": "repro.py", "old_string": original, "new_string": body}
        verdicts.append(agent.run("edit", edit, "Error: syntax error (E999)", error=True))
    assert allowed(verdicts) == [True, True, True]


def test_a_failed_original_that_then_matches_starts_over() -> None:
    agent = Agent()
    edit = {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}
    agent.run("edit", edit, NO_MATCH, error=True)
    agent.run("edit", {**edit, "new_string": "x = 3"}, "Edited a.py")
    verdict = agent.run("edit", {**edit, "new_string": "x = 4"}, NO_MATCH, error=True)
    assert isinstance(verdict, Allow)


def test_an_item_kept_through_failing_lookups_is_stopped_at_its_fourth() -> None:
    """Reordered, with items added, the identical error each time: the item in all of them."""
    agent = Agent()
    lost = {"class": "Missing", "method": "run"}
    rounds = [
        [lost, {"class": "A"}],
        [{"class": "B"}, lost],
        [lost, {"class": "A"}, {"class": "C"}],
        [{"class": "D"}, lost],
    ]
    verdicts: list[Allow | Deny] = []
    for locations in rounds:
        agent.turn()
        agent.search(f"other {len(verdicts)}", "Found 1 class")  # other calls between
        verdicts.append(agent.run("read", {"locations": locations}, IMPRECISE, error=True))
    assert allowed(verdicts) == [True, True, True, False]


def test_two_different_lookups_failing_alike_then_a_third_is_ordinary() -> None:
    agent = Agent()
    kept = {"class": "Validator"}
    verdicts: list[Allow | Deny] = []
    for other in ("parse", "Validation Process", "clean"):
        agent.turn()
        verdicts.append(agent.run("read", {"locations": [kept, {"method": other}]}, IMPRECISE, error=True))
    assert allowed(verdicts) == [True, True, True]


def test_a_batch_rerun_in_later_turns_is_stopped_at_its_third_run() -> None:
    agent = Agent()
    verdicts: list[Allow | Deny] = []
    agent.turn()
    verdicts.append(agent.search("class Meta", "Found 893 snippets"))
    agent.search("class User", "Found 11 classes")  # sent in the same turn: a batch
    for other in ("settings", "models"):
        agent.turn()
        agent.search(other, "Found 2 snippets")
        verdicts.append(agent.search("class Meta", "Found 893 snippets"))
    assert allowed(verdicts) == [True, True, False]


def test_an_agent_that_sends_one_call_a_turn_rereads_freely() -> None:
    """The same re-read three times with other calls between: a sequential agent checking again."""
    agent = Agent()
    verdicts: list[Allow | Deny] = []
    for other in ("a", "b", "c"):
        agent.turn()
        verdicts.append(agent.run("read", {"file_path": "rst.py"}, "class RST: ..."))
        agent.turn()
        agent.search(other, "Found 2 snippets")
    assert allowed(verdicts) == [True, True, True]


def test_an_answer_that_changes_is_progress() -> None:
    agent = Agent()
    verdicts: list[Allow | Deny] = []
    for percent in range(0, 100, 10):
        agent.turn()
        verdicts.append(agent.run("bash", {"command": "cat progress.txt"}, f"{percent}% done"))
    assert all(allowed(verdicts))


def test_a_rerun_after_other_calls_is_stopped_at_its_fourth_run() -> None:
    """One call a turn: the same answer on the 4th run with other calls between (a poll in a row
    keeps its 5th)."""
    agent = Agent()
    verdicts: list[Allow | Deny] = []
    for other in ("a", "b", "c", "d"):
        agent.turn()
        verdicts.append(agent.run("bash", {"command": "ls -lha /bin/bash"}, "-rwxr-xr-x 1 root bash"))
        agent.turn()
        agent.search(other, "Found 2 snippets")
    assert allowed(verdicts) == [True, True, True, False]


def test_a_command_the_shell_cannot_parse_is_not_run_a_third_time() -> None:
    agent = Agent()
    parse_error = (
        "/bin/bash: -c: line 1: unexpected EOF while looking for matching `)'\n"
        "/bin/bash: -c: line 2: syntax error: unexpected end of file\n[exit code: 2]"
    )
    verdicts: list[Allow | Deny] = []
    for _ in range(3):
        agent.turn()
        verdicts.append(agent.run("bash", {"command": "users=$(w -h | cut -f1"}, parse_error))
    assert allowed(verdicts) == [True, True, False]


def test_a_command_that_is_one_substitution_is_aimed_at_the_program_it_runs() -> None:
    """`` `cal 2021-12 2120-12` `` reworded keeps one target, cal: the identical usage error ends it."""
    agent = Agent()
    usage = "Usage: cal [general options] [-jy] [[month] year]"
    orders = ("2021-12 2120-12", "2120-12 2021-12", "2021-12 2021-12", "2120-12 2120-12", "2021-12 x", "x y")
    verdicts: list[Allow | Deny] = []
    for order in orders:
        agent.turn()
        verdicts.append(agent.run("bash", {"command": f"`cal {order}`"}, usage))
    assert allowed(verdicts) == [True] * 5 + [False]
