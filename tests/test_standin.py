"""A call's stand-in (its long texts condensed) is the same call to ``Breaker``: the journal keeps
it instead of the call's megabytes, and a replacement worker must count it the same."""

from __future__ import annotations

import pytest

from breaker.core.config import load_config
from breaker.core.decision import Breaker
from breaker.core.history.standin import stand_in
from breaker.core.judging.verdicts import Deny
from breaker.core.reading.canonical import CONDENSED_CHARS, canonical_json, condensed
from breaker.core.reading.fingerprints import ToolCall

LONG = "€" * CONDENSED_CHARS
OTHER = "€" * (CONDENSED_CHARS - 1) + "$"


def test_condensed_is_short_unique_and_its_own_condensed_form() -> None:
    assert condensed("short") == "short"
    assert len(condensed(LONG)) < 200
    assert condensed(LONG) != condensed(OTHER)
    assert condensed(condensed(LONG)) == condensed(LONG)
    nested = {"edits": [{"old_string": LONG, "new_string": "x"}], "n": 1}
    standing = {"edits": [{"old_string": condensed(LONG), "new_string": "x"}], "n": 1}
    assert canonical_json(nested) == canonical_json(standing)


CALLS = [
    ToolCall("write", {"path": "a.txt", "content": LONG}, "c"),
    ToolCall("edit", {"path": "a.txt", "old_string": LONG, "new_string": OTHER}, "c"),
    ToolCall("multi_edit", {"path": "a.txt", "edits": [{"old_str": "a", "new_str": LONG}]}, "c"),
    ToolCall("web_fetch", {"url": "https://example.org/", "body": [LONG, {"deep": LONG}]}, "c"),
]


@pytest.mark.parametrize("identity", ["exact", "state-aware"])
@pytest.mark.parametrize("call", CALLS, ids=lambda call: call.name)
def test_a_stand_in_decided_in_the_call_s_place_counts_the_same(call: ToolCall, identity: str) -> None:
    config = load_config({"identity": identity, "limits": {"exact": 4}})
    arguments = stand_in(call, config)
    assert arguments is not None
    assert len(canonical_json(arguments)) < 1000
    assert stand_in(ToolCall(call.name, arguments, call.call_id), config) is None, "nothing left to condense"
    live, rebuilt = Breaker(config), Breaker(config)
    verdicts = []
    for number in range(5):
        original = ToolCall(call.name, call.arguments, f"c{number}")
        journaled = ToolCall(call.name, arguments, f"c{number}") if number < 3 else original
        verdicts.append(type(live.decide(1, original)))
        assert type(rebuilt.decide(1, journaled)) is verdicts[-1]
        live.record_result(1, f"c{number}", "done")
        rebuilt.record_result(1, f"c{number}", "done")
    assert verdicts[-1] is Deny


def test_no_stand_in_where_the_text_is_read_as_it_is_or_nothing_is_long() -> None:
    config = load_config(None)
    assert stand_in(ToolCall("bash", {"command": "echo " + LONG}), config) is None
    assert stand_in(ToolCall("write", {"path": "a.txt", "content": "short"}), config) is None
