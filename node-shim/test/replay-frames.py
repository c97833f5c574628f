"""The pure core's verdicts for the frames a shim sent, in the order it sent them (stdin: JSON
``[config, frames]``; stdout: JSON ``{"agent:call": "allow" | "deny"}``).

Every frame that commits a call (a ``guard``, a guard event, a ``commit``) is decided there with
``Breaker.decide``, whatever the worker kept ahead: the verdict the core gives the call at the
position the shim gave it. A ``preflight`` is prechecked (it makes its agent the most recent, as
in the worker), results, model turns (``step``), human turns and forgotten agents are applied as
they come.
"""

from __future__ import annotations

import json
import sys

from breaker.core.config import load_config
from breaker.core.decision import Breaker
from breaker.core.judging.verdicts import Deny
from breaker.core.reading.fingerprints import ToolCall


def main() -> None:
    config, frames = json.load(sys.stdin)
    breaker = Breaker(load_config(config))
    calls: dict[tuple[int, str], ToolCall] = {}
    verdicts: dict[str, str] = {}
    for frame in frames:
        op, agent = frame["op"], frame.get("agent")
        if op in ("guard", "preflight"):
            call = ToolCall(frame["name"], frame["args"], frame["call"])
            calls[(agent, call.call_id)] = call
            if op == "preflight":
                breaker.precheck(agent, call)
                continue
        if op in ("guard", "commit"):
            verdict = breaker.decide(agent, calls[(agent, frame["call"])])
            verdicts[f"{agent}:{frame['call']}"] = "deny" if isinstance(verdict, Deny) else "allow"
        elif op == "result":
            breaker.record_result(agent, frame["call"], frame["text"], frame.get("outcome"))
        elif op == "human":
            breaker.human_message(agent)
        elif op == "step":
            breaker.new_step(agent)
        elif op == "forget":
            breaker.forget(agent)
    json.dump(verdicts, sys.stdout)


if __name__ == "__main__":
    main()
