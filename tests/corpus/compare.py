"""Decision quality of this project beside the published loop detectors, on three sources, in one table.

    npm run quality                                   # installs reference 0.5.2 in a temp folder, then:
    python tests/corpus/compare.py --reference <dsh-repeat-tool-breaker@0.5.2 index.js>
    python tests/corpus/compare.py                    # the same without the reference plugin's row
    npm run quality -- --write-readme                 # also put the table into docs/decision-quality.md

Sources (see sources.py): the labelled corpus, the hand-made evasions, and the real agent runs in
../shared/real-sessions, -2, -3 and -4 (read there at run time; the table says so when one is
absent). It prints a summary table (the README's), one table per source, every loop
of the real runs and evasions with the call each system catches it at, then per source and
system every false stop and every missed loop with its session, call and rule. Systems:

* this project's rows (``PROJECT_ROWS``): each a mode file under modes/, replayed through
  ``breaker.rtb.replay.replayer`` exactly as ``rtb replay`` and the live gate decide;
* the reference plugin 0.5.2 with its own defaults, its real guard driven by reference.mjs;
* the published detectors re-implemented in anchors.py (OpenHands, Roo Code, Gemini CLI, Cline,
  the official reminder), each citing its source.

Only a session's first stop counts: after a stop the recorded agent would have read something else
and its later calls are no evidence. A loop is caught when that first stop falls inside the loop
(from its first call to its last, where the labels give one); a stop before the loop stopped the
work leading into it and counts as a false stop. Advisory rows count their first notice instead:
they stop nothing. Every false stop on a real ordinary session is listed with its call and rule.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from anchors import ANCHORS, Anchor, Step, session_steps
from measure import mode_config
from sources import HERE, ROOT, Source, corpus, evasions, real_sessions, real_sources
from timing import timing_table

from breaker.core.config import BreakerConfig, default_config, load_config
from breaker.rtb.read.sessions import Session
from breaker.rtb.replay.replayer import CallReplay, replay_session

#: This project's rows: (row name, mode file under modes/): the defaults, and the original
#: design's settings one key away (``preset: seed``).
PROJECT_ROWS = (("this project, defaults", "defaults"), ("this project, preset seed", "seed"))
REFERENCE_ROW = "reference plugin 0.5.2 (its defaults)"
CORPUS, EVASIONS = "corpus", "evasions"
README_START, README_END = "<!-- quality-table -->", "<!-- /quality-table -->"


@dataclass(frozen=True, slots=True)
class FirstAct:
    """A system's first stop (or, for an advisory one, its first notice) in a session."""

    agent: str
    call: int
    rule: str


#: A system: a session in, its first act out.
Judge = Callable[[Session], FirstAct | None]


@dataclass(frozen=True, slots=True)
class System:
    name: str
    short: str
    judge: Judge
    advisory: bool = False
    #: One of the published detectors (the anchors), not this project nor the reference plugin.
    published: bool = False


@dataclass
class Score:
    """One system on one source: loops caught (and at which call of the loop), false stops, misses."""

    loops: int = 0
    catches: dict[str, int] = field(default_factory=dict)
    ordinary: int = 0
    false_stops: dict[str, FirstAct] = field(default_factory=dict)
    #: Loops not caught: the first act (before the loop, after it) or None (never acted).
    missed: dict[str, FirstAct | None] = field(default_factory=dict)


def project_system(name: str, mode: str) -> System:
    raw = mode_config(mode)
    config = load_config(raw)

    def judge(session: Session) -> FirstAct | None:
        first = replay_session(session, config).first_stop
        return None if first is None else FirstAct(first.agent, first.number, _replayed_rule(first))

    written = json.dumps(raw, separators=(", ", ": "))
    brought = _settings_beyond_defaults(config, raw)
    title = f"{name} `{written}`" + (f" (it brings {brought})" if brought else "")
    return System(title, name.rsplit(", ", 1)[-1], judge)


def _settings_beyond_defaults(config: BreakerConfig, raw: Mapping[str, object]) -> str:
    """What the product sets beyond the defaults without the mode file saying it (a mode's own defaults)."""
    defaults = default_config().values()
    implied = [
        (key, value)
        for key, value in config.values().items()
        if defaults.get(key) != value and key not in raw
    ]
    return ", ".join(f"{key} {_number(value)}" for key, value in implied)


def _number(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _replayed_rule(stop: CallReplay) -> str:
    """The measures a denial names (its ``- key n/cap`` lines), else its first line."""
    named = [line[2:] for line in stop.message.splitlines() if line.startswith("- ")]
    return "; ".join(named) if named else stop.message.splitlines()[0] if stop.message else stop.verdict


def anchor_system(anchor: Anchor) -> System:
    def judge(session: Session) -> FirstAct | None:
        return first_of(anchor, session_steps(session))

    return System(anchor.name, anchor.short, judge, anchor.advisory, published=True)


def first_of(anchor: Anchor, steps: Sequence[Step]) -> FirstAct | None:
    """The earliest act, in log order, of the detector run on each agent's own calls."""
    by_agent: dict[str, list[int]] = {}
    for position, step in enumerate(steps):
        by_agent.setdefault(step.agent, []).append(position)
    acts = []
    for positions in by_agent.values():
        intervention = anchor.first([steps[position] for position in positions])
        if intervention is not None:
            acts.append((positions[intervention.index], intervention.rule))
    if not acts:
        return None
    position, rule = min(acts)
    return FirstAct(steps[position].agent, steps[position].number, rule)


def reference_system(index_js: Path, sources: Sequence[Source]) -> System:
    """The reference plugin's first stops, computed by reference.mjs in one run over every source."""
    sessions = [session for source in sources for session in source.sessions]
    payload = {
        "sessions": [
            {"id": str(session.path), "steps": [_step_json(step) for step in session_steps(session)]}
            for session in sessions
        ]
    }
    run = subprocess.run(
        ["node", str(HERE / "reference.mjs"), str(index_js)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    if run.returncode != 0:
        raise SystemExit(f"reference.mjs failed on {index_js}:\n{run.stderr[-2000:]}")
    found = {
        path: FirstAct(stop["agent"], stop["number"], stop["rule"])
        for path, stop in json.loads(run.stdout).items()
        if stop is not None
    }
    return System(REFERENCE_ROW, "reference", lambda session: found.get(str(session.path)))


def _step_json(step: Step) -> dict[str, object]:
    return {
        "agent": step.agent,
        "number": step.number,
        "tool": step.tool,
        "arguments": step.arguments,
        "text": step.result,
        "facts": dict(step.facts),
        "afterHuman": step.after_human,
    }


def score(system: System, source: Source) -> Score:
    result = Score()
    for session in source.sessions:
        label = source.label_of(session.session_id)
        act = system.judge(session)
        if label.label == "ok":
            result.ordinary += 1
            if act is not None:
                result.false_stops[session.session_id] = act
            continue
        result.loops += 1
        if act is not None and act.call < label.start:
            result.false_stops[session.session_id] = act
        if act is not None and label.start <= act.call and (label.end is None or act.call <= label.end):
            result.catches[session.session_id] = act.call - label.start + 1
        else:
            result.missed[session.session_id] = act
    return result


def _mean(values: Sequence[int]) -> str:
    return f"{sum(values) / len(values):.1f}" if values else "-"


Scores = dict[str, dict[str, Score]]


def report(
    systems: Sequence[System],
    sources: Sequence[Source],
    reference_note: str,
    absent: Sequence[tuple[str, Path]] = (),
) -> str:
    """The summary table; per source its own table; the loops of the real runs and evasions system
    by system; every false stop and every missed loop with its session, call and rule."""
    scores = {system.name: {source.name: score(system, source) for source in sources} for system in systems}
    lines = [*summary_table(systems, sources, scores, reference_note, absent)]
    for source in sources:
        lines += ["", *source_table(systems, source, scores)]
    looped = [source for source in sources if source.real or source.name == EVASIONS]
    lines += ["", *_loop_details(systems, scores, looped)]
    for source in sources:
        # Every system on the real runs; on the written sources only this project and the
        # reference (the published detectors miss most written loops by design: the evasions).
        named = [system for system in systems if source.real or not system.published]
        lines += ["", *_misses_and_false_stops(named, source, scores)]
    return "\n".join(lines) + "\n"


def summary_table(
    systems: Sequence[System],
    sources: Sequence[Source],
    scores: Scores,
    reference_note: str,
    absent: Sequence[tuple[str, Path]],
) -> list[str]:
    """One row per system, two columns per real source, then the corpus and the evasions."""
    real = [source for source in sources if source.real]
    heads = [f"{source.name}: loops caught | {source.name}: ordinary runs stopped" for source in real]
    heads += [f"{name}: not measured" for name, _ in absent]
    lines = [
        "| system | " + " | ".join(heads) + " | corpus loops caught | corpus false stops | evasions caught "
        "| mean catch (call of the loop) |",
        "| --- |" + " --- |" * (2 * len(real) + len(absent) + 4),
    ]
    for system in systems:
        by_source = scores[system.name]
        cells = []
        for source in real:
            measured = by_source[source.name]
            stopped = f"{len(measured.false_stops)} of {measured.ordinary}"
            cells += [f"{len(measured.catches)}/{measured.loops}", stopped]
        cells += [f"../shared/{folder.name} is absent" for _, folder in absent]
        written, evaded = by_source.get(CORPUS, Score()), by_source.get(EVASIONS, Score())
        caught = [catch for result in by_source.values() for catch in result.catches.values()]
        cells += [
            f"{len(written.catches)}/{written.loops}",
            str(len(written.false_stops)),
            f"{len(evaded.catches)}/{evaded.loops}",
            _mean(caught),
        ]
        lines.append(f"| {system.name} | " + " | ".join(cells) + " |")
    if reference_note:
        lines.append(f"| {REFERENCE_ROW} | {reference_note} |" + " |" * (len(real) * 2 + len(absent) + 3))
    return lines


def source_table(systems: Sequence[System], source: Source, scores: Scores) -> list[str]:
    """One source alone: loops caught, how early, and the ordinary runs stopped (for real runs,
    those read and found ordinary apart from those nobody read)."""
    sessions = [session.session_id for session in source.sessions]
    loops = sum(source.label_of(session).label == "loop" for session in sessions)
    unlabelled = sum(not source.is_labelled(session) for session in sessions)
    labelled_ok = len(sessions) - loops - unlabelled
    title = f"{source.name}: {len(sessions)} sessions, {loops} loops"
    if source.real:
        title += f", {labelled_ok} labelled ordinary, {unlabelled} unlabelled"
        head = (
            "| system | loops caught | mean catch | labelled ordinary stopped | unlabelled stopped "
            "| stopped before a loop |"
        )
    else:
        title += f", {len(sessions) - loops} ordinary"
        head = "| system | loops caught | mean catch | ordinary stopped | stopped before a loop |"
    lines = [f"{title} (first stop per session; notices for advisory systems).", "", head]
    lines.append("| --- " * (head.count("|") - 1) + "|")
    for system in systems:
        measured = scores[system.name][source.name]
        early = sum(session in measured.missed for session in measured.false_stops)
        ordinary = [session for session in measured.false_stops if session not in measured.missed]
        cells = [f"{len(measured.catches)}/{measured.loops}", _mean(list(measured.catches.values()))]
        if source.real:
            read = sum(source.is_labelled(session) for session in ordinary)
            cells += [f"{read}/{labelled_ok}", f"{len(ordinary) - read}/{unlabelled}"]
        else:
            cells.append(f"{len(ordinary)}/{len(sessions) - loops}")
        cells.append(str(early))
        lines.append(f"| {system.name} | " + " | ".join(cells) + " |")
    return lines


def _loop_details(
    systems: Sequence[System], scores: dict[str, dict[str, Score]], sources: Sequence[Source]
) -> list[str]:
    """Per loop of the real runs and the evasions: the call of the loop each system catches it at.

    The last column is the earliest stop of a published detector (advisory notices left out): the
    mark a mode has to meet to catch every loop no later than any of them.
    """
    lines = [
        "Loops of the real sessions and the evasions: the call of the loop each system stops "
        "(notices for advisory ones); `-` not caught.",
        "",
        "| loop | " + " | ".join(system.short for system in systems) + " | earliest published stop |",
        "| --- |" + " --- |" * (len(systems) + 1),
    ]
    for source in sources:
        for session in source.sessions:
            label = source.label_of(session.session_id)
            if label.label != "loop":
                continue
            span = f"calls {label.start}-{label.end}" if label.end is not None else f"from call {label.start}"
            here = {name: by_source[source.name] for name, by_source in scores.items()}
            catches = {name: result.catches.get(session.session_id) for name, result in here.items()}
            cells = ["-" if catches[system.name] is None else str(catches[system.name]) for system in systems]
            published = [
                catch
                for system in systems
                if system.published and not system.advisory and (catch := catches[system.name]) is not None
            ]
            cells.append(str(min(published)) if published else "-")
            lines.append(f"| {source.name}: {session.session_id} ({span}) | " + " | ".join(cells) + " |")
    return lines


def _misses_and_false_stops(systems: Sequence[System], source: Source, scores: Scores) -> list[str]:
    """Per system: every stop on ordinary work and every loop not caught, with session, call and rule."""
    lines = [f"{source.name}: every false stop and every missed loop (session, call, rule)."]
    for system in systems:
        measured = scores[system.name][source.name]
        counts = f"{len(measured.false_stops)} false stops, {len(measured.missed)} loops missed"
        lines += ["", f"{system.name}: {counts}"]
        for session_id, act in sorted(measured.false_stops.items()):
            label = source.label_of(session_id)
            kind = (
                f"before its labelled call {label.start} (loop to {label.end or 'the end'})"
                if label.label == "loop"
                else "labelled ordinary"
                if source.is_labelled(session_id)
                else "unlabelled"
            )
            lines.append(f"- stop: {session_id} ({kind}) call {act.call}: {act.rule[:160]}")
        for session_id, missed in sorted(measured.missed.items()):
            label = source.label_of(session_id)
            span = f"calls {label.start}-{label.end}" if label.end is not None else f"from call {label.start}"
            if missed is None:
                what = "never stopped"
            else:
                when = "before it" if missed.call < label.start else "after it"
                what = f"first stop {when}, call {missed.call}: {missed.rule[:120]}"
            lines.append(f"- missed: {session_id} ({span}): {what}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, help="index.js of dsh-repeat-tool-breaker@0.5.2")
    parser.add_argument("--real-sessions", type=Path, help="another folder of real runs, labels.tsv inside")
    parser.add_argument(
        "--write-readme", action="store_true", help="put the table into docs/decision-quality.md"
    )
    args = parser.parse_args()
    if args.real_sessions is None:
        real, absent = real_sources()
    else:
        folder = args.real_sessions
        given = real_sessions(folder, folder.name)
        real, absent = ([given], []) if given is not None else ([], [(folder.name, folder)])
    sources = [*real, corpus(), evasions()]
    systems = [project_system(name, mode) for name, mode in PROJECT_ROWS]
    note = "not measured: run `npm run quality` (installs it into a temporary folder)"
    if args.reference is not None:
        systems.append(reference_system(args.reference, sources))
        note = ""
    systems += [anchor_system(anchor) for anchor in ANCHORS]
    counts = ", ".join(f"{source.name}: {len(source.sessions)} sessions" for source in sources)
    missing = "".join(f"; {folder} is absent" for _, folder in absent)
    print(f"Sources: {counts}{missing}")
    print()
    text = report(systems, sources, note, absent)
    print(text, end="")
    modes = [(name, load_config(mode_config(mode))) for name, mode in PROJECT_ROWS]
    print("\n" + "\n".join(timing_table(modes, sources)))
    if args.write_readme:
        write_readme_table(text.split("\n\n", 1)[0])


def write_readme_table(table: str) -> None:
    """Replace the table between the quality-table markers of docs/decision-quality.md."""
    readme = ROOT / "docs" / "decision-quality.md"
    text = readme.read_text()
    head, rest = text.split(README_START, 1)
    _, tail = rest.split(README_END, 1)
    readme.write_text(f"{head}{README_START}\n{table}\n{README_END}{tail}")


if __name__ == "__main__":
    main()
