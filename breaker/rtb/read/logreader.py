"""One log's lines into the events a replay needs, collecting what cannot be read.

The agent is the session id in the header line (``{"type": "session", "id": ...}``), or the id
taken from the path when a hand-written file has no header. A forked subagent's first
``seedLength`` events are its parent's work and are skipped. A line that cannot be read becomes a
``ReadProblem`` naming the file and line (the first ``PROBLEMS_LISTED`` of a file; past them they
are counted), and the reading goes on with the next line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from breaker.core.reading.fingerprints import ToolCall
from breaker.rtb.read.events import (
    About,
    ApprovalEvent,
    CallEvent,
    Event,
    HumanTurn,
    ReadProblem,
    ResultEvent,
    SessionLog,
    StepStart,
)
from breaker.rtb.read.jsontext import Unreadable, load_json
from breaker.rtb.read.logstream import BadLine

#: The ``approval/decided`` outcome that lets the call run; every other one refuses it.
APPROVED = "allowed-once"
#: The unreadable lines of one file named one by one; past them they are only counted.
PROBLEMS_LISTED = 20


class LogReader:
    """The state of reading one log: its header, the seed boundary and pending approval asks."""

    def __init__(self, path: Path, session_id: str, *, keep: bool = True) -> None:
        self.path = path
        self.session_id = session_id
        self.agent = session_id
        #: Keep the events read in ``events`` (a whole log at once), or only hand them out.
        self.keep = keep
        self.parent: str | None = None
        self.seed_length = 0
        self.position = 0
        self.events: list[Event] = []
        self.problems: list[ReadProblem] = []
        self.unlisted = 0
        self.asked_calls: dict[str, str] = {}
        self.started: float | None = None
        self.cwd: str | None = None
        self.prompt: str | None = None
        self.time: float | None = None

    def log(self) -> SessionLog:
        about = About(self.started, self.cwd, self.prompt)
        return SessionLog(self.session_id, self.path, self.agent, self.parent, tuple(self.events), about)

    def read_line(self, number: int, raw: bytes | str | BadLine) -> Event | None:
        """The event on one line, if it is one a replay needs (kept too with ``keep``)."""
        if type(raw) is bytes:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                self._problem(number, f"not UTF-8 text ({error.reason})")
                return None
        elif isinstance(raw, BadLine):
            self._problem(number, raw.reason)
            return None
        else:
            text = str(raw)
        try:
            record = load_json(text)
        except json.JSONDecodeError as error:
            if text.strip():
                self._problem(number, f"not a JSON event ({error.msg})")
            return None
        except Unreadable as error:
            self._problem(number, f"an event {error}")
            return None
        if type(record) is not dict:
            self._problem(number, "an event must be a JSON object")
            return None
        kind = record.get("type")
        if kind == "session":
            self._header(record)
            return None
        self.time = _clock(record.get("time"))
        if self.started is None:
            self.started = self.time
        position = record.get("seq", self.position)
        self.position = (position if isinstance(position, int) else self.position) + 1
        if self.position <= self.seed_length:
            return None  # inherited from the parent: the parent's log holds this work
        try:
            if kind == "tool/call":  # the most common first
                event: Event | None = _call_event(record.get("data"), self.agent, number, self.time)
            elif kind == "tool/result":
                event = _result_event(record.get("data"), self.agent, number)
            else:
                event = self._event(record, number)
        except _BadEvent as bad:
            self._problem(number, str(bad))
            return None
        if event is None:
            return None
        event.time = self.time  # a call's is set already; a result's, a turn's... here
        if self.keep:
            self.events.append(event)
        return event

    def _header(self, record: dict[str, Any]) -> None:
        if isinstance(record.get("id"), str) and record["id"]:
            self.agent = record["id"]
        parent = record.get("parentSession")
        self.parent = parent if isinstance(parent, str) and parent else None
        seed_length = record.get("seedLength")
        self.seed_length = seed_length if isinstance(seed_length, int) and seed_length > 0 else 0
        created = _clock(record.get("createdAt"))
        if created is not None:
            self.started = created
        cwd = record.get("cwd")
        self.cwd = cwd if isinstance(cwd, str) and cwd else None

    def _event(self, record: dict[str, Any], line: int) -> Event | None:
        kind = record.get("type")
        data = record.get("data")
        if kind == "user/message":
            if _source_kind(data) != "user":
                return None
            if self.prompt is None and isinstance(data, dict):
                self.prompt = _first_line(data)
            return HumanTurn(self.agent, line)
        if kind == "step/start":
            return StepStart(self.agent, line)
        if kind == "tool/call":
            return _call_event(data, self.agent, line, self.time)
        if kind == "tool/result":
            return _result_event(data, self.agent, line)
        if kind == "approval/asked" and isinstance(data, dict):
            if isinstance(data.get("id"), str) and isinstance(data.get("callId"), str):
                self.asked_calls[data["id"]] = data["callId"]
            return None
        if kind == "approval/decided" and isinstance(data, dict):
            call_id = self.asked_calls.pop(str(data.get("id")), None)
            if call_id is None:
                return None
            return ApprovalEvent(self.agent, call_id, data.get("outcome") == APPROVED, line)
        return None

    def _problem(self, line: int, reason: str) -> None:
        if len(self.problems) < PROBLEMS_LISTED:
            self.problems.append(ReadProblem(self.path, line, reason))
        else:
            self.unlisted += 1

    def all_problems(self) -> list[ReadProblem]:
        """The problems met, and how many more lines could not be read when there were more."""
        return listed_problems(self.path, self.problems, self.unlisted)


def listed_problems(path: Path, problems: list[ReadProblem], unlisted: int) -> list[ReadProblem]:
    """A file's problems as they are named (the first ``PROBLEMS_LISTED``), and a last one saying
    how many more lines could not be read, when there were more."""
    if not unlisted:
        return problems
    return [*problems, ReadProblem(path, None, f"{unlisted} more lines could not be read (not listed)")]


class _BadEvent(ValueError):
    """An event of a kind the replay needs, missing a field it needs."""


def _source_kind(data: object) -> object:
    if not isinstance(data, dict):
        raise _BadEvent("user/message has no data object")
    message = data.get("message")
    source = data.get("source")
    if source is None and isinstance(message, dict):
        source = message.get("source")
    return source.get("kind") if isinstance(source, dict) else None


#: 2000-01-01 in ms: an earlier "time" is a counter a hand-written log used, not a clock reading.
_EARLIEST_CLOCK = 946_684_800_000


def _clock(value: object) -> float | None:
    """A ``time``/``createdAt`` field as ms since the epoch, if it is one."""
    if (type(value) is int or type(value) is float) and value >= _EARLIEST_CLOCK:  # not a bool
        return float(value)
    return None


def _first_line(data: dict[str, Any]) -> str | None:
    """The first non-blank line of a human message's text, if it has one."""
    message = data.get("message")
    parts = data.get("content")
    if parts is None and isinstance(message, dict):
        parts = message.get("content")
    for part in parts if isinstance(parts, list) else []:
        text = part.get("text") if isinstance(part, dict) else None
        if isinstance(text, str):
            for line in text.splitlines():
                if line.strip():
                    return line.strip()
    return None


def _call_event(data: object, agent: str, line: int, time: float | None = None) -> CallEvent:
    if not isinstance(data, dict):
        raise _BadEvent("tool/call has no data object")
    call_id = data.get("callId")
    name = data.get("name")
    if type(call_id) is not str or not call_id:
        raise _BadEvent("tool/call has no callId")
    if type(name) is not str or not name:
        raise _BadEvent("tool/call has no name")
    arguments = data.get("arguments", {})
    if type(arguments) is str:  # as dsh logs them: a JSON text
        try:
            arguments = load_json(arguments)
        except json.JSONDecodeError as error:
            if arguments.strip():
                raise _BadEvent(f"tool/call {call_id}: arguments are not JSON ({error.msg})") from None
            arguments = {}  # blank
        except Unreadable as error:
            raise _BadEvent(f"tool/call {call_id}: arguments {error}") from None
    return CallEvent(agent, ToolCall(name, arguments, call_id), line, time)


def _result_event(data: object, agent: str, line: int) -> ResultEvent:
    try:  # the shape dsh writes, read straight: one tool-result part with one text block
        part = data["message"]["content"][0]  # type: ignore[index]
        blocks = part["content"]
        call_id = part["toolCallId"]
        if (
            part["type"] == "tool-result"
            and type(call_id) is str
            and call_id
            and type(blocks) is list
            and len(blocks) == 1
            and blocks[0]["type"] == "text"
            and type(blocks[0]["text"]) is str
            and "error" not in data  # type: ignore[operator]
        ):
            return ResultEvent(agent, call_id, blocks[0]["text"], part.get("isError") is True, line)
    except (KeyError, TypeError, IndexError, AttributeError):
        pass  # any other shape: read with every check below
    if not isinstance(data, dict):
        raise _BadEvent("tool/result has no data object")
    message = data.get("message")
    parts = message.get("content") if isinstance(message, dict) else None
    if not isinstance(parts, list):
        raise _BadEvent("tool/result has no data.message.content list")
    result = next(
        (part for part in parts if isinstance(part, dict) and part.get("type") == "tool-result"), None
    )
    if result is None:
        raise _BadEvent("tool/result has no tool-result part")
    source = message.get("source") if isinstance(message, dict) else None
    call_id = result.get("toolCallId") or (source.get("callId") if isinstance(source, dict) else None)
    if not isinstance(call_id, str) or not call_id:
        raise _BadEvent("tool/result does not name its call (message.content[].toolCallId)")
    blocks = result.get("content")
    texts = [
        block["text"]
        for block in (blocks if isinstance(blocks, list) else [])
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
    ]
    error = data.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    return ResultEvent(agent, call_id, "\n".join(texts), result.get("isError") is True, line, str(code or ""))
