"""How a call was spelled (history.spellings): what tells a repeat that changed only what reading
strips (its notes, volatile flags, a host's spelling) from one that changed nothing."""

from __future__ import annotations

from typing import Any

from breaker import Breaker, Deny, ToolCall, load_config
from breaker.core.history.spellings import SPELLING_SIZE, respelled, spelling
from breaker.core.reading.fingerprints import fingerprint_call

CONFIG = load_config({"preset": "seed"})


def spelled(name: str, **arguments: Any) -> bytes:
    call = ToolCall(name, arguments, "c")
    return spelling(call, fingerprint_call(call, CONFIG).fingerprints, CONFIG)


FETCH = "curl -sS --max-time 30 https://open.canada.ca/ -o /tmp/od.html"


def test_the_same_call_spells_the_same_and_is_not_respelled() -> None:
    first = spelled("bash", command=FETCH, description="fetch")
    assert len(first) == SPELLING_SIZE
    assert first == spelled("bash", command=FETCH, description="fetch")
    assert not respelled(first, first)


def test_notes_flags_and_host_spellings_are_respellings() -> None:
    first = spelled("bash", command=FETCH, description="fetch")
    for other in (
        spelled("bash", command=FETCH, description="fetch again"),
        spelled("bash", command=FETCH, description="fetch", timeoutMs=5000),
        spelled("bash", command=FETCH.replace("30", "60"), description="fetch"),
        spelled("bash", command=FETCH.replace("open.canada", "OPEN.canada"), description="fetch"),
        spelled("bash", command=FETCH.replace("open.canada", "open-data.canada"), description="fetch"),
    ):
        assert respelled(other, first)


def test_a_call_that_names_another_action_is_not_a_respelling() -> None:
    first = spelled("bash", command=FETCH, description="fetch")
    elsewhere = spelled("bash", command=FETCH.replace("canada.ca/", "canada.ca/data"), description="fetch")
    assert not respelled(elsewhere, first)
    assert not respelled(spelled("web_search", query="b"), spelled("web_search", query="a"))
    assert not respelled(spelled("read", file_path="/b"), spelled("read", file_path="/a"))


def test_a_long_note_spells_the_same_as_its_condensed_stand_in() -> None:
    """The shim's journal replays a call with its long texts condensed: it must spell the same."""
    from breaker.core.reading import condensed

    long = "why " * 5000
    assert spelled("bash", command="ls", description=long) == spelled(
        "bash", command="ls", description=condensed(long)
    )


def test_an_agent_keeps_one_spelling_per_window_entry() -> None:
    breaker = Breaker(load_config({"preset": "seed", "window": 8}))
    for n in range(20):
        breaker.decide(1, ToolCall("read", {"file_path": f"/f{n}"}, f"c{n}"))
    state = breaker._agents.get(1)
    assert state is not None
    assert len(state.spellings) == len(state.window) == 8
    for n in range(5):
        verdict = breaker.decide(1, ToolCall("read", {"file_path": "/same"}, f"s{n}"))
    assert isinstance(verdict, Deny)
    assert "does not make this a new action" not in verdict.message
    assert len(state.spellings) == len(state.window)
    breaker.human_message(1)
    assert len(state.spellings) == len(state.window) == 0
