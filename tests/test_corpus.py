"""The labelled corpus as a regression check: every trajectory's first stop per mode, and the targets.

tests/corpus/expected.tsv records, for each session, the call each mode first stops (``-``: never);
tests/corpus/real-sessions-expected.tsv and real-sessions-2-expected.tsv do the same for the real
agent runs in ../shared/real-sessions and ../shared/real-sessions-2, under the defaults and
``preset: seed`` (skipped with a message where shared/ is absent).
A change to the core that moves any of them fails here; if the move is deliberate, rerun
``python tests/corpus/measure.py --write-expected``, review the diff and say why in the commit.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

CORPUS = Path(__file__).resolve().parent / "corpus"


def _load(name: str) -> ModuleType:
    if str(CORPUS) not in sys.path:
        sys.path.insert(0, str(CORPUS))  # evasions.py builds on build.py, as it does when run as a script
    spec = importlib.util.spec_from_file_location(f"corpus_{name}", CORPUS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


build = _load("build")
measure = _load("measure")
evasions = _load("evasions")
sources = _load("sources")


def test_the_committed_corpus_is_what_build_py_writes() -> None:
    files = build.corpus_files()
    on_disk = {path for path in (CORPUS / "sessions").glob("*.jsonl")} | {CORPUS / "labels.tsv"}
    assert set(files) == on_disk
    stale = [path.name for path, content in files.items() if path.read_bytes() != content]
    assert stale == [], "rerun python tests/corpus/build.py"


def test_the_committed_evasions_are_what_evasions_py_writes() -> None:
    files = evasions.evasion_files()
    on_disk = set((CORPUS / "evasions").glob("*.jsonl")) | {CORPUS / "evasions" / "labels.tsv"}
    assert set(files) == on_disk
    stale = [path.name for path, content in files.items() if path.read_bytes() != content]
    assert stale == [], "rerun python tests/corpus/evasions.py"


def test_no_evasion_repeats_a_call_verbatim_back_to_back() -> None:
    """What makes them evasions: a detector of consecutive identical calls sees a new call each time."""
    for path in sorted((CORPUS / "evasions").glob("*.jsonl")):
        calls = [line for line in path.read_text().splitlines() if '"tool/call"' in line]
        arguments = [(event["data"]["name"], event["data"]["arguments"]) for event in map(json.loads, calls)]
        assert len(calls) >= 10, path.name
        assert all(before != after for before, after in itertools.pairwise(arguments)), path.name


def test_the_corpus_has_forty_of_each_class_and_every_loop_has_a_start() -> None:
    _, labels, starts = measure.corpus()
    loops = [session for session, label in labels.items() if label == "loop"]
    assert len(loops) >= 40
    assert sum(1 for label in labels.values() if label == "ok") >= 40
    assert set(loops) == set(starts)


def _rows(name: str) -> list[list[str]]:
    """The tab-separated rows of an expectations file, without its comments."""
    lines = (CORPUS / name).read_text().splitlines()
    return [line.split("\t") for line in lines if line and not line.startswith("#")]


EXPECTED = _rows("expected.tsv")


@pytest.fixture(scope="module")
def first_stops() -> dict[str, dict[str, int | None]]:
    stops: dict[str, dict[str, int | None]] = measure.first_stops()
    return stops


@pytest.mark.parametrize("row", EXPECTED, ids=[row[0] for row in EXPECTED])
def test_each_trajectory_stops_where_expected_in_every_mode(
    row: list[str], first_stops: dict[str, dict[str, int | None]]
) -> None:
    session, _, _, *cells = row
    expected = {
        mode: None if cell == "-" else int(cell) for mode, cell in zip(measure.MODES, cells, strict=True)
    }
    assert first_stops[session] == expected


#: The corpus's ordinary sessions the defaults stop, and where: each a known cost
#: (docs/decision-quality.md, "Known false stops"). A check that waits before it asks, answered
#: alike while a job outside runs longer than the limits allow: its evidence is a stuck job's.
KNOWN_FALSE_STOPS = {"poll-asked-for-forty-minutes": 5, "ci-checks-on-a-schedule": 5}


def test_the_defaults_stop_no_ordinary_session_but_the_known_ones(
    first_stops: dict[str, dict[str, int | None]],
) -> None:
    labels = measure.corpus()[1]
    stopped = {
        session: by_mode["defaults"]
        for session, by_mode in first_stops.items()
        if labels[session] == "ok" and by_mode["defaults"] is not None
    }
    assert stopped == KNOWN_FALSE_STOPS


def test_the_defaults_meet_the_targets_and_the_seed_preset_does_not() -> None:
    scores = measure.scores()
    aware = scores["defaults"]
    assert aware.loops is not None and aware.loops_caught is not None and aware.mean_catch is not None
    assert aware.loops_caught >= 0.95 * aware.loops
    assert aware.mean_catch <= 6.0
    assert aware.false_positives == len(KNOWN_FALSE_STOPS)
    assert scores["seed"].false_positives
    assert (scores["reference"].loops_caught or 0) < 0.95 * aware.loops


# --- real agent sessions (../shared/real-sessions*, read where they are, never copied) -------------

#: (source name, session, mode, expected first stop) for every folder of real runs.
REAL_EXPECTED = [[name, *row] for name, path in measure.REAL_EXPECTED.items() for row in _rows(path.name)]
_REAL_STOPS: dict[str, dict[str, dict[str, int | None]]] = {}


def real_first_stops(name: str) -> dict[str, dict[str, int | None]]:
    """Every session's first stop per kept mode in one folder of real runs (measured once)."""
    if name not in _REAL_STOPS:
        folder = dict(sources.REAL_FOLDERS)[name]
        real = sources.real_sessions(folder, name)
        if real is None:
            pytest.skip(f"../shared/{folder.name} is not there: the real-session regression check reads it")
        _REAL_STOPS[name] = measure.first_stops(real.sessions, measure.REAL_MODES)
    return _REAL_STOPS[name]


@pytest.mark.parametrize("name", list(measure.REAL_EXPECTED))
def test_every_real_session_and_mode_has_an_expectation(name: str) -> None:
    expected = {(session, mode) for source, session, mode, _ in REAL_EXPECTED if source == name}
    measured = {(session, mode) for session, by_mode in real_first_stops(name).items() for mode in by_mode}
    assert measured == expected, "rerun python tests/corpus/measure.py --write-expected and review the diff"


@pytest.mark.parametrize("row", REAL_EXPECTED, ids=[f"{row[1]}:{row[2]}" for row in REAL_EXPECTED])
def test_each_real_session_first_stops_where_expected(row: list[str]) -> None:
    name, session, mode, cell = row
    assert real_first_stops(name)[session][mode] == (None if cell == "-" else int(cell))


# --- the published detectors, as anchors.py re-implements them (measurement only) -----------------

anchors = _load("anchors")


def steps(*commands: str, failing: bool = False, description: str | None = None) -> list[Any]:
    """One agent's bash calls, each answered alike (exit 1 when ``failing``)."""
    result = "boom\n[exit code: 1]" if failing else "ok"
    facts = {"isError": False, "exitCode": 1 if failing else 0}
    return [
        anchors.Step(
            "agent",
            number,
            "bash",
            {"command": command, **({"description": f"{description} {number}"} if description else {})},
            result,
            False,
            facts,
            False,
        )
        for number, command in enumerate(commands, start=1)
    ]


@pytest.mark.parametrize(
    ("detector", "stopped_call"),
    [
        ("roo_code", 4),  # the 4th identical call is refused before it runs
        ("gemini_cli", 5),  # the 5th identical request ends the turn
        ("cline_stop", 6),  # the 5th runs, the task then stops for the user
        ("openhands", 5),  # 4 identical action/observation pairs, judged before the next step
        ("cline_warning", 3),  # advisory: a notice with the 3rd
        ("official_reminder", 3),  # advisory: a notice with the 3rd
    ],
)
def test_each_anchor_acts_where_its_source_says(detector: str, stopped_call: int) -> None:
    calls = steps(*["make"] * 8)
    act = getattr(anchors, detector)(calls)
    assert act is not None and calls[act.index].number == stopped_call


def test_an_anchor_never_acts_on_calls_that_differ_back_to_back() -> None:
    calls = steps(*["make", "make test"] * 6)
    acted = [anchor.name for anchor in anchors.ANCHORS if anchor.first(calls) is not None]
    assert acted == ["OpenHands StuckDetector"]  # its A-B-A-B rule, and only it


def test_openhands_stops_three_identical_errors_and_not_three_failing_commands() -> None:
    failed, edit = "Error: old_string not found", {"file_path": "a.py"}
    errors = [anchors.Step("agent", n, "edit", edit, failed, True, {}, False) for n in range(1, 6)]
    act = anchors.openhands(errors)
    assert act is not None and errors[act.index].number == 4
    assert anchors.openhands(steps("make", "make", "make", "ls", failing=True)) is None


def test_the_description_counts_only_for_the_harnesses_that_compare_it() -> None:
    calls = steps(*["make"] * 8, description="try")
    acted = {anchor.short for anchor in anchors.ANCHORS if anchor.first(calls) is not None}
    assert acted == {"Roo Code", "Gemini CLI", "Cline stop", "Cline warning"}


# --- the comparison's scoring (compare.py) ---------------------------------------------------------

compare = _load("compare")


@pytest.mark.parametrize(
    ("stop", "catch", "false_stop"),
    [(None, None, False), (3, None, True), (4, 1, False), (7, 4, False), (8, None, False)],
)
def test_a_loop_is_caught_only_by_a_first_stop_inside_it(
    stop: int | None, catch: int | None, false_stop: bool
) -> None:
    """The loop runs from call 4 to 7: a stop at 3 stopped the work before it, one at 8 came after."""
    session = sources.Session("run", Path("run.jsonl"), ("run",), ())
    source = sources.Source("real sessions", [session], {"run": sources.Labelled("loop", 4, 7)})
    act = None if stop is None else compare.FirstAct("run", stop, "rule")
    scored = compare.score(compare.System("s", "s", lambda _: act), source)
    assert scored.loops == 1
    assert scored.catches == ({} if catch is None else {"run": catch})
    assert ("run" in scored.false_stops) == false_stop
    assert ("run" in scored.missed) == (catch is None)  # every loop not caught is named


def test_any_stop_in_an_unlabelled_run_is_a_false_stop() -> None:
    session = sources.Session("run", Path("run.jsonl"), ("run",), ())
    stops_at_40 = compare.System("s", "s", lambda _: compare.FirstAct("run", 40, "rule"))
    scored = compare.score(stops_at_40, sources.Source("x", [session], {}))
    assert (scored.ordinary, list(scored.false_stops)) == (1, ["run"])
