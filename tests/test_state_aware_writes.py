"""identity: state-aware and files written through the shell: new content is a new write.

A bash-only agent rewrites one script again and again (``cat <<'EOF' > reproduce_issue.py``), each
time with new content, between runs of it. Every version shares ``sink:reproduce_issue.py``; the
mode keys a write by what the file holds, so a rewrite over a write that landed is a new action,
while a rewrite over one that did not land (a failed command, a shell that could not find a
command) is the same action again. An append builds on what the file held.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from breaker.core.config import load_config
from breaker.core.decision import Breaker
from breaker.core.history.identity import Workspace
from breaker.core.judging.verdicts import Allow, Deny
from breaker.core.reading import succeeded
from breaker.core.reading.fingerprints import ToolCall, fingerprint_call

STATE_AWARE = load_config({"identity": "state-aware"})


class Agent:
    def __init__(self, breaker: Breaker) -> None:
        self.breaker = breaker
        self.calls = 0

    def bash(self, command: str, result: str = "") -> Allow | Deny:
        self.calls += 1
        call = ToolCall("bash", {"command": command}, f"c{self.calls}")
        verdict = self.breaker.decide("a", call)
        self.breaker.record_result("a", call.call_id, result)
        return verdict


def script(version: int) -> str:
    return f"cat <<'EOF' > reproduce_issue.py\nfrom app import parse\nprint(parse('case {version}'))\nEOF"


def test_five_versions_of_one_script_are_five_writes_under_state_aware() -> None:
    agent = Agent(Breaker(STATE_AWARE))
    verdicts = []
    for version in range(7):
        verdicts.append(agent.bash(script(version)))
        verdicts.append(agent.bash("python reproduce_issue.py", f"case {version}: wrong"))
    assert all(isinstance(verdict, Allow) for verdict in verdicts)


def test_the_seed_still_counts_every_write_of_one_file_as_one_sink() -> None:
    agent = Agent(Breaker(load_config({"preset": "seed"})))
    verdicts = [agent.bash(script(version)) for version in range(5)]
    assert isinstance(verdicts[4], Deny)
    assert [hit.fingerprint.key for hit in verdicts[4].hits] == ["sink:reproduce_issue.py"]


def sink_key(workspace: Workspace, command: str, call_id: str) -> str:
    call = ToolCall("bash", {"command": command}, call_id)
    keyed = workspace.identify(call, fingerprint_call(call, STATE_AWARE).fingerprints)
    return next(fp.key for fp in keyed if fp.kind == "sink")


def write(workspace: Workspace, command: str, call_id: str, result: str) -> str:
    """Key one write, run it, and settle its result; returns its sink key."""
    key = sink_key(workspace, command, call_id)
    workspace.expect(call_id)
    workspace.settle(call_id, result)
    return key


def test_a_rewrite_over_a_write_that_landed_is_a_new_action() -> None:
    workspace = Workspace()
    first = write(workspace, "echo 'v = 1' > conf.py", "c1", "")
    second = write(workspace, "echo 'v = 2' > conf.py", "c2", "")
    third = write(workspace, "echo 'v = 3' > conf.py", "c3", "")
    assert len({first, second, third}) == 3


@pytest.mark.parametrize(
    "failed",
    [
        "\n[exit code: 1]",
        "bash: line 1: bashndocker: command not found\nbash: line 1: bashndocker: command not found",
        "/bin/sh: 1: jq: not found",
    ],
)
def test_a_rewrite_over_a_write_that_did_not_land_is_the_same_action(failed: str) -> None:
    workspace = Workspace()
    write(workspace, "echo 'v = 1' > conf.py", "c1", "")
    second = write(workspace, 'echo -e "v = `2`" > conf.py', "c2", failed)
    third = write(workspace, 'echo -e "v = `3`" > conf.py', "c3", failed)
    assert second == third


def test_the_same_content_written_again_is_no_change() -> None:
    workspace = Workspace()
    write(workspace, "echo 'v = 1' > conf.py", "c1", "")
    second = write(workspace, "echo 'v = 2' > conf.py", "c2", "")
    write(workspace, "echo 'v = 1' > conf.py", "c3", "")
    assert sink_key(workspace, "echo 'v = 2' > conf.py", "c4") == second


def test_appends_build_on_what_the_file_held() -> None:
    workspace = Workspace()
    lines = ["import sys", "print(sys.argv)", "print('done')"]
    keys = [write(workspace, f'echo "{line}" >> fix.py', f"c{n}", "") for n, line in enumerate(lines)]
    keys.append(write(workspace, 'echo "import sys" >> fix.py', "c9", ""))
    assert len(set(keys)) == 4  # the same line appended again makes a longer file


def test_a_rewrite_that_never_lands_is_caught_however_it_is_reworded() -> None:
    """The recorded loop: echo -e with backticks inside, reworded each time, never works."""
    agent = Agent(Breaker(STATE_AWARE))
    broken = "bash: line 1: bashndocker: command not found"
    commands = [f'echo -e "# Notes {n}\\n```bash\\ndocker build .\\n```" > notes.md' for n in range(6)]
    verdicts = [agent.bash(command, broken) for command in commands]
    assert any(isinstance(verdict, Deny) for verdict in verdicts[:5])


def test_loop_a_appending_one_line_again_and_again_is_still_caught_at_five() -> None:
    agent = Agent(Breaker(load_config({"identity": "state-aware", "sameResultLimit": None})))
    verdicts = [agent.bash("echo tick >> counter.txt") for _ in range(5)]
    assert isinstance(verdicts[4], Deny)
    assert {hit.fingerprint.kind for hit in verdicts[4].hits} >= {"exact", "cmd"}


@pytest.mark.parametrize(
    ("text", "worked"),
    [
        ("", True),
        ("Anchor 'test' not found", True),
        ("ERROR: module foo: not found in index", True),
        ("bash: line 2: bashndocker: command not found", False),
        ("bash: jq: command not found", False),
        ("/bin/sh: 1: jq: not found", False),
        ("zsh: command not found: jq", False),
        ("partial output\n[exit code: 2]", False),
        ("[exit code: 2]", False),  # nothing printed, only the line saying how it ended
        ("[killed by signal: SIGKILL]\n", False),
        ("[exit code: 0]", True),
        ("Error: old_string not found in app.py", False),
    ],
)
def test_what_counts_as_a_change_that_worked(text: str, worked: bool) -> None:
    assert succeeded(text) is worked


@settings(max_examples=200)
@given(st.lists(st.tuples(st.integers(0, 3), st.booleans()), min_size=1, max_size=12))
def test_a_writes_key_names_what_the_file_held_when_it_was_written(writes: list[tuple[int, bool]]) -> None:
    """Two writes share a sink key exactly when the file held the same thing before each: what
    the last write that landed put there (nothing, before the first)."""
    workspace = Workspace()
    keys: list[str] = []
    held_before: list[int | None] = []
    held: int | None = None
    for n, (version, lands) in enumerate(writes):
        command = f"echo 'v = {version}' > conf.py"
        held_before.append(held)
        keys.append(write(workspace, command, f"c{n}", "" if lands else "\n[exit code: 1]"))
        if lands:
            held = version
    for i in range(len(writes)):
        for j in range(len(writes)):
            assert (keys[i] == keys[j]) == (held_before[i] == held_before[j])
