"""Everything rtb prints: the reports of explain, replay and sweep, and the progress bar.

Each report comes as a plain text table, a markdown table or a JSON document (``--format``);
the JSON keys are camelCase like the plugin's config. The progress bar goes to stderr and only
to a terminal, so piped output stays clean.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from breaker.core.config import BreakerConfig
from breaker.core.decision import Breaker
from breaker.core.judging.verdicts import Hit
from breaker.core.reading.fingerprints import CallFingerprints, ToolCall
from breaker.core.wording.messages import format_number
from breaker.rtb import shown
from breaker.rtb.replay import CallReplay, SessionReplay
from breaker.rtb.sweep import SettingScore


def explanation_json(call: ToolCall, explained: CallFingerprints, config: BreakerConfig) -> dict[str, Any]:
    return {
        "tool": shown.inline(call.name),
        "counted": _counted(config, call.name),
        "local": explained.is_local,
        "fingerprints": [
            {
                "kind": fp.kind,
                "key": shown.inline(fp.key),
                "cap": _cap_json(config, fp.kind, fp.key),
                "local": fp.local,
            }
            for fp in explained.fingerprints
        ],
        "strippedArgs": [shown.inline(name) for name in explained.stripped_args],
        "volatileRemoved": [shown.inline(text) for text in explained.volatile_removed],
        "aliasesFolded": [
            {"seen": shown.inline(seen), "canonical": shown.inline(canonical)}
            for seen, canonical in explained.aliases_folded
        ],
    }


def explanation_text(
    call: ToolCall, explained: CallFingerprints, config: BreakerConfig, *, markdown: bool
) -> str:
    rows = [
        [
            fp.kind,
            _cap_text(config, fp.kind, fp.key),
            shown.inline(fp.key) + (" (local target)" if fp.local else ""),
        ]
        for fp in explained.fingerprints
    ]
    table = _markdown_table if markdown else _plain_table
    lines = [
        f"tool: {shown.inline(call.name)}"
        + ("" if _counted(config, call.name) else " (not counted: excluded by config)"),
        f"local call: {'yes' if explained.is_local else 'no'} (localHosts: {config.localHosts})",
        "",
        table(["KIND", "CAP", "FINGERPRINT"], rows).rstrip("\n"),
        "",
        f"stripped as decoy: {shown.inline(', '.join(explained.stripped_args)) or '-'}",
        f"volatile removed: {shown.inline(', '.join(explained.volatile_removed)) or '-'}",
        "aliases folded: "
        + (
            shown.inline(", ".join(f"{seen} -> {canonical}" for seen, canonical in explained.aliases_folded))
            or "-"
        ),
    ]
    return "\n".join(lines) + "\n"


def _cap_json(config: BreakerConfig, kind: str, key: str) -> int | float | None:
    cap = config.limit_for(kind, key)
    return None if cap is None else shown.number(cap)


def _cap_text(config: BreakerConfig, kind: str, key: str) -> str:
    cap = config.limit_for(kind, key)
    return "uncapped" if cap is None else format_number(cap)


def _counted(config: BreakerConfig, tool: str) -> bool:
    return Breaker(config).is_counted(tool)


#: The width the text report keeps to.
WIDTH = 100
#: How a recorded outcome reads in the text report's session lines.
_RECORDED_WORDS = {
    "approval-required": "approval refused",
    "not-dispatched": "not dispatched",
    "no-result": "no result",
}


@dataclass(frozen=True, slots=True)
class ReplayView:
    """What a replay report shows: the sessions (sorted and filtered already), how many empty
    sessions were left out, and which calls to list under each session."""

    replays: Sequence[SessionReplay]
    empty: int = 0
    show_denials: bool = False
    #: List every call within ``around`` calls before (and 2 after) a stop, not only the stops.
    calls: bool = False
    around: int = 12
    #: The configuration replayed under: where it came from, and its short name.
    config: str = "defaults"
    config_short: str = "defaults"


def replay_json(replay: SessionReplay, path: Path) -> dict[str, Any]:
    """One session's replay as JSON: every text in it redacted, caps and counts as integers."""
    return {
        "session": shown.inline(replay.session_id),
        "path": shown.inline(str(path)),
        "started": shown.started_iso(replay.about.started),
        "cwd": None if replay.about.cwd is None else shown.inline(replay.about.cwd),
        "prompt": None if replay.about.prompt is None else shown.inline(replay.about.prompt),
        "agents": [shown.inline(agent) for agent in replay.agents],
        "calls": len(replay.calls),
        "recorded": replay.recorded_outcomes,
        "stops": len(replay.stops),
        "differs": replay.differences,
        "verdicts": [_call_json(call) for call in replay.calls],
    }


def _call_json(call: CallReplay) -> dict[str, Any]:
    document: dict[str, Any] = {
        "call": call.number,
        "callId": shown.inline(call.call_id),
        "agent": shown.inline(call.agent),
        "tool": shown.inline(call.tool),
        "command": shown.command(call.tool, call.arguments),
        "arguments": shown.arguments_text(call.arguments),
        "recorded": call.recorded,
        "verdict": call.verdict,
        "hits": [_hit_json(hit) for hit in call.hits],
        "counts": [_hit_json(hit) for hit in call.counts],
        "message": shown.block(call.message),
    }
    if call.notices:
        document["notices"] = [shown.block(text) for text in call.notices]
    return document


def _hit_json(hit: Hit) -> dict[str, Any]:
    return {
        "fingerprint": shown.inline(hit.fingerprint.key),
        "kind": hit.fingerprint.kind,
        "count": hit.count,
        "cap": shown.number(hit.cap),
    }


def replay_text(view: ReplayView, *, markdown: bool) -> str:
    """The replay report: one line per session (sorted by start), then each session with a stop
    (or every listed session, with ``calls``) in detail; empty sessions counted in the footer."""
    table = _markdown_table if markdown else _fitted_table
    header = ["STARTED (UTC)", "SESSION", "CALLS", "STOPPED", "DIFFERS", "DIRECTORY · FIRST PROMPT"]
    rows = [
        [
            shown.started(replay.about.started),
            shown.short_id(replay.session_id),
            str(len(replay.calls)),
            _stopped(replay),
            str(replay.differences),
            _where(replay),
        ]
        for replay in view.replays
    ]
    out = [f"config: {shown.inline(view.config)}\n\n", table(header, rows, flex={5: 24})]
    for replay in view.replays:
        if replay.stops or (view.calls and replay.calls):
            out.append(_session_text(replay, view, markdown=markdown))
    total_calls = sum(len(replay.calls) for replay in view.replays)
    total_stops = sum(len(replay.stops) for replay in view.replays)
    footer = (
        f"\n{_plural(len(view.replays), 'session')}, {_plural(total_calls, 'call')}, "
        f"{total_stops} stopped under {shown.inline(view.config_short)}"
    )
    if view.empty:
        footer += f"; {view.empty} empty session{'s' if view.empty != 1 else ''} (no tool call) not listed"
    out.append(footer + "\n")
    return "".join(out)


def _stopped(replay: SessionReplay) -> str:
    first = replay.first_stop
    return "-" if first is None else f"{len(replay.stops)} from #{first.number}"


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _where(replay: SessionReplay) -> str:
    """The working directory's last folders and the first prompt line, for a summary row."""
    about = replay.about
    cwd = shown.inline(about.cwd) if about.cwd else ""
    if len(cwd) > 28:
        tail = cwd[-27:]
        cwd = "\u2026" + (tail[tail.index("/") :] if "/" in tail else tail)
    parts = [cwd, shown.inline(about.prompt) if about.prompt else ""]
    return " \u00b7 ".join(part for part in parts if part) or "-"


def _session_text(replay: SessionReplay, view: ReplayView, *, markdown: bool) -> str:
    about = replay.about
    title = shown.inline(replay.session_id)
    if about.started is not None:
        title = f"{shown.started(about.started)} UTC  {title}"
    recorded = ", ".join(
        f"{count} {_RECORDED_WORDS.get(outcome, outcome)}"
        for outcome, count in replay.recorded_outcomes.items()
    )
    differs = _plural(replay.differences, "call")
    facts = [
        ("directory", shown.inline(about.cwd) if about.cwd else "-"),
        ("prompt", shown.inline(about.prompt) if about.prompt else "-"),
        ("calls", f"{len(replay.calls)}, recorded: {recorded or '-'}"),
        ("replayed", f"{_stops_summary(replay)}; differs from the recording on {differs}"),
    ]
    several_agents = len({call.agent for call in replay.calls}) > 1
    header = [
        "CALL",
        *(["AGENT"] if several_agents else []),
        "TOOL",
        "VERDICT",
        "COUNT",
        "RECORDED",
        "ON",
        "ARGUMENTS",
    ]
    listed = _listed(replay, view)
    rows: list[list[str]] = []
    for call in listed:
        if call is None:
            rows.append(["\u2026", *([""] if several_agents else []), "", "", "", "", "", ""])
            continue
        count, key = _on(call)
        rows.append(
            [
                f"#{call.number}",
                *([shown.short_id(call.agent)] if several_agents else []),
                shown.inline(call.tool, 16),
                call.verdict,
                count,
                call.recorded,
                key,
                shown.short_arguments(call.arguments),
            ]
        )
    flex = {5 + several_agents: 40, 6 + several_agents: 16}
    if markdown:
        lines = [f"\n### {title}\n\n", *(f"- {name}: {value}\n" for name, value in facts), "\n"]
        lines.append(_markdown_table(header, rows))
    else:
        lines = [
            f"\n{title}\n",
            *(f"  {name:<12} {shown.inline(value, WIDTH - 15)}\n" for name, value in facts),
        ]
        lines.append(_fitted_table(header, rows, flex=flex, indent="  "))
    if view.show_denials:
        lines.extend(_denial_text(call, markdown=markdown) for call in replay.stops)
    return "".join(lines)


def _listed(replay: SessionReplay, view: ReplayView) -> list[CallReplay | None]:
    """The calls a session lists: its stops; with ``calls``, every call from ``around`` calls
    before a stop of its agent to 2 after; None where calls were left out."""
    if not view.calls:
        return list(replay.stops)
    keep: set[int] = set()
    for index, call in enumerate(replay.calls):
        if call.stopped:
            same_agent = [at for at, other in enumerate(replay.calls) if other.agent == call.agent]
            position = same_agent.index(index)
            keep.update(same_agent[max(0, position - view.around) : position + 3])
    if not replay.stops:
        keep = set(range(len(replay.calls)))
    listed: list[CallReplay | None] = []
    for index, call in enumerate(replay.calls):
        if index in keep:
            listed.append(call)
        elif not listed or listed[-1] is not None:
            listed.append(None)
    return listed


def _on(call: CallReplay) -> tuple[str, str]:
    """The fingerprint that stopped the call, else its nearest to its cap: ``count/cap`` (``+N``
    more that hit) and the key."""
    hits = list(call.hits)
    if not hits and call.counts:
        hits = [max(call.counts, key=lambda hit: hit.count / hit.cap if hit.cap else 0.0)]
    if not hits:
        return "-", "-"
    first = hits[0]
    more = f" +{len(hits) - 1}" if len(hits) > 1 else ""
    return f"{first.count}/{format_number(first.cap)}{more}", shown.inline(first.fingerprint.key, INLINE_KEY)


#: The most of a fingerprint key a table cell starts from (it is then fitted to the width).
INLINE_KEY = 200


def _stops_summary(replay: SessionReplay) -> str:
    first = replay.first_stop
    if first is None:
        return "no stop"
    kinds = " + ".join(sorted({call.verdict for call in replay.stops}))
    return f"{len(replay.stops)} {kinds}, first at #{first.number}"


def _denial_text(call: CallReplay, *, markdown: bool) -> str:
    heading = f"#{call.number} {shown.inline(call.tool)} ({shown.inline(call.call_id)}) {call.verdict}:"
    message = shown.block(call.message)
    if markdown:
        fenced = message.replace("```", "`\u02cb`")
        return f"\n{heading}\n\n```text\n{fenced}\n```\n"
    body = "\n".join(
        wrapped
        for line in message.splitlines()
        for wrapped in textwrap.wrap(
            line, WIDTH, initial_indent="    ", subsequent_indent="      ", break_on_hyphens=False
        )
        or [""]
    )
    return f"\n  {shown.inline(heading, WIDTH - 2)}\n{body}\n"


def score_json(score: SettingScore) -> dict[str, Any]:
    return {
        "window": score.setting.window,
        "cap": score.setting.cap,
        "denials": score.denials,
        "sessionsTouched": score.sessions_touched,
        "loopsCaught": score.loops_caught,
        "loops": score.loops,
        "falsePositives": score.false_positives,
        "meanCatch": score.mean_catch,
        "best": score.best,
    }


def sweep_text(scores: Sequence[SettingScore], sessions: int, *, labelled: bool, markdown: bool) -> str:
    header = ["WINDOW", "CAP", "DENIALS", "SESSIONS TOUCHED"]
    if labelled:
        header += ["LOOPS CAUGHT", "FALSE POSITIVES", "MEAN CATCH", "BEST"]
    rows = []
    for score in scores:
        row = [
            str(score.setting.window),
            str(score.setting.cap),
            str(score.denials),
            f"{score.sessions_touched}/{sessions}",
        ]
        if labelled:
            row += [
                f"{score.loops_caught}/{score.loops}",
                str(score.false_positives),
                "-" if score.mean_catch is None else f"{score.mean_catch:.1f}",
                "*" if score.best else "",
            ]
        rows.append(row)
    table = (_markdown_table if markdown else _plain_table)(header, rows)
    if labelled:
        table += (
            "\nBEST: most loops caught with no false positive; ties go to the earliest mean catch (call #)\n"
        )
    return table


class Progress:
    """A one-line progress bar on a terminal; nothing at all when the stream is piped."""

    WIDTH = 30

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total = total
        self.done = 0
        self.stream = stream
        self.active = total > 1 and stream.isatty()

    def advance(self) -> None:
        self.done += 1
        if self.active:
            filled = self.WIDTH * self.done // self.total
            self.stream.write(f"\r[{'#' * filled}{'.' * (self.WIDTH - filled)}] {self.done}/{self.total}")
            self.stream.flush()

    def clear(self) -> None:
        if self.active:
            self.stream.write("\r\033[K")
            self.stream.flush()

    def close(self) -> None:
        self.clear()
        self.active = False


def _plain_table(header: Sequence[str], rows: Sequence[Sequence[str]], **_: object) -> str:
    widths = [max(len(row[column]) for row in [header, *rows]) for column in range(len(header))]
    return "".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() + "\n"
        for row in [header, *rows]
    )


def _fitted_table(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    flex: dict[int, int] | None = None,
    indent: str = "",
) -> str:
    """A plain table no wider than ``WIDTH``: the ``flex`` columns (index: the width it keeps at
    least) give up characters, the one furthest above its least first (cells cut with "…")."""
    flex = flex or {}
    widths = [max(len(row[column]) for row in [header, *rows]) for column in range(len(header))]
    total = len(indent) + sum(widths) + 2 * (len(widths) - 1)
    while total > WIDTH and flex:
        column = max(flex, key=lambda at: widths[at] - flex[at])
        if widths[column] <= flex[column]:
            break
        widths[column] -= 1
        total -= 1

    def cell(text: str, width: int) -> str:
        return (text if len(text) <= width else text[: width - 1] + "\u2026").ljust(width)

    return "".join(
        (indent + "  ".join(cell(text, width) for text, width in zip(row, widths, strict=True))).rstrip()
        + "\n"
        for row in [header, *rows]
    )


def _markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]], **_: object) -> str:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |\n"

    return line(header) + line(["---"] * len(header)) + "".join(line(row) for row in rows)
