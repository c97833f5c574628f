"""The three sets of sessions decision quality is measured on, each with its labels.

* ``corpus``: the labelled trajectories written here (``sessions/``, ``labels.tsv``; build.py).
* ``evasions``: loops that never repeat a call verbatim back to back (``evasions/``; evasions.py).
* ``real sessions``: agent runs nobody here wrote, kept outside the project in
  ``../shared/real-sessions`` (relative to the repository root) and read from there at run time,
  never copied. Their ``labels.tsv`` marks loops with their first and last call; a session it
  does not name was not read call by call and counts as ordinary work.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from breaker.rtb.call_logs import read_call_logs
from breaker.rtb.sessions import Session, find_session_files, group_sessions, read_session
from breaker.rtb.sweep import Label, parse_labels, parse_loop_starts

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
REAL_SESSIONS = ROOT.parent / "shared" / "real-sessions"


@dataclass(frozen=True, slots=True)
class Labelled:
    """A session's label; a loop runs from call ``start`` to call ``end`` (None: to the end)."""

    label: Label
    start: int = 1
    end: int | None = None


@dataclass(frozen=True, slots=True)
class Source:
    """One set of sessions; a session without a label is ordinary work."""

    name: str
    sessions: list[Session]
    labels: dict[str, Labelled]

    def label_of(self, session_id: str) -> Labelled:
        return self.labels.get(session_id, Labelled("ok"))


def read_folder(folder: Path) -> list[Session]:
    """Every session log under ``folder``, subagents folded into their root; unreadable lines raise."""
    files, problems = find_session_files([folder])
    logs = []
    for file in files:
        log, file_problems = read_session(file)
        problems.extend(file_problems)
        logs.append(log)
    if problems:
        raise ValueError("; ".join(str(problem) for problem in problems))
    return group_sessions(logs)


def _written_here(name: str, folder: Path, labels_file: Path) -> Source:
    text = labels_file.read_text()
    labels, problems = parse_labels(text)
    if problems:
        raise ValueError(f"{labels_file}: {problems}")
    starts = parse_loop_starts(text)
    spans = {
        session: Labelled(label, starts.get(session, 1)) if label == "loop" else Labelled("ok")
        for session, label in labels.items()
    }
    return Source(name, read_folder(folder), spans)


def corpus() -> Source:
    return _written_here("corpus", HERE / "sessions", HERE / "labels.tsv")


def evasions() -> Source:
    return _written_here("evasions", HERE / "evasions", HERE / "evasions" / "labels.tsv")


def real_sessions(folder: Path = REAL_SESSIONS) -> Source | None:
    """The real agent runs, or None where the folder is absent (a checkout without ``shared/``)."""
    if not (folder / "labels.tsv").is_file():
        return None
    return Source("real sessions", read_call_logs(folder), parse_spans((folder / "labels.tsv").read_text()))


def parse_spans(text: str) -> dict[str, Labelled]:
    """``id TAB loop|ok TAB why TAB start TAB end`` a line (``-`` for an ok session's start and end)."""
    spans: dict[str, Labelled] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 5 or fields[1] not in ("loop", "ok"):
            raise ValueError(f"labels line {number}: expected 'id, loop|ok, why, start, end', got {line!r}")
        if fields[1] == "ok":
            spans[fields[0]] = Labelled("ok")
        elif fields[3].isdecimal() and fields[4].isdecimal():
            spans[fields[0]] = Labelled("loop", int(fields[3]), int(fields[4]))
        else:
            raise ValueError(f"labels line {number}: a loop needs its first and last call, got {line!r}")
    return spans
