"""``Breaker.history_from``: the call from which an agent's calls rebuild what outlives its window.

The shim's journal keeps the calls from it on, so a replacement worker rebuilds a failure streak
that denied retries kept alive after the failures that built it left the window."""

from __future__ import annotations

from breaker.core.config import load_config
from breaker.core.decision import Breaker
from breaker.core.judging.verdicts import Deny
from breaker.core.reading.fingerprints import ToolCall

FAILED = {"exitCode": 2}


def test_the_failure_that_began_the_oldest_live_streak_is_named_until_it_ends() -> None:
    breaker = Breaker(load_config({"failLimit": 3, "window": 4}))
    make = ToolCall("bash", {"command": "make all"})
    assert breaker.history_from(1) is None
    for number in range(3):
        breaker.decide(1, ToolCall(make.name, make.arguments, f"make-{number}"))
        breaker.record_result(1, f"make-{number}", "Error 2", FAILED)
    assert breaker.history_from(1) == "make-0"
    # Denied retries between reads keep the build's key in the window: the streak, and the
    # need for its first failure, live on after it left the window.
    for number in range(3, 9):
        assert isinstance(breaker.decide(1, ToolCall(make.name, make.arguments, f"make-{number}")), Deny)
        breaker.decide(1, ToolCall("read", {"path": f"log-{number}"}, f"read-{number}"))
    assert breaker.history_from(1) == "make-0"
    breaker.human_message(1)
    assert breaker.history_from(1) is None
