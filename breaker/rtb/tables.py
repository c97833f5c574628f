"""Everything rtb prints: the reports of explain, replay and sweep, and the progress bar.

Each report comes as a plain text table, a markdown table or a JSON document (``--format``);
the JSON keys are camelCase like the plugin's config. The progress bar goes to stderr and only
to a terminal, so piped output stays clean.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TextIO

from breaker.core.config import BreakerConfig
from breaker.core.decision import Breaker
from breaker.core.fingerprints import CallFingerprints, ToolCall
from breaker.core.messages import format_number
from breaker.core.verdicts import Hit
from breaker.rtb.replay import CallReplay, SessionReplay
from breaker.rtb.sweep import SettingScore


def explanation_json(call: ToolCall, explained: CallFingerprints, config: BreakerConfig) -> dict[str, Any]:
    return {
        "tool": call.name,
        "counted": _counted(config, call.name),
        "local": explained.is_local,
        "fingerprints": [
            {"kind": fp.kind, "key": fp.key, "cap": config.limit_for(fp.kind, fp.key), "local": fp.local}
            for fp in explained.fingerprints
        ],
        "strippedArgs": list(explained.stripped_args),
        "volatileRemoved": list(explained.volatile_removed),
        "aliasesFolded": [
            {"seen": seen, "canonical": canonical} for seen, canonical in explained.aliases_folded
        ],
    }


def explanation_text(
    call: ToolCall, explained: CallFingerprints, config: BreakerConfig, *, markdown: bool
) -> str:
    rows = [
        [fp.kind, _cap_text(config, fp.kind, fp.key), fp.key + (" (local target)" if fp.local else "")]
        for fp in explained.fingerprints
    ]
    table = _markdown_table if markdown else _plain_table
    lines = [
        f"tool: {call.name}{'' if _counted(config, call.name) else ' (not counted: excluded by config)'}",
        f"local call: {'yes' if explained.is_local else 'no'} (localHosts: {config.localHosts})",
        "",
        table(["KIND", "CAP", "FINGERPRINT"], rows).rstrip("\n"),
        "",
        f"stripped as decoy: {', '.join(explained.stripped_args) or '-'}",
        f"volatile removed: {', '.join(explained.volatile_removed) or '-'}",
        "aliases folded: "
        + (", ".join(f"{seen} -> {canonical}" for seen, canonical in explained.aliases_folded) or "-"),
    ]
    return "\n".join(lines) + "\n"


def _cap_text(config: BreakerConfig, kind: str, key: str) -> str:
    cap = config.limit_for(kind, key)
    return "uncapped" if cap is None else format_number(cap)


def _counted(config: BreakerConfig, tool: str) -> bool:
    return Breaker(config).is_counted(tool)


def replay_json(replay: SessionReplay, path: Path) -> dict[str, Any]:
    return {
        "session": replay.session_id,
        "path": str(path),
        "calls": len(replay.calls),
        "recorded": replay.recorded_outcomes,
        "stops": len(replay.stops),
        "differs": replay.differences,
        "verdicts": [
            {
                "call": call.number,
                "callId": call.call_id,
                "agent": call.agent,
                "tool": call.tool,
                "recorded": call.recorded,
                "verdict": call.verdict,
                "hits": [
                    {
                        "fingerprint": hit.fingerprint.key,
                        "kind": hit.fingerprint.kind,
                        "count": hit.count,
                        "cap": hit.cap,
                    }
                    for hit in call.hits
                ],
                "message": call.message,
            }
            for call in replay.calls
        ],
    }


def replay_text(replays: Sequence[SessionReplay], *, show_denials: bool, markdown: bool) -> str:
    table = _markdown_table if markdown else _plain_table
    summary = [
        [
            replay.session_id,
            str(len(replay.calls)),
            ", ".join(f"{count} {outcome}" for outcome, count in replay.recorded_outcomes.items()) or "-",
            _stops_summary(replay),
            str(replay.differences),
        ]
        for replay in replays
    ]
    out = [table(["SESSION", "CALLS", "RECORDED", "THIS CONFIG", "DIFFERS"], summary)]
    for replay in replays:
        if not replay.stops:
            continue
        out.append(f"\n{'### ' if markdown else ''}{replay.session_id}\n")
        if markdown:
            out.append("\n")
        several_agents = len({call.agent for call in replay.calls}) > 1
        header = ["CALL", *(["AGENT"] if several_agents else []), "TOOL", "VERDICT", "ON", "RECORDED"]
        rows = [
            [
                f"#{call.number}",
                *([call.agent] if several_agents else []),
                call.tool,
                call.verdict,
                _hits_text(call.hits),
                call.recorded,
            ]
            for call in replay.stops
        ]
        out.append(table(header, rows))
        if show_denials:
            out.extend(_denial_text(call, markdown=markdown) for call in replay.stops)
    total_calls = sum(len(replay.calls) for replay in replays)
    total_stops = sum(len(replay.stops) for replay in replays)
    out.append(f"\n{len(replays)} sessions, {total_calls} calls, {total_stops} stopped by this config\n")
    return "".join(out)


def _stops_summary(replay: SessionReplay) -> str:
    first = replay.first_stop
    if first is None:
        return "no stop"
    kinds = " + ".join(sorted({call.verdict for call in replay.stops}))
    return f"{len(replay.stops)} {kinds}, first at #{first.number}"


def _hits_text(hits: Iterable[Hit]) -> str:
    return ", ".join(f"{hit.fingerprint.key} {hit.count}/{format_number(hit.cap)}" for hit in hits) or "-"


def _denial_text(call: CallReplay, *, markdown: bool) -> str:
    heading = f"#{call.number} {call.tool} ({call.call_id}) {call.verdict}:"
    if markdown:
        return f"\n{heading}\n\n```text\n{call.message}\n```\n"
    body = "\n".join("    " + line for line in call.message.splitlines())
    return f"\n  {heading}\n{body}\n"


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


def _plain_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(row[column]) for row in [header, *rows]) for column in range(len(header))]
    return "".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() + "\n"
        for row in [header, *rows]
    )


def _markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |\n"

    return line(header) + line(["---"] * len(header)) + "".join(line(row) for row in rows)
