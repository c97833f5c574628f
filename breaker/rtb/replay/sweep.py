"""Tuning on evidence: the same replay over a grid of windows and caps, scored against labels.

A setting is good when it stops every real loop early and never stops real work. With a labels
file (session id → ``loop`` or ``ok``), each setting is scored by the loops it catches and the
``ok`` sessions it touches; the best settings catch the most loops with no false positive, ties
going to the earliest mean catch.

Pure: sessions, labels and a base configuration in, scores out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from breaker.core.config import ConfigError, load_config
from breaker.rtb.read.sessions import Session
from breaker.rtb.replay.replayer import SessionReplay, replay_session

Label = Literal["loop", "ok"]
LABELS: tuple[Label, ...] = ("loop", "ok")
#: The precise, resource-scoped kinds one ``--cap`` value sets; the volume budgets stay as configured.
SWEPT_KINDS = ("exact", "cmd", "net", "sink")


@dataclass(frozen=True, slots=True)
class Setting:
    window: int
    cap: int


@dataclass(frozen=True, slots=True)
class SettingScore:
    """One setting's outcome over all sessions; the label fields are None without labels."""

    setting: Setting
    denials: int
    sessions_touched: int
    loops_caught: int | None = None
    loops: int | None = None
    false_positives: int | None = None
    mean_catch: float | None = None
    best: bool = False


#: What a line of a labels file holds, as a line it cannot read is named.
LABELS_LINE = "expected '<session id> TAB <loop|ok> [TAB <reason> [TAB <loop start>]]'"


def parse_labels(text: str) -> tuple[dict[str, Label], list[tuple[int, str]]]:
    """Read a labels file: ``<session id> TAB <loop|ok> [TAB <reason> [TAB <loop start>]]`` a line.

    ``#`` starts a comment line. Returns the labels and the (line, problem) pairs of the lines
    that could not be read.
    """
    labels: dict[str, Label] = {}
    problems: list[tuple[int, str]] = []
    for number, fields in _rows(text):
        if len(fields) < 2 or not fields[0]:
            spaced = " (spaces do not separate the columns)" if len(fields) == 1 else ""
            problems.append((number, f"{LABELS_LINE}{': this line has no TAB' if spaced else ''}{spaced}"))
            continue
        session_id, label = fields[0], fields[1]
        if label not in LABELS:
            problems.append((number, f"label must be loop or ok, got {label!r}"))
        elif len(fields) > 3 and _loop_start(fields) is None:
            problems.append((number, f"the loop start must be a call number >= 1, got {fields[3]!r}"))
        else:
            labels[session_id] = "loop" if label == "loop" else "ok"
    return labels, problems


def parse_loop_starts(text: str) -> dict[str, int]:
    """The optional fourth column of a labels file: the call at which a ``loop`` session's loop starts.

    Catches are counted from there (the loop's first call is its call 1), and a stop before it
    stopped real work. A loop without the column starts at the session's first call.
    """
    starts: dict[str, int] = {}
    for _, fields in _rows(text):
        start = _loop_start(fields)
        if start is not None and fields[1] == "loop":
            starts[fields[0]] = start
    return starts


def _rows(text: str) -> Iterator[tuple[int, list[str]]]:
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip() and not line.lstrip().startswith("#"):
            yield number, [field.strip() for field in line.split("\t")]


def _loop_start(fields: Sequence[str]) -> int | None:
    if len(fields) < 4 or not fields[3].isdecimal() or int(fields[3]) < 1:
        return None
    return int(fields[3])


def setting_config(base: Mapping[str, Any], setting: Setting) -> dict[str, Any]:
    """The raw config of one grid point: ``base`` with its window and the swept caps replaced."""
    limits = dict(base.get("limits") or {})
    limits.update({kind: setting.cap for kind in SWEPT_KINDS})
    return {**base, "window": setting.window, "limits": limits}


def sweep(
    sessions: Sequence[Session],
    grid: Sequence[Setting],
    base: Mapping[str, Any],
    labels: Mapping[str, Label] | None = None,
    on_replayed: Callable[[], None] = lambda: None,
    loop_starts: Mapping[str, int] | None = None,
) -> list[SettingScore]:
    """Score every setting of ``grid``; raises ConfigError naming the setting a cap or window breaks.

    ``loop_starts`` (see ``parse_loop_starts``) places each loop's first call; by default, call 1.
    """
    scores = []
    for setting in grid:
        try:
            config = load_config(setting_config(base, setting))
        except ConfigError as error:
            raise ConfigError(f"window {setting.window}, cap {setting.cap}: {error}") from None
        replays = []
        for session in sessions:
            replays.append(replay_session(session, config))
            on_replayed()
        scores.append(_score(setting, replays, labels, loop_starts or {}))
    return _mark_best(scores) if labels is not None else scores


def _score(
    setting: Setting,
    replays: Sequence[SessionReplay],
    labels: Mapping[str, Label] | None,
    loop_starts: Mapping[str, int],
) -> SettingScore:
    denials = sum(len(replay.stops) for replay in replays)
    touched = sum(1 for replay in replays if replay.stops)
    if labels is None:
        return SettingScore(setting, denials, touched)
    catches: list[int] = []
    loops = false_positives = 0
    for replay in replays:
        label = labels.get(replay.session_id)
        start = loop_starts.get(replay.session_id, 1) if label == "loop" else None
        if start is not None:
            loops += 1
            caught = next((stop.number for stop in replay.stops if stop.number >= start), None)
            if caught is not None:
                catches.append(caught - start + 1)
        if label is not None and any(start is None or stop.number < start for stop in replay.stops):
            false_positives += 1  # an ok session stopped, or a loop session stopped before its loop
    mean_catch = sum(catches) / len(catches) if catches else None
    return SettingScore(setting, denials, touched, len(catches), loops, false_positives, mean_catch)


def _mark_best(scores: list[SettingScore]) -> list[SettingScore]:
    """Mark the settings with the most loops caught and no false positive, earliest mean catch."""
    clean = [score for score in scores if score.false_positives == 0 and score.loops_caught]
    if not clean:
        return scores
    best_key = min(_rank(score) for score in clean)
    return [
        replace(score, best=True) if score in clean and _rank(score) == best_key else score
        for score in scores
    ]


def _rank(score: SettingScore) -> tuple[int, float]:
    return (-(score.loops_caught or 0), score.mean_catch if score.mean_catch is not None else float("inf"))
