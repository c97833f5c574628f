"""Decision quality on the labelled corpus: loops caught, how early, and false positives, per mode.

A mode is a config file under modes/ (seed: the defaults; reference: the reference plugin's
newest window 16 / cap 12; state-aware: the opt-in identity mode). Each row is exactly what
``rtb sweep tests/corpus/sessions --labels tests/corpus/labels.tsv --config <mode> --window W --cap C``
prints for that mode's own window and cap.

    python tests/corpus/measure.py             # the table (markdown), as docs/decision-quality.md quotes it
    python tests/corpus/measure.py --sessions  # plus every session's first stop per mode
    python tests/corpus/measure.py --write-expected   # refresh expected.tsv and real-sessions*-expected.tsv
                                                      # after a deliberate change (review the diff)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from sources import REAL_FOLDERS, Source, read_folder, real_sources

from breaker.core.config import load_config
from breaker.rtb.read.sessions import Session
from breaker.rtb.replay.replayer import replay_session
from breaker.rtb.replay.sweep import (
    SWEPT_KINDS,
    Label,
    Setting,
    SettingScore,
    parse_labels,
    parse_loop_starts,
    sweep,
)

HERE = Path(__file__).resolve().parent
MODES = ("seed", "reference", "defaults")
EXPECTED = HERE / "expected.tsv"
#: The modes whose first stop on every real session is kept (real-sessions-expected.tsv): the
#: defaults and the seed preset.
REAL_MODES = ("seed", "defaults")
#: Per folder of real runs (sources.REAL_FOLDERS, by name): the file its first stops are kept in.
REAL_EXPECTED = {name: HERE / f"{folder.name}-expected.tsv" for name, folder in REAL_FOLDERS}


def mode_config(mode: str) -> dict[str, Any]:
    raw: dict[str, Any] = json.loads((HERE / "modes" / f"{mode}.json").read_text())
    return raw


def mode_setting(mode: str) -> Setting:
    """The window and the one cap of the swept kinds a mode uses (they must agree)."""
    config = load_config(mode_config(mode))
    caps = {config.limit_for(kind, kind) for kind in SWEPT_KINDS}
    if len(caps) != 1 or None in caps:
        raise ValueError(f"mode {mode}: exact, cmd, net and sink must share one cap, got {caps}")
    return Setting(config.window, int(caps.pop() or 0))


def corpus() -> tuple[list[Session], dict[str, Label], dict[str, int]]:
    text = (HERE / "labels.tsv").read_text()
    labels, label_problems = parse_labels(text)
    if label_problems:
        raise ValueError(f"labels.tsv: {label_problems}")
    return read_folder(HERE / "sessions"), labels, parse_loop_starts(text)


def scores() -> dict[str, SettingScore]:
    sessions, labels, starts = corpus()
    return {
        mode: sweep(sessions, [mode_setting(mode)], mode_config(mode), labels, loop_starts=starts)[0]
        for mode in MODES
    }


def first_stops(
    sessions: list[Session] | None = None, modes: tuple[str, ...] = MODES
) -> dict[str, dict[str, int | None]]:
    """Every session's first stopped call (the agent's call number) per mode; None = never stopped.

    By default, the corpus's sessions in every mode.
    """
    sessions = corpus()[0] if sessions is None else sessions
    stops: dict[str, dict[str, int | None]] = {session.session_id: {} for session in sessions}
    for mode in modes:
        config = load_config(mode_config(mode))
        for session in sessions:
            first = replay_session(session, config).first_stop
            stops[session.session_id][mode] = None if first is None else first.number
    return stops


def expected_text() -> str:
    _, labels, starts = corpus()
    rows = ["# session\tlabel\tloop start\t" + "\t".join(f"first stop: {mode}" for mode in MODES)]
    for session_id, by_mode in sorted(first_stops().items()):
        cells = ["-" if by_mode[mode] is None else str(by_mode[mode]) for mode in MODES]
        start = str(starts.get(session_id, 1)) if labels[session_id] == "loop" else "-"
        rows.append("\t".join([session_id, labels[session_id], start, *cells]))
    return "\n".join(rows) + "\n"


def table(measured: dict[str, SettingScore]) -> str:
    lines = [
        "| mode | settings | loops caught | mean catch (call of the loop) | false positives |",
        "| --- | --- | --- | --- | --- |",
    ]
    for mode, score in measured.items():
        mean = "-" if score.mean_catch is None else f"{score.mean_catch:.1f}"
        lines.append(
            f"| {mode} | {settings_text(mode)} | {score.loops_caught}/{score.loops} | {mean} "
            f"| {score.false_positives} |"
        )
    return "\n".join(lines) + "\n"


def settings_text(mode: str) -> str:
    """The mode in words: window, the one cap, and the opt-in keys it sets."""
    config = load_config(mode_config(mode))
    setting = mode_setting(mode)
    words = [f"window {setting.window}, caps {setting.cap}"]
    if config.identity != "exact":
        words.append(f"identity: {config.identity}")
    if config.failLimit is not None:
        words.append(f"failLimit: {config.failLimit:g}")
    if config.sameResultLimit is not None:
        words.append(f"sameResultLimit: {config.sameResultLimit:g}")
    return ", ".join(words)


def real_expected_text(source: Source) -> str:
    """One line per real session and mode: the call that mode first stops, ``-`` for none."""
    folder = dict(REAL_FOLDERS)[source.name].name
    rows = [f"# session\tmode\tfirst stop (derived from ../shared/{folder}; measure.py --write-expected)"]
    for session_id, by_mode in sorted(first_stops(source.sessions, REAL_MODES).items()):
        for mode in REAL_MODES:
            stop = by_mode[mode]
            rows.append(f"{session_id}\t{mode}\t{'-' if stop is None else stop}")
    return "\n".join(rows) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", action="store_true", help="also list every session's first stop")
    parser.add_argument(
        "--write-expected", action="store_true", help="rewrite expected.tsv and real-sessions-expected.tsv"
    )
    args = parser.parse_args()
    if args.write_expected:
        EXPECTED.write_text(expected_text())
        present, absent = real_sources()
        for source in present:
            REAL_EXPECTED[source.name].write_text(real_expected_text(source))
        for name, folder in absent:
            print(f"{REAL_EXPECTED[name].name} kept: {folder} is not there")
    print(table(scores()), end="")
    if args.sessions:
        print()
        print(expected_text(), end="")


if __name__ == "__main__":
    main()
