"""A cap set on one full fingerprint in ``limits`` holds however ``identity: state-aware`` keys it.

Under state-aware identity a local target's fingerprint carries the workspace state after a change
(`` @workspace:<state>``) and a fetch fed to another program carries its readers (`` |jq``); a cap
the operator set on the fingerprint as read (``'family:http-fetch': 3``, ``'cmd:ls:ls': 2``) names
it all the same: the cap applies, its notice comes, its failures are tracked.
"""

from __future__ import annotations

from breaker.core.config import load_config
from breaker.core.decision import Breaker
from breaker.core.history.caps import read_key
from breaker.core.history.identity import Workspace
from breaker.core.judging.verdicts import Allow, Deny
from breaker.core.reading.fingerprints import ToolCall, fingerprint_call


def _run(config: dict[str, object], calls: list[tuple[str, dict[str, object], str]]) -> list[Allow | Deny]:
    breaker = Breaker(load_config(config))
    verdicts: list[Allow | Deny] = []
    for number, (name, arguments, result) in enumerate(calls, 1):
        call = ToolCall(name, arguments, f"c{number}")
        verdicts.append(breaker.decide("a", call))
        breaker.record_result("a", call.call_id, result)
    return verdicts


def _bash(command: str, result: str) -> tuple[str, dict[str, object], str]:
    return ("bash", {"command": command, "description": "x"}, result)


WRITE: tuple[str, dict[str, object], str] = (
    "write",
    {"file_path": "/w/notes.txt", "content": "x"},
    "File written.",
)


def test_a_family_cap_stops_fetches_piped_into_a_reader() -> None:
    calls = [_bash(f"curl -s https://a{n}.example.com/data | jq .x", f"{n}") for n in range(5)]
    verdicts = _run({"limits": {"family:http-fetch": 3}}, calls)
    assert [isinstance(verdict, Deny) for verdict in verdicts] == [False, False, True, True, True]
    assert isinstance(verdicts[2], Deny) and "family:http-fetch" in verdicts[2].message


def test_a_family_cap_stops_local_fetches_after_a_workspace_change() -> None:
    calls = [WRITE] + [_bash(f"curl -s http://127.0.0.1:80{n}/data", f"{n}") for n in range(5)]
    verdicts = _run({"limits": {"family:http-fetch": 3}, "localHosts": "deny"}, calls)
    assert [isinstance(verdict, Deny) for verdict in verdicts] == [False, False, False, True, True, True]


def test_a_cap_on_one_command_holds_after_a_workspace_change() -> None:
    calls = [WRITE] + [_bash("ls", f"listing {n}") for n in range(3)]
    verdicts = _run({"limits": {"cmd:ls:ls": 2}}, calls)
    assert [isinstance(verdict, Deny) for verdict in verdicts] == [False, False, True, True]


def test_a_notice_counts_against_a_cap_on_one_fingerprint_after_a_change() -> None:
    breaker = Breaker(load_config({"limits": {"cmd:ls:ls": 4}, "warnAt": 2}))
    notices = []
    for number, (name, arguments, result) in enumerate([WRITE, _bash("ls", "a"), _bash("ls", "b")], 1):
        verdict = breaker.decide("a", ToolCall(name, arguments, f"c{number}"))
        breaker.record_result("a", f"c{number}", result)
        notices.append(verdict.notice)  # type: ignore[union-attr]
    assert notices[:2] == [None, None]
    assert notices[2] is not None and "cmd:ls:ls" in notices[2].text and "blocked at 4" in notices[2].text


def test_read_key_undoes_each_keying_and_leaves_a_plain_key_alone() -> None:
    config = load_config({})
    workspace = Workspace()
    write = ToolCall("write", {"file_path": "/w/a", "content": "x"}, "w")
    workspace.identify(write, fingerprint_call(write, config).fingerprints)
    workspace.expect("w")
    workspace.settle("w", "File written.")
    keyings = 0
    local, piped = "curl -s http://127.0.0.1:8000/x", "curl -s https://example.com/x | jq ."
    for command in ("ls", local, piped, "ls @workspace:x"):
        call = ToolCall("bash", {"command": command}, "c")
        read = fingerprint_call(call, config).fingerprints
        keyed = workspace.identify(call, read)
        keyings += sum(fp.key != read_fp.key for fp, read_fp in zip(keyed, read, strict=True))
        assert [read_key(fp) for fp in keyed] == [fp.key for fp in read], command
        assert [read_key(fp) for fp in read] == [fp.key for fp in read], command
    assert keyings >= 8  # each keying was taken: the workspace's and the readers'
