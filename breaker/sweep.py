"""Tuning on evidence: the same replay over a grid of windows and caps, scored against labels.

A setting is good when it stops every real loop early and never stops real work. With a labels
file (session id → ``loop`` or ``ok``), each setting is scored by the loops it catches and the
``ok`` sessions it touches; the best settings catch the most loops with no false positive, ties
going to the earliest mean catch.

Pure: sessions, labels and a base configuration in, scores out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from breaker.config import ConfigError, load_config
from breaker.replay import SessionReplay, replay_session
from breaker.sessions import Session

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


def parse_labels(text: str) -> tuple[dict[str, Label], list[tuple[int, str]]]:
    """Read a labels file: ``<session id> TAB <loop|ok> [TAB <reason>]`` a line, ``#`` comments.

    Returns the labels and the (line, problem) pairs of the lines that could not be read.
    """
    labels: dict[str, Label] = {}
    problems: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [field.strip() for field in line.split("\t")]
        if len(fields) < 2 or not fields[0]:
            problems.append((number, "expected '<session id> TAB <loop|ok> [TAB <reason>]'"))
            continue
        session_id, label = fields[0], fields[1]
        if label == "loop":
            labels[session_id] = "loop"
        elif label == "ok":
            labels[session_id] = "ok"
        else:
            problems.append((number, f"label must be loop or ok, got {label!r}"))
    return labels, problems


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
) -> list[SettingScore]:
    """Score every setting of ``grid``; raises ConfigError naming the setting a cap or window breaks."""
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
        scores.append(_score(setting, replays, labels))
    return _mark_best(scores) if labels is not None else scores


def _score(
    setting: Setting, replays: Sequence[SessionReplay], labels: Mapping[str, Label] | None
) -> SettingScore:
    denials = sum(len(replay.stops) for replay in replays)
    touched = sum(1 for replay in replays if replay.stops)
    if labels is None:
        return SettingScore(setting, denials, touched)
    catches = [
        replay.first_stop.number
        for replay in replays
        if labels.get(replay.session_id) == "loop" and replay.first_stop is not None
    ]
    loops = sum(1 for replay in replays if labels.get(replay.session_id) == "loop")
    false_positives = sum(1 for replay in replays if labels.get(replay.session_id) == "ok" and replay.stops)
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
