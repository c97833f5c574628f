"""The three sets of sessions decision quality is measured on, each with its labels.

* ``corpus``: the labelled trajectories written here (``sessions/``, ``labels.tsv``; build.py).
* ``evasions``: loops that never repeat a call verbatim back to back (``evasions/``; evasions.py).
* ``real sessions`` (and ``2``, ``3``, ``4``): agent runs nobody here wrote, kept outside the
  project in ``../shared/real-sessions``, ``-2``, ``-3`` and ``-4`` (relative to the
  repository root) and read from there at run time, never copied. Each ``labels.tsv`` marks loops
  with their first and last call and ordinary runs that were read (``ok``); a session it does not
  name was not read call by call and counts as ordinary work (``unlabelled``). In ``-4`` a loop's
  first call is the earliest call a good gate is justified in stopping, so a stop before it is a
  false stop there as a stop before the loop is everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from call_logs import read_call_logs

from breaker.rtb.read.sessions import Session, find_session_files, group_sessions, read_session
from breaker.rtb.replay.sweep import Label, parse_labels, parse_loop_starts

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SHARED = ROOT.parent / "shared"
REAL_SESSIONS = SHARED / "real-sessions"
#: Every folder of real runs: (the source's name, its folder). Each is read the same way.
REAL_FOLDERS = (
    ("real sessions", REAL_SESSIONS),
    ("real sessions 2", SHARED / "real-sessions-2"),
    ("real sessions 3", SHARED / "real-sessions-3"),
    ("real sessions 4", SHARED / "real-sessions-4"),
)


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
    #: Real runs (a folder outside the project): its ordinary runs are told apart as labelled
    #: (read and found ordinary) or unlabelled (not read).
    real: bool = False

    def label_of(self, session_id: str) -> Labelled:
        return self.labels.get(session_id, Labelled("ok"))

    def is_labelled(self, session_id: str) -> bool:
        return session_id in self.labels


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


def real_sessions(folder: Path = REAL_SESSIONS, name: str = "real sessions") -> Source | None:
    """The real agent runs, or None where the folder is absent (a checkout without ``shared/``)."""
    if not (folder / "labels.tsv").is_file():
        return None
    labels = parse_spans((folder / "labels.tsv").read_text())
    return Source(name, read_call_logs(folder), labels, real=True)


def real_sources() -> tuple[list[Source], list[tuple[str, Path]]]:
    """Every folder of ``REAL_FOLDERS`` that is there, read; and the (name, folder) of those absent."""
    present: list[Source] = []
    absent: list[tuple[str, Path]] = []
    for name, folder in REAL_FOLDERS:
        source = real_sessions(folder, name)
        if source is None:
            absent.append((name, folder))
        else:
            present.append(source)
    return present, absent


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
