"""Decision quality of this project beside the published loop detectors, on three sources, in one table.

    npm run quality                                   # installs reference 0.5.2 in a temp folder, then:
    python tests/corpus/compare.py --reference <dsh-repeat-tool-breaker@0.5.2 index.js>
    python tests/corpus/compare.py                    # the same without the reference plugin's row
    npm run quality -- --write-readme                 # also put the table into docs/decision-quality.md

Sources (see sources.py): the labelled corpus, the hand-made evasions, and the real agent runs in
../shared/real-sessions (read there at run time; their rows say so when it is absent). Systems:

* this project's rows (``PROJECT_ROWS``): each a mode file under modes/, replayed through
  ``breaker.rtb.replay`` exactly as ``rtb replay`` and the live gate decide;
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
from sources import HERE, ROOT, Source, corpus, evasions, real_sessions

from breaker.core.config import BreakerConfig, default_config, load_config
from breaker.rtb.replay import CallReplay, replay_session
from breaker.rtb.sessions import Session

#: This project's rows: (row name, mode file under modes/). The recommended mode is the one the
#: README recommends; change this list when it changes.
PROJECT_ROWS = (("this project, defaults", "seed"), ("this project, recommended", "state-aware"))
REFERENCE_ROW = "reference plugin 0.5.2 (its defaults)"
REAL, CORPUS, EVASIONS = "real sessions", "corpus", "evasions"
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
    """One system on one source: loops caught (and at which call of the loop), and false stops."""

    loops: int = 0
    catches: dict[str, int] = field(default_factory=dict)
    ordinary: int = 0
    false_stops: dict[str, FirstAct] = field(default_factory=dict)


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
    defaults = default_config().model_dump()
    implied = [
        (key, value)
        for key, value in config.model_dump().items()
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
        if act is None:
            continue
        if act.call < label.start:
            result.false_stops[session.session_id] = act
        elif label.end is None or act.call <= label.end:
            result.catches[session.session_id] = act.call - label.start + 1
    return result


def _mean(values: Sequence[int]) -> str:
    return f"{sum(values) / len(values):.1f}" if values else "-"


def report(systems: Sequence[System], sources: Sequence[Source], reference_note: str) -> str:
    """The table, the loops of the real runs and evasions system by system, the real false stops."""
    scores = {system.name: {source.name: score(system, source) for source in sources} for system in systems}
    real_present = any(source.name == REAL for source in sources)
    lines = [
        "| system | real-session loops caught | real ordinary sessions stopped | corpus loops caught "
        "| corpus false stops | evasions caught | mean catch (call of the loop) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for system in systems:
        by_source = scores[system.name]
        real_cells = ["not measured: ../shared/real-sessions is absent", ""]
        if real_present:
            real = by_source[REAL]
            real_cells = [f"{len(real.catches)}/{real.loops}", f"{len(real.false_stops)} of {real.ordinary}"]
        written, evaded = by_source[CORPUS], by_source[EVASIONS]
        caught = [catch for result in by_source.values() for catch in result.catches.values()]
        lines.append(
            f"| {system.name} | {' | '.join(real_cells)} | {len(written.catches)}/{written.loops} "
            f"| {len(written.false_stops)} | {len(evaded.catches)}/{evaded.loops} | {_mean(caught)} |"
        )
    if reference_note:
        lines.append(f"| {REFERENCE_ROW} | {reference_note} | | | | | |")
    looped = [source for source in sources if source.name in (REAL, EVASIONS)]
    lines += ["", *_loop_details(systems, scores, looped)]
    if real_present:
        lines += ["", *_false_stops(systems, scores)]
    return "\n".join(lines) + "\n"


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


def _false_stops(systems: Sequence[System], scores: dict[str, dict[str, Score]]) -> list[str]:
    lines = ["Every stop (notice, for advisory systems) on a real ordinary session: session, call, rule."]
    for system in systems:
        real_score = scores[system.name][REAL]
        lines += ["", f"{system.name}: {len(real_score.false_stops)}"]
        for session_id, act in sorted(real_score.false_stops.items()):
            lines.append(f"- {session_id} call {act.call}: {act.rule[:160]}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, help="index.js of dsh-repeat-tool-breaker@0.5.2")
    parser.add_argument("--real-sessions", type=Path, help="another folder of real runs, labels.tsv inside")
    parser.add_argument(
        "--write-readme", action="store_true", help="put the table into docs/decision-quality.md"
    )
    args = parser.parse_args()
    real = real_sessions() if args.real_sessions is None else real_sessions(args.real_sessions)
    sources = [source for source in (real, corpus(), evasions()) if source is not None]
    systems = [project_system(name, mode) for name, mode in PROJECT_ROWS]
    note = "not measured: run `npm run quality` (installs it into a temporary folder)"
    if args.reference is not None:
        systems.append(reference_system(args.reference, sources))
        note = ""
    systems += [anchor_system(anchor) for anchor in ANCHORS]
    counts = ", ".join(f"{source.name}: {len(source.sessions)} sessions" for source in sources)
    print(f"Sources: {counts}" + ("" if real is not None else "; ../shared/real-sessions is absent"))
    print()
    text = report(systems, sources, note)
    print(text, end="")
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
