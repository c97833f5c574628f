"""``agents.OPERATIONS`` is what ``Breaker`` does: which requests make an agent the most recent,
and which drop the verdicts kept ahead of the guard. The shim applies the same table from the
configure reply (node-shim/test/conformance.test.js drives both with one trace)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from breaker.core.config import load_config
from breaker.core.decision import Breaker
from breaker.core.history.agents import OPERATIONS
from breaker.core.reading.fingerprints import ToolCall

LS = ToolCall("bash", {"command": "ls"}, "kept")


def request(op: str, breaker: Breaker, agent: int, asks: bool = False) -> None:
    """The worker's handling of one request ``op`` about ``agent`` (breaker/worker.py)."""
    call = ToolCall(
        "bash", {"command": "curl http://localhost:1/"} if asks else {"command": "pwd"}, f"{op}-1"
    )
    actions: dict[str, Callable[[], object]] = {
        "preflight": lambda: breaker.precheck(agent, call),
        "guard": lambda: breaker.decide(agent, call),
        "commit": lambda: breaker.commit(agent, LS.call_id),
        "result": lambda: breaker.record_result(agent, "earlier", "text"),
        "human": lambda: breaker.human_message(agent),
        "step": lambda: breaker.new_step(agent),
    }
    actions[op]()


@pytest.mark.parametrize("op", sorted(OPERATIONS))
def test_recency_follows_the_table(op: str) -> None:
    breaker = Breaker(load_config({"maxAgents": 2}))
    breaker.decide(1, ToolCall("bash", {"command": "true"}, "earlier"))
    breaker.decide(2, ToolCall("bash", {"command": "true"}, "earlier"))
    breaker.precheck(1, LS)
    breaker.decide(2, ToolCall("bash", {"command": "id"}, "again"))  # agent 1 is the idlest
    request(op, breaker, 1)
    breaker.decide(3, ToolCall("bash", {"command": "true"}, "new"))  # the idlest goes
    kept = breaker.window_count(1, 'exact:bash:{"command":"true"}') > 0
    assert kept is OPERATIONS[op].recent


@pytest.mark.parametrize("op", sorted(OPERATIONS))
def test_kept_verdicts_are_dropped_as_the_table_says(op: str) -> None:
    config = load_config({"onLimit": "ask"})
    for asks in (False, True):
        breaker = Breaker(config)
        breaker.decide(1, ToolCall("bash", {"command": "curl http://localhost:1/"}, "earlier"))
        breaker.decide(1, ToolCall("bash", {"command": "curl http://localhost:1/"}, "earlier-2"))
        breaker.decide(1, ToolCall("bash", {"command": "curl http://localhost:1/"}, "earlier-3"))
        breaker.decide(1, ToolCall("bash", {"command": "curl http://localhost:1/"}, "earlier-4"))
        assert breaker.precheck(1, LS) is not None
        request(op, breaker, 1, asks=asks)
        dropped = op != "commit" and breaker.commit(1, LS.call_id) is None
        changes = OPERATIONS[op].changes
        expected = changes == "always" or (changes == "when it asks" and asks)
        if op == "commit":  # the commit of the kept call itself applies it: it is gone after
            assert breaker.commit(1, LS.call_id) is None
            continue
        assert dropped is expected, f"{op}, asks={asks}"
