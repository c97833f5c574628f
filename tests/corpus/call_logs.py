"""Reading agent runs kept as one tool call a line, as sessions the replay takes.

Agent runs recorded by other harnesses (mini-swe-agent, SWE-agent, OpenHands, Claude Code) are
converted to the calls this breaker would see and kept one file per agent, one call a line::

    {"call": 1, "tool": "bash", "arguments": {"command": "..."}, "result": "...",
     "is_error": false, "human_before": false}

``result`` is rendered the way dsh renders it (a shell's last line ``[exit code: N]``), so the
replay reads the same facts from it as from a dsh log. Each file is one agent of its own; the
session's id is the file's stem. Other keys of a line are ignored.

A line that cannot be read raises ``CallLogError`` naming the file and line: these files are
measurement input, and a measurement over a silently shortened run would be wrong.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from breaker.core.reading.fingerprints import ToolCall
from breaker.rtb.read.sessions import (
    CallEvent,
    Event,
    HumanTurn,
    ResultEvent,
    Session,
    StepStart,
    session_id_for,
)


class CallLogError(ValueError):
    """A call log line that is not a call: ``path:line: reason``."""


def read_call_log(path: Path) -> Session:
    """One file of calls as a one-agent session, in call order."""
    agent = session_id_for(path)
    events: list[Event] = []
    step: object = None
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if line.strip():
                record = _record(line, path, number)
                read = _events(record, agent, number, path)
                if "step" not in record or record["step"] != step or record.get("human_before") is True:
                    step = record.get("step")
                    # a new model turn, after the human message that began it, if any
                    read.insert(1 if isinstance(read[0], HumanTurn) else 0, StepStart(agent, number))
                events.extend(read)
    return Session(agent, path, (agent,), tuple(events))


def read_call_logs(folder: Path) -> list[Session]:
    """Every ``*.jsonl`` below ``folder``, in sorted order of their paths."""
    return [read_call_log(path) for path in sorted(folder.rglob("*.jsonl"))]


def _record(line: str, path: Path, number: int) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise CallLogError(f"{path}:{number}: not JSON ({error.msg})") from None
    if not isinstance(record, dict):
        raise CallLogError(f"{path}:{number}: expected an object, got {type(record).__name__}")
    return record


def _events(record: dict[str, Any], agent: str, number: int, path: Path) -> list[Event]:
    tool, result = record.get("tool"), record.get("result")
    if not isinstance(tool, str) or not tool:
        raise CallLogError(f"{path}:{number}: 'tool' must be a tool name")
    if not isinstance(result, str):
        raise CallLogError(f"{path}:{number}: 'result' must be the text the agent read")
    call_id = f"call-{record.get('call', number)}"
    events: list[Event] = []
    if record.get("human_before") is True:
        events.append(HumanTurn(agent, number))
    events.append(CallEvent(agent, ToolCall(tool, record.get("arguments", {}), call_id), number))
    events.append(ResultEvent(agent, call_id, result, record.get("is_error") is True, number))
    return events
