"""A human message and the model turn it starts: one turn, whichever of the two comes first.

dsh runs its pre-step hook (where the shim tells the worker of a human message), then logs
``step/start``, then the message; the shim tells the step just before the step's first counted
call. So the live worker hears the message before the step and ``rtb replay`` hears it after. The
core enters a turn at the agent's first counted call after ``new_step`` (``Breaker.new_step``), so
both read the step's calls as one turn and give the same verdicts.
"""

from __future__ import annotations

from breaker.core.config import load_config
from breaker.core.decision import Breaker
from breaker.core.judging.verdicts import Deny
from breaker.core.reading.fingerprints import ToolCall
from breaker.rtb.read.events import CallEvent, Event, HumanTurn, ResultEvent, StepStart
from breaker.rtb.replay.replayer import replay_events

AGENT = "session-a"
READ = ("read", {"file_path": "notes.md"})
LOOP = ("bash", {"command": "make test"})
NOTES = ("bash", {"command": "cat notes.md"})


def _steps(*steps: tuple[bool, list[tuple[str, dict[str, str]]]]) -> list[Event]:
    """A session's log as dsh writes it: each step's start, its human message if it has one,
    its calls, then their results (each call's result after every guard of its step)."""
    events: list[Event] = []
    number = 0
    for human, calls in steps:
        events.append(StepStart(AGENT, len(events)))
        if human:
            events.append(HumanTurn(AGENT, len(events)))
        ids = []
        for name, arguments in calls:
            number += 1
            ids.append(f"c{number}")
            events.append(CallEvent(AGENT, ToolCall(name, arguments, ids[-1]), len(events)))
        for call_id, (name, _) in zip(ids, calls, strict=True):
            text = "FAILED: 1 test\n[exit code: 1]" if name == "bash" else "# Notes\n"
            events.append(ResultEvent(AGENT, call_id, text, False, len(events)))
    return events


def _live(events: list[Event], config: dict[str, object]) -> list[str]:
    """The verdicts of the worker as the shim feeds it: a human message at the pre-step (none at an
    agent's first, which the shim has no id for yet), before the step, which goes just before the
    step's first call."""
    breaker = Breaker(load_config(config))
    verdicts: list[str] = []
    seen, stepped = False, False
    for event in events:
        if isinstance(event, StepStart):
            stepped = True
        elif isinstance(event, HumanTurn) and seen:
            breaker.human_message(AGENT)
        elif isinstance(event, CallEvent):
            if stepped:
                breaker.new_step(AGENT)
                stepped = False
            seen = True
            breaker.precheck(AGENT, event.call)
            verdict = breaker.decide(AGENT, event.call)
            verdicts.append("denied" if isinstance(verdict, Deny) else "allowed")
        elif isinstance(event, ResultEvent):
            facts = {"isError": False, "exitCode": 1 if "exit code" in event.text else 0}
            breaker.record_result(AGENT, event.call_id, event.text, facts)
    return verdicts


def _replayed(events: list[Event], config: dict[str, object]) -> list[str]:
    return [call.verdict for call in replay_events(events, load_config(config))]


def test_a_first_step_with_its_prompt_is_one_turn_live_and_in_the_replay() -> None:
    events = _steps((True, [READ, READ]), (False, [READ]), (False, [READ]))
    assert _live(events, {}) == ["allowed", "allowed", "allowed", "denied"]
    assert _replayed(events, {}) == _live(events, {})


def test_a_later_human_message_starts_one_turn_live_and_in_the_replay() -> None:
    events = _steps((True, [NOTES]), (True, [LOOP, NOTES, LOOP, NOTES]), (False, [LOOP]))
    assert _live(events, {})[-1] == "allowed"
    assert _replayed(events, {}) == _live(events, {})
