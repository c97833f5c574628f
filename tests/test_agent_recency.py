"""One agent-recency rule for the live worker and ``rtb replay`` (issue 32, finding 8).

Live, dsh runs several agents at once: between one call's pre-execute and its guard, other agents'
calls begin. The worker orders its agents by the first request about each call and forgets the
least recently active past ``maxAgents``, whatever its calls await (``agents.OPERATIONS``,
``Agents``); ``rtb replay`` takes a session's agents in the order dsh logged their events. So
one trace, sent to the worker as the shim sends it and replayed from its log, gets the same
verdicts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import msgpack  # type: ignore[import-untyped]

from breaker.core.config import load_config
from breaker.core.decision import Breaker
from breaker.core.judging.verdicts import Deny
from breaker.core.reading.fingerprints import ToolCall
from breaker.protocol import parse_request
from breaker.rtb.inputs import load_sessions
from breaker.rtb.read.sessions import session_sources
from breaker.rtb.replay.replayer import replay_session
from breaker.worker import RequestHandler
from tests.rtb_logs import Log

CONFIG: dict[str, Any] = {"maxAgents": 2}
START = 1_796_000_000_000
#: One step of a trace: what happens (a call begins: its pre-execute; its guard; its result), to
#: which agent's which call (``n``: the agent's n-th, each a ``cat`` of the file ``command``).
Step = tuple[Literal["call", "guard", "result"], str, int, str]


def _finding_trace() -> list[Step]:
    """Agent a repeats one call four times; b runs one call; a's fifth begins; b runs another
    whole call; c's first call begins before a's fifth reaches its guard."""
    trace: list[Step] = []
    for n in range(1, 5):
        trace += [("call", "a", n, "loop.txt"), ("guard", "a", n, "loop.txt"), ("result", "a", n, "loop.txt")]
    trace += [("call", "b", 1, "b.txt"), ("guard", "b", 1, "b.txt"), ("result", "b", 1, "b.txt")]
    trace += [("call", "a", 5, "loop.txt")]
    trace += [("call", "b", 2, "b2.txt"), ("guard", "b", 2, "b2.txt"), ("result", "b", 2, "b2.txt")]
    trace += [("call", "c", 1, "c.txt"), ("guard", "a", 5, "loop.txt"), ("guard", "c", 1, "c.txt")]
    trace += [("result", "a", 5, "loop.txt"), ("result", "c", 1, "c.txt")]
    return trace


def _session(agent: str) -> str:
    return f"session-{agent * 8}-0000-4000-8000-000000000001"


def _call_id(agent: str, n: int) -> str:
    return f"{_session(agent)}-c{n}"  # as tests.rtb_logs.Log names its calls


def _arguments(command: str) -> dict[str, str]:
    return {"command": f"cat {command}", "description": "read"}


def live(trace: list[Step]) -> dict[str, str]:
    """The trace as the shim sends it to the worker: a preflight at each call's pre-execute, a
    guard, a result. Each call's verdict, by call id."""
    handler = RequestHandler()
    frames = 0

    def send(message: dict[str, Any]) -> dict[str, Any]:
        nonlocal frames
        frames += 1
        reply = handler.handle(parse_request(msgpack.packb({"id": frames, **message})))
        assert reply["ok"], reply
        return dict(reply)

    send({"op": "configure", "config": CONFIG})
    agents = {"a": 1, "b": 2, "c": 3}
    verdicts: dict[str, str] = {}
    for kind, agent, n, command in trace:
        call_id = _call_id(agent, n)
        call = {"agent": agents[agent], "call": call_id, "name": "bash", "args": _arguments(command)}
        if kind == "call":
            send({"op": "preflight", **call})
        elif kind == "guard":
            reply = send({"op": "guard", **call})
            verdicts[call_id] = "denied" if isinstance(reply.get("deny"), str) else "allowed"
        else:
            text = "REPEAT_TOOL_BLOCKED" if verdicts[call_id] == "denied" else "ok"
            send({"op": "result", "agent": agents[agent], "call": call_id, "text": text})
    return verdicts


def replayed(trace: list[Step], folder: Path) -> dict[str, str]:
    """The trace as dsh logs it (a root session and two subagents, each event at its time),
    replayed by ``rtb replay``. Each call's verdict, by call id."""
    logs = {
        agent: Log(
            _session(agent), started_ms=START, cwd="/work", parent=None if agent == "a" else _session("a")
        )
        for agent in "abc"
    }
    pending: dict[tuple[str, int], str] = {}
    for tick, (kind, agent, n, command) in enumerate(trace):
        log = logs[agent]
        log.time = START + 1000 * tick - 50  # the next event is logged at this tick
        if kind == "call":
            log.lines.append(
                {
                    "type": "tool/call",
                    "seq": len(log.lines) - 1,
                    "time": START + 1000 * tick,
                    "data": {"callId": _call_id(agent, n), "name": "bash", "arguments": _json(command)},
                }
            )
            pending[(agent, n)] = command
        elif kind == "result":
            part = {"type": "tool-result", "toolCallId": _call_id(agent, n), "isError": False}
            part["content"] = [{"type": "text", "text": "ok"}]
            log.lines.append(
                {
                    "type": "tool/result",
                    "seq": len(log.lines) - 1,
                    "time": START + 1000 * tick,
                    "data": {"message": {"content": [part]}},
                }
            )
    for log in logs.values():
        log.write(folder)
    sessions, problems = load_sessions([folder])
    assert problems == [] and len(sessions) == 1
    replay = replay_session(sessions[0], load_config(CONFIG))
    return {call.call_id: call.verdict for call in replay.calls}


def _json(command: str) -> str:
    import json

    return json.dumps(_arguments(command))


def test_a_trace_gets_the_same_verdicts_from_the_worker_and_from_its_replayed_log(tmp_path: Path) -> None:
    trace = _finding_trace()
    from_worker = live(trace)
    from_log = replayed(trace, tmp_path / "logs")
    assert from_worker == from_log
    assert from_worker[_call_id("a", 5)] == "denied", "a's fifth identical call is stopped on both paths"


def test_the_idlest_agent_is_forgotten_for_a_new_one_though_its_call_awaits_its_result() -> None:
    """Its call prechecked keeps its verdict; its result, of an agent forgotten, is not recorded
    and makes no agent."""
    breaker = Breaker(load_config({"maxAgents": 2, "limits": {"exact": 3}}))
    loop = ToolCall("bash", {"command": "cat loop.txt"}, "")
    for n in range(2):
        breaker.decide("a", ToolCall("bash", loop.arguments, f"a{n}"))
        breaker.record_result("a", f"a{n}", "ok")
    assert isinstance(breaker.precheck("a", ToolCall("bash", loop.arguments, "a2")), Deny)
    breaker.decide("b", ToolCall("bash", {"command": "ls"}, "b0"))
    breaker.record_result("b", "b0", "ok")  # b is now the most recent, and awaits nothing
    breaker.precheck("c", ToolCall("bash", {"command": "pwd"}, "c0"))  # one agent must go: a
    assert isinstance(breaker.decide("a", ToolCall("bash", loop.arguments, "a2")), Deny)
    assert breaker.record_result("a", "a2", "REPEAT_TOOL_BLOCKED") == ()
    assert breaker.window_count("b", 'exact:bash:{"command":"ls"}') == 1, "b was kept"
    assert breaker.window_count("a", 'exact:bash:{"command":"cat loop.txt"}') == 0, "a was forgotten"
    assert breaker.stats()["agents"] == 2


def test_which_agent_is_forgotten_does_not_depend_on_when_a_result_came() -> None:
    """dsh logs a result a few microtasks after the shim sends it: another agent's call can come
    between them on one side and not on the other, and both must forget the same agent."""
    for result_first in (True, False):
        breaker = Breaker(load_config({"maxAgents": 2}))
        breaker.decide("a", ToolCall("bash", {"command": "true"}, "a0"))
        breaker.decide("b", ToolCall("bash", {"command": "true"}, "b0"))
        if result_first:
            breaker.record_result("a", "a0", "ok")
        breaker.precheck("c", ToolCall("bash", {"command": "ls"}, "c0"))
        if not result_first:
            assert breaker.record_result("a", "a0", "ok") == ()
        true = 'exact:bash:{"command":"true"}'
        forgotten = [agent for agent in "ab" if breaker.window_count(agent, true) == 0]
        assert forgotten == ["a"], f"result first: {result_first}"


def test_when_every_agent_awaits_a_result_the_idlest_goes_all_the_same() -> None:
    breaker = Breaker(load_config({"maxAgents": 2}))
    breaker.precheck("a", ToolCall("bash", {"command": "ls"}, "a0"))
    breaker.precheck("b", ToolCall("bash", {"command": "ls"}, "b0"))
    breaker.precheck("c", ToolCall("bash", {"command": "ls"}, "c0"))
    assert breaker.stats()["agents"] == 2
    assert breaker.window_count("a", 'exact:bash:{"command":"ls"}') == 0, "a, the idlest, went"


def test_a_call_prechecked_before_its_agent_was_dropped_keeps_its_verdict_and_makes_no_agent() -> None:
    """As ``rtb replay`` has it: the call was decided where dsh logged it, then its agent dropped."""
    for guard in ("commit", "decide"):
        breaker = Breaker(load_config({"maxAgents": 2, "limits": {"exact": 2}}))
        for number in range(2):
            breaker.decide("a", ToolCall("bash", {"command": "ls"}, f"a{number}"))
        third = ToolCall("bash", {"command": "ls"}, "a2")
        assert isinstance(breaker.precheck("a", third), Deny)
        breaker.precheck("b", ToolCall("bash", {"command": "ls"}, "b0"))
        breaker.precheck("c", ToolCall("bash", {"command": "ls"}, "c0"))  # a, the idlest, goes
        verdict = breaker.commit("a", "a2") if guard == "commit" else breaker.decide("a", third)
        assert isinstance(verdict, Deny), guard
        assert breaker.stats()["agents"] == 2
        assert breaker.window_count("a", 'exact:bash:{"command":"ls"}') == 0


def test_a_guard_after_its_preflight_leaves_the_order_alone_and_one_without_moves_its_agent() -> None:
    def forgotten(guard_first: bool) -> bool:
        breaker = Breaker(load_config({"maxAgents": 2}))
        breaker.decide("a", ToolCall("bash", {"command": "true"}, "a-first"))
        breaker.record_result("a", "a-first", "ok")
        breaker.precheck("a", ToolCall("bash", {"command": "ls"}, "a0"))
        breaker.decide("b", ToolCall("bash", {"command": "ls"}, "b0"))
        if guard_first:  # a call that went through on a pass: its guard is its first request
            breaker.decide("a", ToolCall("bash", {"command": "pwd"}, "a1"))
        else:
            breaker.decide("a", ToolCall("bash", {"command": "ls"}, "a0"))
        for agent, call in (("a", "a0"), ("a", "a1"), ("b", "b0")):
            breaker.record_result(agent, call, "ok")
        breaker.decide("c", ToolCall("bash", {"command": "ls"}, "c0"))
        return breaker.window_count("a", 'exact:bash:{"command":"true"}') == 0

    assert forgotten(guard_first=False), "a's guard after its preflight did not make it the most recent"
    assert not forgotten(guard_first=True)


def test_replay_interleaves_a_sessions_agents_by_when_each_event_was_logged(tmp_path: Path) -> None:
    root = Log(_session("a"), started_ms=START, cwd="/work")
    helper = Log(_session("b"), started_ms=START + 75, cwd="/work", parent=_session("a"))
    for _ in range(2):
        root.call("bash", _arguments("a.txt"), "ok")
        helper.call("bash", _arguments("b.txt"), "ok")
    root.write(tmp_path)
    helper.write(tmp_path)
    expected = [  # a's events every 50 ms from +50, b's from +125
        ("a", "CallEvent"),
        ("a", "ResultEvent"),
        ("b", "CallEvent"),
        ("a", "CallEvent"),
        ("b", "ResultEvent"),
        ("a", "ResultEvent"),
        ("b", "CallEvent"),
        ("b", "ResultEvent"),
    ]
    sessions, _ = load_sessions([tmp_path])
    assert [(event.agent[8], type(event).__name__) for event in sessions[0].events] == expected
    (source,) = session_sources(sorted(tmp_path.rglob("session.jsonl")))
    assert [(event.agent[8], type(event).__name__) for event in source.stream()] == expected
    assert source.problems == [] and source.about.cwd == "/work"


def test_an_agent_idle_between_its_calls_is_forgotten_in_replay_as_it_was_live(tmp_path: Path) -> None:
    """With maxAgents 2, a's repeats are split by b's and c's calls: live, c's first call made the
    worker forget a (idle, awaiting nothing), so a's later repeats start a fresh window; its
    replay, reading the three logs, must forget a at the same point."""
    trace: list[Step] = []
    for n in range(1, 4):
        trace += [("call", "a", n, "loop.txt"), ("guard", "a", n, "loop.txt"), ("result", "a", n, "loop.txt")]
    for agent in "bc":
        trace += [("call", agent, 1, "x.txt"), ("guard", agent, 1, "x.txt"), ("result", agent, 1, "x.txt")]
    for n in range(4, 7):
        trace += [("call", "a", n, "loop.txt"), ("guard", "a", n, "loop.txt"), ("result", "a", n, "loop.txt")]
    from_worker = live(trace)
    assert from_worker[_call_id("a", 5)] == "allowed", "a was forgotten: its 5th repeat is its 2nd"
    assert replayed(trace, tmp_path / "logs") == from_worker
