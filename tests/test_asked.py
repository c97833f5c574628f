"""What a call asks for (breaker/core/history/asked.py ``Asked``): each part read once, when a rule
first needs it, and the same as reading it at once."""

from __future__ import annotations

import pytest

from breaker.core.config import load_config
from breaker.core.decision import Breaker
from breaker.core.history import asked as asked_module
from breaker.core.history.asked import Asked, call_keys, failed_keys, ignored_args, target_of
from breaker.core.judging.verdicts import Allow, Deny
from breaker.core.reading import ToolCall, distinct, fingerprint_call

CONFIG = load_config({})
CALLS = [
    ToolCall("edit", {"path": "/src/a.py", "old_string": "x = 1\n" * 300, "new_string": "x = 2\n"}, "c1"),
    ToolCall("grep", {"pattern": "def f", "path": "src", "limit": 10, "description": "note"}, "c2"),
    ToolCall("bash", {"command": "curl -s https://example.org/api?q=1 | jq .name"}, "c3"),
    ToolCall("lookup", {"ids": ["a", "b", {"id": "c", "content": "text"}]}, "c4"),
]


@pytest.mark.parametrize("call", CALLS, ids=lambda call: call.name)
def test_each_part_is_what_reading_it_at_once_gives(call: ToolCall) -> None:
    raw = distinct(fingerprint_call(call, CONFIG).fingerprints)
    ignored = ignored_args(CONFIG, call.name)
    assert "description" in ignored
    asked = Asked(call, raw, raw, CONFIG)
    assert asked.keys == call_keys(raw)
    assert asked.target == target_of(call, raw, ignored)
    assert asked.failed == failed_keys(call, ignored)
    assert asked.target == target_of(call, raw, ignored)  # read again: kept


def test_the_target_is_read_once_a_result_comes_back_the_same_and_by_the_guard_only_once_a_run_could_stop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads: list[str] = []

    def counted_target_of(call: ToolCall, *args: object) -> str:
        reads.append(call.call_id)
        return target_of(call, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(asked_module, "target_of", counted_target_of)
    breaker = Breaker(load_config({"sameResultLimit": 2, "limits": {"exact": None}}))
    verdicts = []
    after_results = []
    for number in range(1, 5):
        call_id = f"r{number}"
        # one file, the range shifted each time: a rewording with the same answer
        call = ToolCall("read", {"path": "/src/a.py", "offset": number}, call_id)
        verdicts.append(breaker.decide("a", call))
        if isinstance(verdicts[-1], Allow):
            assert call_id not in reads  # the guard did not need it
            breaker.record_result("a", call_id, "same text", {"isError": False})
            after_results.append(list(reads))
    assert [type(verdict) for verdict in verdicts] == [Allow, Allow, Deny, Deny]
    # The first answer starts a run: no target read. The second, the same text, reads its call's
    # target and the one before it, each once; then each guard reads its own call's target.
    assert after_results == [[], ["r2", "r1"]]
    assert reads == ["r2", "r1", "r3", "r4"]


def test_what_counts_when_it_fails_is_read_by_the_guard_only_once_a_key_came_back_enough(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads: list[str] = []

    def counted_failed_keys(call: ToolCall, *args: object) -> frozenset[str]:
        reads.append(call.call_id)
        return failed_keys(call, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(asked_module, "failed_keys", counted_failed_keys)
    breaker = Breaker(load_config({"sameResultLimit": 4, "limits": {"exact": None}}))
    failing = {"path": "/src/a.py", "old_string": "missing", "new_string": "x"}

    def edit(call_id: str) -> Allow | Deny:  # the same original each time, its new text changed
        return breaker.decide("a", ToolCall("edit", {**failing, "new_string": call_id}, call_id))

    def fails(call_id: str) -> None:
        breaker.record_result("a", call_id, "Error: old_string not found", {"isError": True})

    assert isinstance(edit("e1"), Allow) and reads == []
    fails("e1")
    assert reads == ["e1"]  # read when it failed
    # Something failed, but no key came back often enough to stop: an ordinary call reads none.
    assert isinstance(breaker.decide("a", ToolCall("read", {"path": "/src/b.py"}, "r1")), Allow)
    assert reads == ["e1"]
    breaker.record_result("a", "r1", "text", {"isError": False})
    assert reads == ["e1", "r1"]  # its result did (something had failed)
    # The same read again, other searches between, the same text: after three, its key could stop
    # a call (a rerun is stopped one sooner), but no key of what failed could.
    for number in (2, 3):
        grep = ToolCall("grep", {"pattern": f"g{number}"}, f"g{number}")
        for call in (grep, ToolCall("read", {"path": "/src/b.py"}, f"r{number}")):
            assert isinstance(breaker.decide("a", call), Allow)
            breaker.record_result("a", call.call_id, "text", {"isError": False})
    assert reads == ["e1", "r1", "g2", "r2", "g3", "r3"]  # each result read them, no guard did
    assert isinstance(breaker.decide("a", ToolCall("grep", {"pattern": "g4"}, "g4")), Allow)
    assert isinstance(breaker.decide("a", ToolCall("read", {"path": "/src/b.py"}, "r4")), Deny)
    assert reads[-1] == "r3"
    reads.clear()
    # A file tool's error stops two sooner than 4: after one, the retry still goes unread.
    assert isinstance(edit("e2"), Allow) and reads == []
    fails("e2")
    # After two, the third try reads what it asks for, and stops.
    verdict = edit("e3")
    assert isinstance(verdict, Deny) and verdict.stall is not None and verdict.stall.rule == "failed"
    assert reads == ["e2", "e3"]
