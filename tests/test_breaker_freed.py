"""A breaker let go is freed at once, by reference counting: its state holds no reference cycle.

``rtb replay`` and the benchmarks make a fresh ``Breaker`` per session. A cycle through one (a
registry holding a bound method of the breaker) left every session's state to the cyclic
collector, whose pauses then fell on later calls of ``decide``: a slow call that is no call's own.
"""

from __future__ import annotations

import gc

from breaker.core.config import load_config
from breaker.core.decision import Breaker
from breaker.core.reading.fingerprints import ToolCall


def _session(breaker: Breaker) -> None:
    calls = [
        ("bash", {"command": "python3 fix.py"}, "patched 1 file"),
        ("read", {"file_path": "./src/app.py"}, "1: x = 1"),
        ("edit", {"file_path": "src/app.py", "old_string": "x = 1", "new_string": "x = 2"}, "ok"),
        ("change_folder", {"folder": "reports"}, '{"cwd": "reports"}'),
        ("bash", {"command": "pytest -q"}, "1 failed\n[exit code: 1]"),
    ]
    for round_ in range(4):
        for agent in ("a", "b", "c"):  # past maxAgents 2: an agent is dropped with a call prechecked
            for number, (tool, arguments, result) in enumerate(calls):
                call = ToolCall(tool, arguments, f"{agent}-{round_}-{number}")
                breaker.new_step(agent)
                breaker.precheck(agent, call)
                breaker.decide(agent, call)
                breaker.record_result(agent, call.call_id, result)


def test_a_breaker_let_go_leaves_nothing_to_the_cyclic_collector() -> None:
    config = load_config({"maxAgents": 2})
    gc.collect()
    gc.disable()
    try:
        breaker = Breaker(config)
        _session(breaker)
        del breaker
        assert gc.collect() == 0
    finally:
        gc.enable()
