"""What a replay reads from a session log: human turns, tool calls, their results and approvals;
what a log says about its session; a log, a session of logs, a problem reading one, and input
rtb cannot work with at all."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from breaker.core.reading.fingerprints import ToolCall

# The events are plain (not frozen) dataclasses: a long log makes millions of them, and a frozen
# one costs twice as much to make. Nothing changes one once it is read.


@dataclass(slots=True)
class HumanTurn:
    """A message the human typed: it clears the agent's window."""

    agent: str
    line: int
    time: float | None = None  # when dsh logged it, in ms since the epoch (every event's alike)


@dataclass(slots=True)
class StepStart:
    """The agent's model began a new turn (dsh's ``step/start``): the calls after it were sent
    together, after every answer before them."""

    agent: str
    line: int
    time: float | None = None


@dataclass(slots=True)
class CallEvent:
    """The model asked for a tool call (``time``: when dsh logged it, in ms since the epoch)."""

    agent: str
    call: ToolCall
    line: int
    time: float | None = None


@dataclass(slots=True)
class ResultEvent:
    """What the model was sent back for one call (the text it read, and dsh's error flag)."""

    agent: str
    call_id: str
    text: str
    is_error: bool
    line: int
    error_code: str = ""
    time: float | None = None


@dataclass(slots=True)
class ApprovalEvent:
    """The operator's answer to an approval request for one call."""

    agent: str
    call_id: str
    approved: bool
    line: int
    time: float | None = None


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
    """A root session and its subagents' logs: the events of every agent, interleaved as dsh logged
    them (``sessions.interleaved``); ``about`` is the root log's."""

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


class UsageError(Exception):
    """A command line or input file rtb cannot work with at all."""
