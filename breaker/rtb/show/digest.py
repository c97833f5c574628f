"""What a report keeps of a session once its calls have gone by, and where it keeps the rest.

A replay hands each call to the report as it is decided; the report keeps a ``Digest`` of the
session (its counts, its first stop, the agents that called) and writes what it will print of
each call to a ``Spool``, a temporary file, from which it is copied out when the report is put
together (sessions sorted by start, which is known only once each has been read). So a report of
a million calls holds a few numbers per session in memory, not the calls.
"""

from __future__ import annotations

import codecs
import io
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TextIO

from breaker.rtb.read.events import NOTHING_KNOWN, About
from breaker.rtb.replay.replayer import CallReplay, RecordedOutcome

#: Bytes copied out of a spool at a time.
_COPY_STEP = 1024 * 1024


@dataclass
class Digest:
    """One session as a report sums it up: the calls it was handed, counted."""

    session_id: str
    path: Path
    about: About = NOTHING_KNOWN
    calls: int = 0
    stops: int = 0
    #: The first stopped call's number, and the verdicts of the stops (denied, asked).
    first_stop: int | None = None
    stop_kinds: set[str] = field(default_factory=set)
    recorded: dict[RecordedOutcome, int] = field(default_factory=dict)
    #: Calls this configuration stops that the recorded run ran, or the other way round.
    differences: int = 0
    #: Calls whose verdict differs from the other replay's (compared replays only).
    differs_from_other: int = 0
    #: The agents whose calls the report was handed, in order; every agent of the session's logs.
    agents: list[str] = field(default_factory=list)
    members: tuple[str, ...] = ()

    def add(self, call: CallReplay, other: CallReplay | None = None) -> None:
        self.calls += 1
        recorded = call.recorded
        self.recorded[recorded] = self.recorded.get(recorded, 0) + 1
        if (not self.agents or self.agents[-1] != call.agent) and call.agent not in self.agents:
            self.agents.append(call.agent)
        stopped = call.stopped
        if stopped:
            self.stops += 1
            self.stop_kinds.add(call.verdict)
            if self.first_stop is None:
                self.first_stop = call.number
        if recorded in ("executed", "blocked", "approval-required") and stopped != (recorded != "executed"):
            self.differences += 1
        if other is not None and other.verdict != call.verdict:
            self.differs_from_other += 1

    @property
    def sort_key(self) -> tuple[bool, float, str]:
        """By start time (sessions whose log does not say last), then by id."""
        return (self.about.started is None, self.about.started or 0.0, self.session_id)


class Spool:
    """Text written as the calls go by and copied out later, a part (one session's) at a time."""

    def __init__(self) -> None:
        self._file: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115  # closed by close()
        self._parts: dict[str, tuple[int, int]] = {}
        self._start = 0

    def begin(self) -> None:
        self._start = self._file.tell()

    def write(self, text: str) -> None:
        self._file.write(text.encode("utf-8", "backslashreplace"))

    def end(self, key: str) -> None:
        self._parts[key] = (self._start, self._file.tell())

    def copy(self, key: str, out: TextIO) -> None:
        """Write the part ``key`` to ``out``."""
        for text in self.chunks(key):
            out.write(text)

    def chunks(self, key: str) -> Iterator[str]:
        """The text of the part ``key``, a bounded chunk at a time."""
        at, end = self._parts.get(key, (0, 0))
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        while at < end:
            self._file.seek(at)
            data = self._file.read(min(_COPY_STEP, end - at))
            self._file.seek(0, io.SEEK_END)  # writing goes on at the end
            at += len(data)
            yield decoder.decode(data, final=at >= end)

    def lines(self, key: str) -> Iterator[str]:
        """The part ``key`` a line at a time, each without its newline."""
        pending = ""
        for chunk in self.chunks(key):
            *whole, pending = (pending + chunk).split("\n")
            yield from whole
        if pending:
            yield pending

    def close(self) -> None:
        self._file.close()
