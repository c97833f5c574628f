"""Reading what a run replays: the session logs under the given paths and the labels file.

Unreadable files and lines are reported on stderr as they are met and the rest still runs (rtb
then exits 1); only a run with nothing to read (its one line says why: the paths not there, or no
log under them), or two logs claiming one session id, stops it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from breaker.rtb.read.events import UsageError
from breaker.rtb.read.logreader import PROBLEMS_LISTED, listed_problems
from breaker.rtb.read.sessions import (
    ReadProblem,
    Session,
    SessionLog,
    SessionSource,
    find_session_files,
    group_sessions,
    read_session,
    session_id_for,
    session_sources,
)
from breaker.rtb.replay.sweep import Label, parse_labels, parse_loop_starts
from breaker.rtb.show import shown
from breaker.rtb.show.tables import Progress


def load_sessions(paths: Iterable[Path]) -> tuple[list[Session], list[ReadProblem]]:
    """Read every log under ``paths``, reporting each unreadable file or line on stderr as it goes."""
    files, problems = _files_to_read(paths)
    logs: list[SessionLog] = []
    progress = Progress(len(files), sys.stderr)
    for file in files:
        log, file_problems = read_session(file)
        logs.append(log)
        for problem in file_problems:
            progress.clear()
            print(f"rtb: {problem}", file=sys.stderr)
        problems.extend(file_problems)
        progress.advance()
    progress.close()
    sessions = group_sessions(logs)
    _check_unique_ids(sessions)
    return sessions, problems


def replay_sources(
    paths: Iterable[Path], wanted: Sequence[str] = ()
) -> tuple[list[SessionSource], list[ReadProblem]]:
    """The sessions under ``paths`` to be read one at a time (``wanted``: only those whose id, or
    the start of it, is given), from each log's header; a path that is not there is said on stderr."""
    files, problems = _files_to_read(paths)
    sources = session_sources(files)
    _check_unique_ids(sources)
    if wanted:
        sources = [s for s in sources if any(shown.matches(s.session_id, want) for want in wanted)]
        if not sources:
            raise UsageError(f"no session matches --session {', '.join(wanted)}{_path_hint(wanted)}")
    return sources, problems


def _path_hint(wanted: Sequence[str]) -> str:
    """For a ``--session`` given a log's path: what it takes instead, and where the path goes."""
    path = next((Path(want) for want in wanted if "/" in want or want.endswith((".jsonl", ".zstd"))), None)
    if path is None:
        return ""
    return (
        f": --session takes a session's id or its start ({session_id_for(path)}); a log's path is given "
        "as SESSION, without --session"
    )


def _files_to_read(paths: Iterable[Path]) -> tuple[list[Path], list[ReadProblem]]:
    """The logs under ``paths``, each path that is not there said on stderr; with no log at all,
    the one error says why (the missing paths, else that none was found), and nothing else runs."""
    files, problems = find_session_files(paths)
    if not files:
        missing = "; ".join(str(problem) for problem in problems)
        raise UsageError(missing or "no session logs (*.jsonl, *.jsonl.zstd) found")
    for problem in problems:
        print(f"rtb: {problem}", file=sys.stderr)
    return files, problems


def _check_unique_ids(sessions: Sequence[Session | SessionSource]) -> None:
    seen: dict[str, Path] = {}
    for session in sessions:
        first = seen.get(session.session_id)
        if first is not None:
            raise UsageError(f"{first} and {session.path} share the session id {session.session_id!r}")
        seen[session.session_id] = session.path


def read_labels(path: Path) -> tuple[dict[str, Label], dict[str, int], list[ReadProblem]]:
    """The labels and loop starts in a labels file, and its lines that could not be read (each
    reported on stderr, not fatal: the exit status says so)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise UsageError(f"labels {path}: {error.strerror or error}") from None
    labels, unread = parse_labels(text)
    named = [ReadProblem(path, line, reason) for line, reason in unread[:PROBLEMS_LISTED]]
    problems = listed_problems(path, named, len(unread) - len(named))
    for problem in problems:
        print(f"rtb: {problem}", file=sys.stderr)
    return labels, parse_loop_starts(text), problems
