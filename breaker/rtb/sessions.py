"""Reading dsh session logs, and hand-written trajectories in the same shape, into event sequences.

dsh writes a session as one JSON event a line, compressed as a series of zstd frames (one per
flushed batch) in ``session-<uuid>/session.jsonl.zstd``. A replay needs only three kinds of event
from it: human turns, tool calls and tool results; steps, plugin notices and the runtime-context
snapshots are skipped. The same reader takes plain ``.jsonl`` files, so a trajectory written by
hand (see ``tests/corpus/trajectories.py``) is read exactly like a recorded one.

A subagent is a session of its own (its own log, whose header names its ``parentSession``); a
forked one starts with ``seedLength`` events copied from its parent, which are the parent's work
and are skipped. ``group_sessions`` folds every child log into its root session, each log being
one agent, so a report covers a whole task and each agent keeps its own window.

A log is evidence, not input we control: a line that cannot be read becomes a ``ReadProblem``
naming the file and line, and the reading goes on with the next line and the next file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from breaker.core.reading.fingerprints import ToolCall
from breaker.rtb.jsontext import Unreadable, load_json
from breaker.rtb.logstream import BadLine, log_lines

COMPRESSED_SUFFIX = ".jsonl.zstd"
PLAIN_SUFFIX = ".jsonl"
#: The file name dsh gives every session log; the session's id is then its folder's name.
DSH_LOG_NAMES = ("session" + COMPRESSED_SUFFIX, "session" + PLAIN_SUFFIX)
#: The ``approval/decided`` outcome that lets the call run; every other one refuses it.
APPROVED = "allowed-once"
#: The unreadable lines of one file named one by one; past them they are only counted.
PROBLEMS_LISTED = 20


@dataclass(frozen=True, slots=True)
class HumanTurn:
    """A message the human typed: it clears the agent's window."""

    agent: str
    line: int


@dataclass(frozen=True, slots=True)
class StepStart:
    """The agent's model began a new turn (dsh's ``step/start``): the calls after it were sent
    together, after every answer before them."""

    agent: str
    line: int


@dataclass(frozen=True, slots=True)
class CallEvent:
    """The model asked for a tool call (``time``: when dsh logged it, in ms since the epoch)."""

    agent: str
    call: ToolCall
    line: int
    time: float | None = None


@dataclass(frozen=True, slots=True)
class ResultEvent:
    """What the model was sent back for one call (the text it read, and dsh's error flag)."""

    agent: str
    call_id: str
    text: str
    is_error: bool
    line: int
    error_code: str = ""


@dataclass(frozen=True, slots=True)
class ApprovalEvent:
    """The operator's answer to an approval request for one call."""

    agent: str
    call_id: str
    approved: bool
    line: int


Event = HumanTurn | StepStart | CallEvent | ResultEvent | ApprovalEvent


@dataclass(frozen=True, slots=True)
class About:
    """What a log says about its session besides its events: when it started (ms since the
    epoch: the header's ``createdAt``, else the first event's ``time``), in which working
    directory (the header's ``cwd``), and the first line the human typed. Each may be unknown."""

    started: float | None = None
    cwd: str | None = None
    prompt: str | None = None


NOTHING_KNOWN = About()


@dataclass(frozen=True, slots=True)
class SessionLog:
    """One log file: one agent's events, in the order dsh wrote them."""

    session_id: str
    path: Path
    agent: str
    parent: str | None
    events: tuple[Event, ...]
    about: About = NOTHING_KNOWN


@dataclass(frozen=True, slots=True)
class Session:
    """A root session and its subagents' logs: the events of every agent, log after log; ``about``
    is the root log's."""

    session_id: str
    path: Path
    agents: tuple[str, ...]
    events: tuple[Event, ...]
    about: About = NOTHING_KNOWN


@dataclass(frozen=True, slots=True)
class ReadProblem:
    """Something in a log that could not be read; ``line`` is None for the whole file."""

    path: Path
    line: int | None
    reason: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else str(self.path)
        return f"{where}: {self.reason}"


def session_id_for(path: Path) -> str:
    """The id labels and reports use: the ``session-<uuid>`` folder, or a plain file's stem."""
    if path.name in DSH_LOG_NAMES:
        return path.parent.name
    for suffix in (COMPRESSED_SUFFIX, PLAIN_SUFFIX):
        if path.name.endswith(suffix):
            return path.name[: -len(suffix)]
    return path.stem


def find_session_files(paths: Iterable[Path]) -> tuple[list[Path], list[ReadProblem]]:
    """Every log named by ``paths``; a folder is searched recursively, in sorted order."""
    found: list[Path] = []
    problems: list[ReadProblem] = []
    for path in paths:
        if path.is_dir():
            found.extend(
                sorted(
                    candidate
                    for candidate in path.rglob("*")
                    if candidate.is_file() and _is_log_name(candidate.name)
                )
            )
        elif path.is_file():
            found.append(path)
        else:
            problems.append(ReadProblem(path, None, "no such file or folder"))
    return found, problems


def read_session(path: Path) -> tuple[SessionLog, list[ReadProblem]]:
    """Read one log file; unreadable lines come back as problems (only MissingZstandard raises)."""
    reader = _LogReader(path)
    try:
        with path.open("rb") as stream:
            for number, raw in log_lines(stream, compressed=path.name.endswith(".zstd")):
                reader.read_line(number, raw)
    except OSError as error:
        reader.problems.append(ReadProblem(path, None, f"cannot be read: {error.strerror or error}"))
    return reader.log(), reader.all_problems()


def parse_log(lines: Iterable[bytes | str], *, path: Path) -> tuple[SessionLog, list[ReadProblem]]:
    """Turn one log's lines into the events a replay needs, collecting what cannot be read.

    The agent is the session id in the header line (``{"type": "session", "id": ...}``), or the
    id taken from the path when a hand-written file has no header.
    """
    reader = _LogReader(path)
    for number, raw in enumerate(lines, start=1):
        reader.read_line(number, raw)
    return reader.log(), reader.all_problems()


def group_sessions(logs: Sequence[SessionLog]) -> list[Session]:
    """Fold every subagent's log into its root session's; a child whose parent is absent stands alone."""
    by_agent = {log.agent: log for log in logs}

    def root_of(log: SessionLog) -> SessionLog:
        seen = {log.agent}
        while log.parent is not None and log.parent in by_agent and log.parent not in seen:
            log = by_agent[log.parent]
            seen.add(log.agent)
        return log

    members: dict[str, list[SessionLog]] = {}
    roots: list[SessionLog] = []
    for log in logs:
        root = root_of(log)
        if root.agent not in members:
            members[root.agent] = []
            roots.append(root)
        members[root.agent].append(log)
    sessions = []
    for root in roots:
        family = sorted(members[root.agent], key=lambda log: log is not root)
        sessions.append(
            Session(
                root.session_id,
                root.path,
                tuple(log.agent for log in family),
                tuple(event for log in family for event in log.events),
                root.about,
            )
        )
    return sessions


class _LogReader:
    """The state of reading one log: its header, the seed boundary and pending approval asks."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.session_id = session_id_for(path)
        self.agent = self.session_id
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

    def read_line(self, number: int, raw: bytes | str | BadLine) -> None:
        if isinstance(raw, BadLine):
            self._problem(number, raw.reason)
            return
        try:
            text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        except UnicodeDecodeError as error:
            self._problem(number, f"not UTF-8 text ({error.reason})")
            return
        if not text.strip():
            return
        try:
            record = load_json(text)
        except json.JSONDecodeError as error:
            self._problem(number, f"not a JSON event ({error.msg})")
            return
        except Unreadable as error:
            self._problem(number, f"an event {error}")
            return
        if not isinstance(record, dict):
            self._problem(number, "an event must be a JSON object")
            return
        if record.get("type") == "session":
            self._header(record)
            return
        self.time = _clock(record.get("time"))
        if self.started is None:
            self.started = self.time
        position = record.get("seq", self.position)
        self.position = (position if isinstance(position, int) else self.position) + 1
        if self.position <= self.seed_length:
            return  # inherited from the parent: the parent's log holds this work
        try:
            event = self._event(record, number)
        except _BadEvent as bad:
            self._problem(number, str(bad))
            return
        if event is not None:
            self.events.append(event)

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
        if not self.unlisted:
            return self.problems
        more = ReadProblem(self.path, None, f"{self.unlisted} more lines could not be read (not listed)")
        return [*self.problems, more]


class _BadEvent(ValueError):
    """An event of a kind the replay needs, missing a field it needs."""


def _is_log_name(name: str) -> bool:
    return name.endswith(COMPRESSED_SUFFIX) or name.endswith(PLAIN_SUFFIX)


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
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= _EARLIEST_CLOCK:
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
    call_id = _required_text(data, "callId", "tool/call")
    name = _required_text(data, "name", "tool/call")
    arguments = data.get("arguments", {})
    if isinstance(arguments, str):
        try:
            arguments = load_json(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as error:
            raise _BadEvent(f"tool/call {call_id}: arguments are not JSON ({error.msg})") from None
        except Unreadable as error:
            raise _BadEvent(f"tool/call {call_id}: arguments {error}") from None
    return CallEvent(agent, ToolCall(name=name, arguments=arguments, call_id=call_id), line, time)


def _result_event(data: object, agent: str, line: int) -> ResultEvent:
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


def _required_text(data: dict[str, Any], key: str, kind: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise _BadEvent(f"{kind} has no {key}")
    return value
