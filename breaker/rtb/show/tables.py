"""Everything rtb prints: the reports of explain, replay and sweep, and the progress bar.

Each report comes as a plain text table, a markdown table or a JSON document (``--format``);
the JSON keys are camelCase like the plugin's config. The progress bar goes to stderr and only
to a terminal, so piped output stays clean.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, TextIO

from breaker.core.config import BreakerConfig
from breaker.core.decision import Breaker
from breaker.core.reading.fingerprints import CallFingerprints, ToolCall
from breaker.core.wording.messages import format_number
from breaker.rtb.replay.sweep import SettingScore
from breaker.rtb.show import shown


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
    table = markdown_table if markdown else _plain_table
    lines = [
        f"tool: {shown.inline(call.name)}" + _uncounted(config, call.name),
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


def _uncounted(config: BreakerConfig, tool: str) -> str:
    """Why ``tool`` is not counted (empty when it is): its ``exclude`` entry, or an ``include``
    list that names it nowhere (a mistyped one leaves every tool out)."""
    if _counted(config, tool):
        return ""
    if _counted(dataclasses.replace(config, include=()), tool):
        return f" (not counted: not in include: {shown.inline(', '.join(config.include))})"
    return " (not counted: in exclude)"


#: The width the text report keeps to.
WIDTH = 100


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
    table = (markdown_table if markdown else _plain_table)(header, rows)
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


def fitted_table(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    flex: dict[int, int] | None = None,
    indent: str = "",
) -> str:
    """A plain table no wider than ``WIDTH`` (see ``fitted_widths``)."""
    lengths = [max(len(row[column]) for row in [header, *rows]) for column in range(len(header))]
    widths = fitted_widths(lengths, flex=flex, indent=indent)
    return "".join(fitted_line(row, widths, indent=indent) for row in [header, *rows])


def fitted_widths(
    lengths: Sequence[int], *, flex: dict[int, int] | None = None, indent: str = ""
) -> list[int]:
    """The widths of a plain table no wider than ``WIDTH`` whose columns' longest cells are
    ``lengths``: the ``flex`` columns (index: the width it keeps at least) give up characters,
    the one furthest above its least first (cells cut with "…")."""
    flex = flex or {}
    widths = list(lengths)
    total = len(indent) + sum(widths) + 2 * (len(widths) - 1)
    while total > WIDTH and flex:
        column = max(flex, key=lambda at: widths[at] - flex[at])
        if widths[column] <= flex[column]:
            break
        widths[column] -= 1
        total -= 1
    return widths


def fitted_line(row: Sequence[str], widths: Sequence[int], *, indent: str = "") -> str:
    """One row of a fitted table."""

    def cell(text: str, width: int) -> str:
        return (text if len(text) <= width else text[: width - 1] + "\u2026").ljust(width)

    return (
        indent + "  ".join(cell(text, width) for text, width in zip(row, widths, strict=True))
    ).rstrip() + "\n"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]], **_: object) -> str:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |\n"

    head = line(header) + line(["---"] * len(header)) if header else ""
    return head + "".join(line(row) for row in rows)
