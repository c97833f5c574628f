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

import heapq
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from breaker.rtb.read.events import (
    NOTHING_KNOWN as NOTHING_KNOWN,
)
from breaker.rtb.read.events import (
    About as About,
)
from breaker.rtb.read.events import (
    ApprovalEvent as ApprovalEvent,
)
from breaker.rtb.read.events import (
    CallEvent as CallEvent,
)
from breaker.rtb.read.events import (
    Event as Event,
)
from breaker.rtb.read.events import (
    HumanTurn as HumanTurn,
)
from breaker.rtb.read.events import (
    ReadProblem as ReadProblem,
)
from breaker.rtb.read.events import (
    ResultEvent as ResultEvent,
)
from breaker.rtb.read.events import (
    Session as Session,
)
from breaker.rtb.read.events import (
    SessionLog as SessionLog,
)
from breaker.rtb.read.events import (
    StepStart as StepStart,
)
from breaker.rtb.read.logreader import PROBLEMS_LISTED as PROBLEMS_LISTED
from breaker.rtb.read.logreader import LogReader
from breaker.rtb.read.logstream import log_lines

COMPRESSED_SUFFIX = ".jsonl.zstd"
PLAIN_SUFFIX = ".jsonl"
#: The file name dsh gives every session log; the session's id is then its folder's name.
DSH_LOG_NAMES = ("session" + COMPRESSED_SUFFIX, "session" + PLAIN_SUFFIX)
#: The lines a replay must see before the calls they decide: a call dsh never dispatched, and the
#: answers to approval asks (both come after their call in the log).
_LOOKAHEAD_MARKS = (b"ABORTED_BEFORE_DISPATCH", b"approval/")


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
        elif path.exists():
            why = (
                "not a file or folder (a pipe or a device): rtb reads a log twice, so save it to a file first"
            )
            problems.append(ReadProblem(path, None, why))
        else:
            problems.append(ReadProblem(path, None, "no such file or folder"))
    return found, problems


def read_session(path: Path) -> tuple[SessionLog, list[ReadProblem]]:
    """Read one log file; unreadable lines come back as problems (only MissingZstandard raises)."""
    reader = LogReader(path, session_id_for(path))
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
    reader = LogReader(path, session_id_for(path))
    for number, raw in enumerate(lines, start=1):
        reader.read_line(number, raw)
    return reader.log(), reader.all_problems()


def group_sessions(logs: Sequence[SessionLog]) -> list[Session]:
    """Fold every subagent's log into its root session's; a child whose parent is absent stands alone."""
    sessions = []
    for root, family in _families(logs, lambda log: log.agent, lambda log: log.parent):
        sessions.append(
            Session(
                root.session_id,
                root.path,
                tuple(log.agent for log in family),
                tuple(interleaved([log.events for log in family])),
                root.about,
            )
        )
    return sessions


@dataclass(frozen=True, slots=True)
class LogHeader:
    """What a log's header says: the agent it is, its parent's, and the file."""

    path: Path
    session_id: str
    agent: str
    parent: str | None


@dataclass
class SessionSource:
    """A root session's logs, the root's first, to be read one event at a time (``stream``):
    what a report of any length needs in memory is this, not the events."""

    session_id: str
    path: Path
    headers: tuple[LogHeader, ...]
    #: What the root log says about the session, known once ``stream`` has read it.
    about: About = NOTHING_KNOWN
    problems: list[ReadProblem] = field(default_factory=list)

    @property
    def agents(self) -> tuple[str, ...]:
        return tuple(header.agent for header in self.headers)

    def stream(self, *, only_lookahead: bool = False) -> Iterator[Event]:
        """Every event of every log of the session, interleaved as dsh logged them
        (``interleaved``); unreadable lines go to ``problems``. ``only_lookahead``: only the
        events read from lines that may hold what a call's verdict needs before the call is
        decided (approvals, calls never dispatched), fast, log after log."""
        self.problems = []
        logs = [self._events(header, only_lookahead) for header in self.headers]
        yield from (event for log in logs for event in log) if only_lookahead else interleaved(logs)

    def _events(self, header: LogHeader, only_lookahead: bool) -> Iterator[Event]:
        reader = LogReader(header.path, header.session_id, keep=False)
        try:
            with header.path.open("rb") as stream:
                compressed = header.path.name.endswith(".zstd")
                marks = _LOOKAHEAD_MARKS if only_lookahead else ()
                for number, raw in log_lines(stream, compressed=compressed, marks=marks):
                    if only_lookahead and isinstance(raw, bytes) and number > 1 and not _ahead(raw):
                        continue
                    event = reader.read_line(number, raw)
                    if event is not None:
                        yield event
        except OSError as error:
            reader.problems.append(
                ReadProblem(header.path, None, f"cannot be read: {error.strerror or error}")
            )
        if header is self.headers[0]:
            self.about = About(reader.started, reader.cwd, reader.prompt)
        self.problems.extend(reader.all_problems())


def interleaved(logs: Sequence[Iterable[Event]]) -> Iterator[Event]:
    """The events of a session's logs (one per agent) in the order the live worker met them: each
    log's in its own order, the logs' merged by when dsh logged each event, so that which agent is
    forgotten past ``maxAgents`` replays as it happened (``agents.OPERATIONS``). An event without a
    time, or logged before one above it, takes the time before it; ties keep the logs' order, and
    logs without times are read log after log. One event of each log is held at a time."""
    if len(logs) == 1:
        return iter(logs[0])
    timed = (_timed(index, log) for index, log in enumerate(logs))
    return (event for *_, event in heapq.merge(*timed))


def _timed(index: int, events: Iterable[Event]) -> Iterator[tuple[float, int, int, Event]]:
    latest = -math.inf
    for number, event in enumerate(events):
        if event.time is not None and event.time > latest:
            latest = event.time
        yield latest, index, number, event


def session_sources(files: Iterable[Path]) -> list[SessionSource]:
    """The sessions the logs make, from each log's header alone (its first line)."""
    headers = [_header(path) for path in files]
    return [
        SessionSource(root.session_id, root.path, tuple(family))
        for root, family in _families(headers, lambda h: h.agent, lambda h: h.parent)
    ]


def _header(path: Path) -> LogHeader:
    """A log's header, read from its first line that is not blank (no parent when it has none)."""
    reader = LogReader(path, session_id_for(path), keep=False)
    try:
        with path.open("rb") as stream:
            for number, raw in log_lines(stream, compressed=path.name.endswith(".zstd")):
                if not isinstance(raw, bytes) or raw.strip():
                    reader.read_line(number, raw)
                    break
    except OSError:
        pass  # said when the log is read
    return LogHeader(path, reader.session_id, reader.agent, reader.parent)


def _ahead(raw: bytes) -> bool:
    return any(mark in raw for mark in _LOOKAHEAD_MARKS)


_Log = TypeVar("_Log")


def _families(
    logs: Sequence[_Log], agent_of: Callable[[_Log], str], parent_of: Callable[[_Log], str | None]
) -> list[tuple[_Log, list[_Log]]]:
    """Each root log with its family (itself first, then its subagents' logs in their order)."""
    by_agent = {agent_of(log): log for log in logs}

    def root_of(log: _Log) -> _Log:
        seen = {agent_of(log)}
        parent = parent_of(log)
        while parent is not None and parent in by_agent and parent not in seen:
            log = by_agent[parent]
            seen.add(agent_of(log))
            parent = parent_of(log)
        return log

    members: dict[str, list[_Log]] = {}
    roots: list[_Log] = []
    for log in logs:
        root = root_of(log)
        if agent_of(root) not in members:
            members[agent_of(root)] = []
            roots.append(root)
        members[agent_of(root)].append(log)
    return [(root, sorted(members[agent_of(root)], key=lambda log: log is not root)) for root in roots]


def _is_log_name(name: str) -> bool:
    return name.endswith(COMPRESSED_SUFFIX) or name.endswith(PLAIN_SUFFIX)
