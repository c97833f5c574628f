"""Tools the breaker does not know (a function of an API, a tool of an MCP server), under the
defaults: their failures read from the shape of their answers, their calls possible changes to
what later calls read, polls whose answer moves, and the variants of one failing call
(breaker/core/reading/readonly.py, volatile.py; core/history/identity.py, progress.py, variants.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from breaker.core.config import load_config
from breaker.core.decision import Breaker
from breaker.core.history import progress
from breaker.core.judging.verdicts import Allow, Deny
from breaker.core.reading.readonly import lists_items, may_change, reports_state
from breaker.core.reading.volatile import content_of
from tests.test_same_results import Agent


def defaults() -> Agent:
    return Agent(Breaker(load_config({})))


def listing(*names: str) -> str:
    return json.dumps({"content": list(names)})


def test_only_the_tools_the_breaker_knows_to_read_change_nothing() -> None:
    assert not any(may_change(tool) for tool in ("read", "grep", "glob", "web_fetch", "bash"))
    assert all(may_change(tool) for tool in ("change_folder", "start_pump", "list_folder", "ls", "send"))


def test_an_answer_reports_a_state_when_it_holds_nothing_or_plain_values_only() -> None:
    assert all(
        reports_state(text) for text in ("None", "{}", '{"cwd": "reports"}', '{"locked": true, "n": 0}')
    )
    assert not any(reports_state(text) for text in ('{"matches": ["a"]}', "some text", '{"a": "x\\ny"}'))


def test_times_durations_ids_and_the_calls_own_arguments_are_not_content() -> None:
    one = '{"state": "pending", "request_id": "0001beefcafe1234", "at": "2026-12-06T02:01:00Z"}'
    two = '{"state": "pending", "request_id": "0002beefcafe1234", "at": "2026-12-06T02:02:00Z"}'
    assert content_of(one) == content_of(two)
    assert content_of("took 12ms") == content_of("took 30 ms")
    assert content_of('{"progress": "45%"}') != content_of('{"progress": "50%"}')
    assert content_of("<path>./a.py</path> x", ["./a.py"]) == content_of("<path>a.py</path> x", ["a.py"])


def test_a_listing_after_a_change_of_folder_or_file_is_not_capped() -> None:
    agent = defaults()
    for n in range(5):
        assert isinstance(agent.run("list_folder", {}, listing("a", "b")), Allow)
        assert isinstance(agent.run("change_folder", {"folder": "a"}, '{"cwd": "a"}'), Allow)
        assert isinstance(agent.run("list_folder", {}, listing(*(f"q{k}" for k in range(n, 5)))), Allow)
        assert isinstance(agent.run("remove_file", {"name": f"q{n}"}, "None"), Allow)
        assert isinstance(agent.run("change_folder", {"folder": ".."}, "{}"), Allow)


def test_a_listing_repeated_with_nothing_in_between_is_stopped_at_its_fourth() -> None:
    agent = defaults()
    verdicts = [agent.run("list_folder", {}, listing("a", "b")) for _ in range(6)]
    assert [isinstance(verdict, Deny) for verdict in verdicts] == [False] * 3 + [True] * 3


def test_a_function_answering_a_line_of_text_keeps_the_full_same_result_limit_whatever_its_name() -> None:
    agent = defaults()
    verdicts = [agent.run("ls", {}, "a b") for _ in range(6)]
    assert [isinstance(verdict, Deny) for verdict in verdicts] == [False] * 4 + [True, True]


def test_an_answer_is_a_listing_when_it_holds_an_array() -> None:
    assert all(lists_items(text) for text in (listing("a"), "[]", '{"n": 2, "rows": [[1], [2]]}'))
    assert not any(lists_items(text) for text in ('{"cwd": "a"}', "a\nb", "[not json", "None", ""))


def test_a_start_refused_for_a_new_reason_after_each_fix_runs_on() -> None:
    agent = defaults()
    for reason, fix in [
        ("open the valve", "open_valve"),
        ("fill the tank", "fill_tank"),
        ("close it", "close_lid"),
    ]:
        refused = agent.run("start_pump", {}, json.dumps({"error": f"Cannot start: {reason}"}))
        assert isinstance(refused, Allow)
        assert isinstance(agent.run(fix, {}, json.dumps({"status": "done"})), Allow)
    assert isinstance(agent.run("start_pump", {}, json.dumps({"state": "running"})), Allow)


def test_the_same_change_made_again_with_the_same_report_is_not_made_a_third_time() -> None:
    agent = defaults()
    verdicts = [agent.run("write_value", {"file": "t.txt", "value": "2"}, "None") for _ in range(3)]
    assert [isinstance(verdict, Deny) for verdict in verdicts] == [False, False, True]


def test_a_change_undone_by_another_may_be_made_again() -> None:
    agent = defaults()
    agent.run("press", {"force": 1}, '{"pedal": "pressed"}')
    agent.run("press", {"force": 1}, '{"pedal": "pressed"}')
    agent.run("release", {}, '{"pedal": "released"}')
    assert isinstance(agent.run("press", {"force": 1}, '{"pedal": "pressed"}'), Allow)
    assert isinstance(agent.run("press", {"force": 1}, '{"pedal": "pressed"}'), Allow)


def test_a_poll_whose_answer_moves_runs_to_its_end_and_one_that_stops_moving_is_stopped() -> None:
    agent = defaults()
    for n in range(20):
        assert isinstance(agent.bash("curl -s http://127.0.0.1:8080/jobs/7", f"progress {5 * n}%"), Allow)
    verdicts = [agent.bash("curl -s http://127.0.0.1:8080/jobs/7", "progress 100%") for _ in range(6)]
    stopped = next(verdict for verdict in verdicts if isinstance(verdict, Deny))
    assert verdicts.index(stopped) == 4  # the same answer 4 times: sameResultLimit
    assert "a sleep before the next check" in stopped.message  # a poll is told how to wait


def test_a_poll_whose_only_change_is_its_clock_is_capped() -> None:
    agent = defaults()
    verdicts = [agent.bash("curl -s http://127.0.0.1:8080/d", f"pending at 02:0{n}:00") for n in range(6)]
    assert [isinstance(verdict, Deny) for verdict in verdicts] == [False] * 4 + [True, True]


def test_a_poll_whose_answer_changed_once_in_content_is_not_capped() -> None:
    # A log tailed while a build runs: a new line, then a silent stretch, then more (the first
    # answer's content is read only once a second one differs, from what was kept of it).
    agent = defaults()
    answers = ["ok api", "ok api\nok store", "ok api\nok store", "ok api\nok store", "ok sync", "total 66%"]
    verdicts = [agent.bash("sleep 20 && tail -n 2 /tmp/cov.log", answer) for answer in answers]
    assert all(isinstance(verdict, Allow) for verdict in verdicts)


def test_a_failure_then_the_same_answer_is_not_a_poll_that_moved() -> None:
    agent = defaults()
    line = {"command": "date +%d | awk '{print $1}'"}
    failed = agent.run("bash", line, "Malformed command\n[exit code: 1]", {})
    verdicts = [failed, *(agent.run("bash", line, "Number", {}) for _ in range(4))]
    assert [isinstance(verdict, Deny) for verdict in verdicts] == [False] * 4 + [True]


def test_an_answer_quoting_its_own_respelled_path_is_not_a_poll_that_moved() -> None:
    agent = defaults()
    paths = ["src/app.py", "./src/app.py", "src//app.py", "././src/app.py", "src/./app.py", "./src//app.py"]
    verdicts = [
        agent.run("read", {"file_path": path}, f"<path>{path}</path>\n1: def main():") for path in paths
    ]
    assert any(isinstance(verdict, Deny) for verdict in verdicts)


ROLLOUT = {"command": "kubectl rollout status deployment/app --timeout=120s"}


def test_the_same_call_failing_with_news_each_time_is_no_failure_streak() -> None:
    # A bounded wait timing out as what it waits for advances: each failure says something new.
    agent = defaults()
    for updated in (2, 3, 5):
        waited = f"Waiting for rollout: {updated} of 6 updated...\nerror: timed out\n[exit code: 1]"
        assert isinstance(agent.run("bash", ROLLOUT, waited, {}), Allow)
    assert isinstance(agent.run("bash", ROLLOUT, "successfully rolled out", {}), Allow)


def test_the_same_call_failing_alike_is_stopped_at_faillimit_and_with_news_by_the_cap() -> None:
    alike = defaults()
    verdicts = [alike.run("bash", ROLLOUT, "error: timed out\n[exit code: 1]", {}) for _ in range(4)]
    assert [isinstance(verdict, Deny) for verdict in verdicts] == [False] * 3 + [True]
    news = defaults()  # a failure with news is no poll that moved either: the cap still counts it
    verdicts = [news.run("bash", ROLLOUT, f"error: lock {n}\n[exit code: 1]", {}) for n in range(6)]
    assert [isinstance(verdict, Deny) for verdict in verdicts] == [False] * 4 + [True, True]


def test_the_variants_of_one_failing_call_are_stopped_after_sameresultlimit() -> None:
    agent = defaults()
    error = "Error during execution: book() missing 1 required positional argument: 'token'"
    verdicts = [agent.run("book", {"seat": f"{n}A"}, error, {"isError": True}) for n in range(6)]
    stopped = next(verdict for verdict in verdicts if isinstance(verdict, Deny))
    assert verdicts.index(stopped) == 4 and "whatever their arguments" in stopped.message


def test_different_shell_commands_failing_alike_are_different_attempts() -> None:
    agent = defaults()
    for program in ("make", "cmake", "ninja", "meson", "bazel", "scons", "just"):
        failed = agent.run("bash", {"command": f"{program} build"}, "No rule for target.\n[exit code: 2]", {})
        assert isinstance(failed, Allow)


def test_the_rules_table_names_every_rule_a_denial_carries_and_no_other() -> None:
    """docs/decision-quality.md's one table of the no-progress rules against the code."""
    docs = (Path(__file__).parent.parent / "docs" / "decision-quality.md").read_text(encoding="utf-8")
    table = docs[docs.index("| rule | what it does | what it costs |") :].split("\n\n", 1)[0]
    named = re.findall(r"^\| \*\*[^*]+\*\* \(`(\w+)`\)", table, re.MULTILINE)
    assert sorted(named) == sorted(progress.RULES)
    made = set(re.findall(r'Stall\("(\w+)"', Path(progress.__file__).read_text(encoding="utf-8")))
    assert made | {"same", "failed"} == set(progress.RULES)  # same and failed: one call, by its key
    assert table.count("\n") >= 11  # one table: every rule of the section in it
