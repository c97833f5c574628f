"""The worker's agent registry, frame by frame: the requests a shim sent (stdin: JSON ``[config,
frames]``) applied to a fresh ``Breaker`` as breaker/worker.py applies them; stdout: JSON, per
frame, the agents the core then holds, least recently active first."""

from __future__ import annotations

import json
import sys

from breaker.core.config import load_config
from breaker.core.decision import Breaker
from breaker.core.reading.fingerprints import ToolCall


def main() -> None:
    config, frames = json.load(sys.stdin)
    breaker = Breaker(load_config(config))
    orders: list[list[int]] = []
    for frame in frames:
        op, agent = frame["op"], frame.get("agent")
        if op == "preflight":
            breaker.precheck(agent, ToolCall(frame["name"], frame["args"], frame["call"]))
        elif op == "guard":
            breaker.decide(agent, ToolCall(frame["name"], frame["args"], frame["call"]))
        elif op == "commit":
            breaker.commit(agent, frame["call"])
        elif op == "result":
            breaker.record_result(agent, frame["call"], frame["text"], frame.get("outcome"))
        elif op == "human":
            breaker.human_message(agent)
        orders.append(list(breaker._agents._states))  # the registry's order: read for this test only
    json.dump(orders, sys.stdout)


if __name__ == "__main__":
    main()
