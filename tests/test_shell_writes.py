"""A shell line that runs code may write anything: a possible change, told by its answer.

A strong model edits through the shell: a Python heredoc that rewrites a file, ``python3 -c``,
``ex -c``, a generator script, ``make``. Nothing on the command line names what it writes, so the
breaker cannot read it as read-only; under the defaults (``identity: state-aware``) such a line
that worked holds what it answered, so a re-read after a change not made before is not "the same
result with nothing changed". The same line answering the same again changed nothing new: a cycle
of the same change and the same re-read is still stopped.
"""

from __future__ import annotations

import pytest

from breaker.core.config import load_config
from breaker.core.decision import Breaker
from breaker.core.judging.verdicts import Allow, Deny
from breaker.core.reading import runs_code, shell_text
from breaker.core.reading.fingerprints import ToolCall

DEFAULTS = load_config({})
VIEW = "sed -n '41,46p' src/ledger/money.py"
LINES = "def round_amount(value):\n\treturn round(value, 2)\n"


class Agent:
    def __init__(self) -> None:
        self.breaker = Breaker(DEFAULTS)
        self.calls = 0

    def bash(self, command: str, result: str = "(no output)") -> Allow | Deny:
        self.calls += 1
        call = ToolCall("bash", {"command": command}, f"c{self.calls}")
        verdict = self.breaker.decide("a", call)
        if isinstance(verdict, Allow):
            self.breaker.record_result("a", call.call_id, result)
        return verdict


def patch(attempt: int) -> str:
    return (
        "python3 - <<'EOF'\nimport pathlib\np = pathlib.Path('src/ledger/money.py')\n"
        f"p.write_text(p.read_text().replace('round(value,{' ' * attempt}2)', 'quantize(value)'))\nEOF"
    )


@pytest.mark.parametrize(
    ("words", "runs"),
    [
        (["python3", "fix.py"], True),
        (["python3", "-"], True),
        (["python3.11", "-c", "print(1)"], True),
        (["/usr/bin/node", "-e", "require('fs').writeFileSync('x', '')"], True),
        (["make", "-C", "build"], True),
        (["ex", "-s", "-c", "%s/a/b/", "-c", "wq", "f.py"], True),
        (["bash", "setup.sh"], True),
        (["npm", "run", "build"], True),
        (["npx", "tsc", "-p", "."], True),
        (["cargo", "run"], True),
        (["go", "generate", "./..."], True),
        (["npm", "ls"], False),
        (["go", "vet", "./..."], False),
        (["python3", "--version"], False),
        (["node", "-h"], False),
        (["bash", "-c", "cat f.py"], False),  # a line of its own: read as one
        (["cat", "f.py"], False),
        (["pythonic", "x"], False),
        ([], False),
    ],
)
def test_which_commands_run_code_whose_writes_the_line_does_not_name(words: list[str], runs: bool) -> None:
    assert runs_code(words) is runs


def test_a_shell_given_a_text_runs_that_text() -> None:
    assert shell_text(["bash", "-lc", "python x.py"]) == "python x.py"
    assert shell_text(["sh", "-c", "echo hi > f"]) == "echo hi > f"
    assert shell_text(["bash", "run.sh"]) is None
    assert shell_text(["python3", "-c", "x"]) is None


def test_a_re_read_after_each_new_shell_write_is_not_the_same_result() -> None:
    agent = Agent()
    verdicts = [agent.bash(VIEW, LINES)]
    for attempt in range(6):
        verdicts.append(agent.bash(patch(attempt)))
        verdicts.append(agent.bash(VIEW, LINES))
    assert all(isinstance(verdict, Allow) for verdict in verdicts)


@pytest.mark.parametrize(
    "write",
    [
        "PYTHONPATH=src timeout 60 python3 tools/regen.py {n}",
        "bash -lc 'python3 tools/regen.py {n}'",
        "sh -c 'echo {n} > src/version.txt'",
        "bash -c 'echo {n} 2>> logs/run.log'",
        "cd src && make gen N={n}",
    ],
)
def test_every_spelling_of_running_code_is_a_possible_change(write: str) -> None:
    agent = Agent()
    verdicts = [agent.bash(VIEW, LINES)]
    for n in range(6):
        verdicts.append(agent.bash(write.format(n=n), f"wrote {n}"))
        verdicts.append(agent.bash(VIEW, LINES))
    assert all(isinstance(verdict, Allow) for verdict in verdicts)


def test_the_same_read_with_nothing_run_between_is_still_stopped() -> None:
    agent = Agent()
    agent.bash(patch(0))
    verdicts = [agent.bash(VIEW, LINES) for _ in range(6)]
    assert isinstance(verdicts[4], Deny)


def test_a_shell_that_only_reads_is_no_change() -> None:
    agent = Agent()
    verdicts = []
    for n in range(5):
        verdicts.append(agent.bash(f"bash -c 'grep -c round src/ledger/money.py; echo {n} >&2'", f"1\n{n}"))
        verdicts.append(agent.bash(VIEW, LINES))
    assert isinstance(verdicts[-1], Deny)


def test_the_same_change_answering_alike_each_round_is_a_cycle() -> None:
    agent = Agent()
    verdicts = []
    for _ in range(5):
        verdicts.append(agent.bash("python3 fix_rounding.py", "0 replacements at 02:41:26"))
        verdicts.append(agent.bash(VIEW, LINES))
    stopped = [at for at, verdict in enumerate(verdicts, 1) if isinstance(verdict, Deny)]
    assert stopped and stopped[0] <= 7
    first = verdicts[stopped[0] - 1]
    assert isinstance(first, Deny) and first.stall is not None and first.stall.rule == "cycle"


def test_a_run_that_failed_changed_nothing() -> None:
    agent = Agent()
    verdicts = []
    for n in range(5):
        failed = f"Traceback (most recent call last):\nNameError: name 'x{n}' is not defined\n[exit code: 1]"
        verdicts.append(agent.bash(f"python3 fix{n}.py", failed))
        verdicts.append(agent.bash(VIEW, LINES))
    assert any(isinstance(verdict, Deny) for verdict in verdicts)


@pytest.mark.parametrize("command", ["python3 fix.py", "make status", "cat status.txt"])
def test_a_line_whose_answer_keeps_moving_runs_to_its_end_and_is_stopped_once_it_stops(
    command: str,
) -> None:
    # Code a line runs holds what it answered, so each new answer is a change of its own that
    # restarts the evidence: the line must still read as a poll that moves, as a plain read does.
    moving = [f"{done} of 20 steps done" for done in range(1, 21)]
    agent = Agent()
    assert all(isinstance(agent.bash(command, answer), Allow) for answer in moving)
    settled = Agent()
    verdicts = [settled.bash(command, answer) for answer in moving[:4] + [moving[3]] * 6]
    first = next(number for number, verdict in enumerate(verdicts, 1) if isinstance(verdict, Deny))
    # Stopped once its answer came back alike 4 times (the 8th call); a line that runs code one
    # call later, as the first of its answers alike is the change that brought it.
    assert first == (8 if command.startswith("cat") else 9)


def test_a_line_whose_answers_differ_only_by_what_the_call_said_is_no_poll_that_moves() -> None:
    # Its own call id quoted back is not news (reading.volatile.said): the 5th identical run is
    # stopped, as a read answering alike is.
    breaker, verdicts = Breaker(DEFAULTS), []
    for number in range(1, 7):
        call = ToolCall("bash", {"command": "python3 train.py"}, f"call-{number}")
        verdicts.append(breaker.decide("a", call))
        if isinstance(verdicts[-1], Allow):
            breaker.record_result("a", call.call_id, f"ran call-{number}")
    assert [type(verdict) for verdict in verdicts] == [Allow] * 4 + [Deny] * 2
