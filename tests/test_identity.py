"""identity: state-aware: a call after a workspace change is a new action; undoing one is not a change."""

from __future__ import annotations

import hashlib

import pytest

from breaker.core.config import ConfigError, load_config
from breaker.core.decision import Breaker
from breaker.core.history.identity import Workspace, effect_of, reverse
from breaker.core.history.tokens import token_of
from breaker.core.judging.verdicts import Allow, Deny
from breaker.core.reading import canonical_json, succeeded
from breaker.core.reading.fingerprints import ToolCall, fingerprint_call

STATE_AWARE = load_config({"identity": "state-aware"})


class Agent:
    """Drives one agent through a Breaker: each call is decided, then its result recorded."""

    def __init__(self, breaker: Breaker) -> None:
        self.breaker = breaker
        self.calls = 0

    def run(self, name: str, arguments: dict[str, object], result: str = "(no output)") -> Allow | Deny:
        self.calls += 1
        call = ToolCall(name, arguments, f"c{self.calls}")
        verdict = self.breaker.decide("a", call)
        self.breaker.record_result("a", call.call_id, result)
        return verdict

    def test(self) -> Allow | Deny:
        return self.run("bash", {"command": "pytest -q"}, "1 failed\n[exit code: 1]")

    def edit(self, old: str, new: str, result: str = "The file app.py has been updated.") -> Allow | Deny:
        return self.run("edit", {"file_path": "app.py", "old_string": old, "new_string": new}, result)


def test_the_default_is_exact_and_the_key_fails_loud() -> None:
    assert load_config({"preset": "seed"}).identity == "exact"
    with pytest.raises(ConfigError, match=r"identity must be one of exact \| state-aware, got .state_aware."):
        load_config({"identity": "state_aware"})


def test_an_edit_test_cycle_is_denied_by_exact_identity_but_not_state_aware() -> None:
    exact, aware = Agent(Breaker(load_config({"preset": "seed"}))), Agent(Breaker(STATE_AWARE))
    exact_verdicts, aware_verdicts = [exact.test()], [aware.test()]
    for step in range(6):
        exact.edit(f"v{step}", f"v{step + 1}")
        aware.edit(f"v{step}", f"v{step + 1}")
        exact_verdicts.append(exact.test())
        aware_verdicts.append(aware.test())
    assert isinstance(exact_verdicts[4], Deny)
    assert all(isinstance(verdict, Allow) for verdict in aware_verdicts)


def test_a_flip_flop_keeps_one_key_and_is_caught() -> None:
    agent = Agent(Breaker(STATE_AWARE))
    verdicts = []
    for step in range(6):
        old, new = ("round(x)", "floor(x)") if step % 2 == 0 else ("floor(x)", "round(x)")
        agent.edit(old, new)
        verdicts.append(agent.test())
    # The first edit is a change; undoing it and redoing it are not, so every test after the
    # first edit is the same action, rerun with other calls between and the same answer: the 4th
    # run is denied (a poll in a row would get a 5th).
    assert [isinstance(verdict, Deny) for verdict in verdicts] == [False] * 3 + [True] * 3


def test_a_failed_edit_is_no_change() -> None:
    agent = Agent(Breaker(STATE_AWARE))
    verdicts = [agent.test()]
    for step in range(5):
        agent.edit(f"x{step}", "y", result="Error: old_string not found in app.py")
        verdicts.append(agent.test())
    assert isinstance(verdicts[4], Deny)


def test_a_call_that_only_rewrites_its_own_output_still_counts_loop_a() -> None:
    agent = Agent(Breaker(STATE_AWARE))
    verdicts = [agent.run("bash", {"command": "echo tick >> counter.txt"}) for _ in range(5)]
    assert [isinstance(verdict, Deny) for verdict in verdicts] == [False] * 4 + [True]


def test_the_same_content_written_back_is_no_change() -> None:
    agent = Agent(Breaker(STATE_AWARE))
    verdicts = []
    for _ in range(5):
        agent.run("write", {"file_path": ".flake8", "content": "[flake8]\n"}, "Updated file")
        verdicts.append(agent.run("bash", {"command": "flake8"}, "E501\n[exit code: 1]"))
    assert isinstance(verdicts[4], Deny)


def test_mutating_commands_and_sinks_change_the_workspace() -> None:
    agent = Agent(Breaker(STATE_AWARE))
    verdicts = []
    for step in range(6):
        agent.run("bash", {"command": f"git commit -am 'step {step}'"}, f"[main {step}] step")
        verdicts.append(agent.run("bash", {"command": "git status --short"}, ""))
        agent.run("bash", {"command": f"python gen.py {step} > out.json"})
        verdicts.append(agent.run("bash", {"command": "cat out.json"}, "{}"))
    assert all(isinstance(verdict, Allow) for verdict in verdicts)


def test_public_targets_are_not_keyed_by_the_workspace() -> None:
    workspace = Workspace()
    write = ToolCall("write", {"file_path": "a.txt", "content": "1"}, "w1")
    workspace.identify(write, fingerprint_call(write, STATE_AWARE).fingerprints)
    workspace.expect("w1")
    workspace.settle("w1", "Created file")
    fetch = ToolCall("bash", {"command": "curl -s https://example.org/x"}, "f1")
    keys = [fp.key for fp in workspace.identify(fetch, fingerprint_call(fetch, STATE_AWARE).fingerprints)]
    assert "net:example.org/x" in keys
    assert any(key.startswith("exact:bash:") and "@workspace:" in key for key in keys)


def test_effects_and_results() -> None:
    edit = ToolCall("edit", {"file_path": "a", "edits": [{"old_string": "x", "new_string": "y"}]})
    assert effect_of(edit, ()).edit == (("x", "y"),)
    assert reverse((("a", "b"), ("c", "d"))) == (("d", "c"), ("b", "a"))
    assert effect_of(ToolCall("read", {"file_path": "a"}), ()).places == ()
    assert succeeded("(no output)") and succeeded("ok\n[exit code: 0]")
    assert not succeeded("boom\n[exit code: 2]") and not succeeded("x\n[killed by signal: SIGKILL]")
    assert not succeeded("Error: old_string not found in a")


@pytest.mark.parametrize(
    "parts",
    [
        ("run", 'pytest -q "a\\b"\n'),
        ("answer", "é\x00\u2028\ud800 ok", 12),
        ("edit", None, (("old", "new"), ("x" * 70_000, "\x1f"))),
        ("edit", "0" * 32, ()),
        ("append", None, "tick\n"),
        ("content", "y" * 70_000),
    ],
)
def test_a_token_is_the_digest_of_its_parts_as_canonical_json_writes_them(parts: tuple[object, ...]) -> None:
    """Tokens are written without ``canonical_json`` (its total encoder walks tuples one item at a
    time), yet each is the one it always was: a long text condensed, an edit's tuples as lists."""
    written = canonical_json(list(parts)).encode("utf-8", "surrogatepass")
    assert token_of(*parts) == hashlib.blake2b(written, digest_size=16).hexdigest()  # type: ignore[arg-type]
