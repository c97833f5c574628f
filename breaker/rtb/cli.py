"""``rtb``: explain a call, replay recorded dsh sessions, and sweep the caps over them.

Every verdict comes from the same ``fingerprint_call`` and ``Breaker`` the live gate runs; this
module only reads files, parses arguments and prints. Exit status: 0 when everything was read,
1 when some file or line could not be (the rest still ran), 2 on a usage or configuration error.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TextIO

from breaker.core.config import BreakerConfig, ConfigError, load_config
from breaker.core.decision import Breaker
from breaker.core.fingerprints import CallFingerprints, ToolCall, fingerprint_call
from breaker.core.messages import format_number
from breaker.core.verdicts import Hit
from breaker.rtb.replay import CallReplay, SessionReplay, replay_session
from breaker.rtb.sessions import (
    MissingZstandard,
    ReadProblem,
    Session,
    SessionLog,
    find_session_files,
    group_sessions,
    read_session,
)
from breaker.rtb.sweep import Label, Setting, SettingScore, parse_labels, parse_loop_starts, sweep

#: The row id the plugin is mounted under in a cordis patch.
ROW_ID = "repeat-tool-breaker"
FORMATS = ("table", "json", "markdown")


class UsageError(Exception):
    """A command line or input file rtb cannot work with at all."""


def main(argv: Sequence[str] | None = None) -> int:
    """The ``rtb`` entry point; returns the exit status."""
    args = _parser().parse_args(argv)
    command: Callable[[argparse.Namespace], int] = args.command
    try:
        return command(args)
    except (ConfigError, UsageError, MissingZstandard) as error:
        print(f"rtb: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `rtb replay ... | head`: stop quietly, as other filters do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rtb",
        description="Explain, replay and tune the repeat-tool breaker with the live gate's own core.",
    )
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    explain = commands.add_parser("explain", help="show the fingerprints of one call and their caps")
    explain.add_argument(
        "command_text", nargs="?", metavar="COMMAND", help="a shell command (the tool's `command`)"
    )
    explain.add_argument("--tool", default="bash", help="the tool the command is given to (default: bash)")
    explain.add_argument(
        "--json", dest="call_json", metavar="CALL", help='a whole call: {"name": ..., "arguments": ...}'
    )
    _add_common(explain)
    explain.set_defaults(command=_explain)

    replay = commands.add_parser("replay", help="replay recorded sessions under a configuration")
    replay.add_argument(
        "paths", nargs="+", type=Path, metavar="SESSION", help="a log, a .jsonl file or a folder"
    )
    replay.add_argument("--show-denials", action="store_true", help="print the text of every denial and ask")
    _add_common(replay)
    replay.set_defaults(command=_replay)

    grid = commands.add_parser("sweep", help="replay over a grid of windows and caps")
    grid.add_argument(
        "paths", nargs="+", type=Path, metavar="SESSION", help="a log, a .jsonl file or a folder"
    )
    grid.add_argument("--window", type=_numbers, default=[12], help="windows to try, e.g. 8,12,16")
    grid.add_argument(
        "--cap", type=_numbers, default=[5], help="caps of exact/cmd/net/sink to try, e.g. 3,5,9"
    )
    grid.add_argument(
        "--labels", type=Path, metavar="FILE", help="TSV: session id, loop|ok, [reason, [loop start call]]"
    )
    _add_common(grid)
    grid.set_defaults(command=_sweep)
    return parser


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config", type=Path, metavar="FILE", help="YAML or JSON: the config: mapping or a cordis patch"
    )
    parser.add_argument("--format", choices=FORMATS, default="table")


def _numbers(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected whole numbers separated by commas, got {text!r}"
        ) from None
    if not values:
        raise argparse.ArgumentTypeError("expected at least one number")
    return values


# --- explain ---------------------------------------------------------------------------------


def _explain(args: argparse.Namespace) -> int:
    config = load_config(read_config_file(args.config))
    call = _call_from_args(args)
    explained = fingerprint_call(call, config)
    if args.format == "json":
        _write(json.dumps(_explanation_json(call, explained, config), indent=2) + "\n")
    else:
        _write(_explanation_text(call, explained, config, markdown=args.format == "markdown"))
    return 0


def _call_from_args(args: argparse.Namespace) -> ToolCall:
    if args.call_json is not None:
        if args.command_text is not None:
            raise UsageError("give either a COMMAND or --json, not both")
        try:
            document = json.loads(args.call_json)
        except json.JSONDecodeError as error:
            raise UsageError(f"--json is not JSON: {error.msg}") from None
        if not isinstance(document, dict) or not isinstance(document.get("name"), str):
            raise UsageError('--json must be an object with a "name" and "arguments"')
        arguments = document.get("arguments", {})
        if isinstance(arguments, str):  # as dsh logs it
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError as error:
                raise UsageError(f"--json arguments string is not JSON: {error.msg}") from None
        return ToolCall(name=document["name"], arguments=arguments)
    if args.command_text is None:
        raise UsageError("give a COMMAND to explain, or a whole call with --json")
    return ToolCall(name=args.tool, arguments={"command": args.command_text})


def _cap_text(config: BreakerConfig, kind: str, key: str) -> str:
    cap = config.limit_for(kind, key)
    return "uncapped" if cap is None else format_number(cap)


def _explanation_json(call: ToolCall, explained: CallFingerprints, config: BreakerConfig) -> dict[str, Any]:
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


def _explanation_text(
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


def _counted(config: BreakerConfig, tool: str) -> bool:
    return Breaker(config).is_counted(tool)


# --- replay ----------------------------------------------------------------------------------


def _replay(args: argparse.Namespace) -> int:
    config = load_config(read_config_file(args.config))
    sessions, problems = load_sessions(args.paths)
    replays = [replay_session(session, config) for session in sessions]
    by_path = {session.session_id: session.path for session in sessions}
    if args.format == "json":
        document = {
            "sessions": [_replay_json(replay, by_path[replay.session_id]) for replay in replays],
            "problems": [str(problem) for problem in problems],
        }
        _write(json.dumps(document, indent=2) + "\n")
    else:
        _write(_replay_text(replays, show_denials=args.show_denials, markdown=args.format == "markdown"))
    return 1 if problems else 0


def _replay_json(replay: SessionReplay, path: Path) -> dict[str, Any]:
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


def _replay_text(replays: Sequence[SessionReplay], *, show_denials: bool, markdown: bool) -> str:
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


# --- sweep -----------------------------------------------------------------------------------


def _sweep(args: argparse.Namespace) -> int:
    base = read_config_file(args.config)
    load_config(base)  # a broken base config fails before any replay
    labels, loop_starts = _read_labels(args.labels) if args.labels is not None else (None, None)
    sessions, problems = load_sessions(args.paths)
    if labels is not None:
        for session in sessions:
            if session.session_id not in labels:
                print(f"rtb: {session.session_id} has no label; it counts for denials only", file=sys.stderr)
    grid = [Setting(window, cap) for window in args.window for cap in args.cap]
    progress = Progress(len(grid) * len(sessions), sys.stderr)
    scores = sweep(sessions, grid, base, labels, on_replayed=progress.advance, loop_starts=loop_starts)
    progress.close()
    if args.format == "json":
        _write(
            json.dumps(
                {
                    "settings": [_score_json(score) for score in scores],
                    "problems": [str(problem) for problem in problems],
                },
                indent=2,
            )
            + "\n"
        )
    else:
        _write(
            _sweep_text(
                scores, len(sessions), labelled=labels is not None, markdown=args.format == "markdown"
            )
        )
    return 1 if problems else 0


def _read_labels(path: Path) -> tuple[dict[str, Label], dict[str, int]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise UsageError(f"labels {path}: {error.strerror or error}") from None
    labels, problems = parse_labels(text)
    for line, reason in problems:
        print(f"rtb: {path}:{line}: {reason}", file=sys.stderr)
    return labels, parse_loop_starts(text)


def _score_json(score: SettingScore) -> dict[str, Any]:
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


def _sweep_text(scores: Sequence[SettingScore], sessions: int, *, labelled: bool, markdown: bool) -> str:
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


# --- reading inputs --------------------------------------------------------------------------


def read_config_file(path: Path | None) -> dict[str, Any]:
    """The raw ``config:`` mapping in ``path``: a bare mapping, or the plugin's row of a cordis patch."""
    if path is None:
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"config {path}: {error.strerror or error}") from None
    document = _parse_document(text, path)
    try:
        return config_mapping(document)
    except ConfigError as error:
        raise ConfigError(f"config {path}: {error}") from None


def config_mapping(document: object) -> dict[str, Any]:
    """Find the breaker's ``config:`` in a parsed file (see ``read_config_file``)."""
    if document is None:
        return {}
    if isinstance(document, list):
        row = _find_row(document)
        if row is None:
            raise ConfigError(f"the cordis patch has no {ROW_ID!r} row")
        config = row.get("config")
        if config is None:
            return {}
        document = config
    if not isinstance(document, dict):
        raise ConfigError("must hold the config: mapping or a cordis patch (a list of rows)")
    if document.get("id") == ROW_ID and ("config" in document or "name" in document):
        return config_mapping([document])
    return document


def _find_row(rows: list[Any]) -> dict[str, Any] | None:
    for row in rows:
        if not isinstance(row, dict):
            continue
        if row.get("id") == ROW_ID:
            return row
        inserted = row.get("insert")
        if isinstance(inserted, list):
            found = _find_row(inserted)
            if found is not None:
                return found
    return None


def _parse_document(text: str, path: Path) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        json_error = error
    try:
        yaml = importlib.import_module("yaml")
    except ImportError:
        raise ConfigError(
            f"config {path}: not JSON ({json_error.msg} at line {json_error.lineno}); "
            "reading YAML needs PyYAML: pip install pyyaml"
        ) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ConfigError(f"config {path}: neither JSON nor YAML ({error})") from None


def load_sessions(paths: Iterable[Path]) -> tuple[list[Session], list[ReadProblem]]:
    """Read every log under ``paths``, reporting each unreadable file or line on stderr as it goes."""
    files, problems = find_session_files(paths)
    for problem in problems:
        print(f"rtb: {problem}", file=sys.stderr)
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
    if not files and not problems:
        raise UsageError("no session logs (*.jsonl, *.jsonl.zstd) found")
    sessions = group_sessions(logs)
    _check_unique_ids(sessions)
    return sessions, problems


def _check_unique_ids(sessions: Sequence[Session]) -> None:
    seen: dict[str, Path] = {}
    for session in sessions:
        first = seen.get(session.session_id)
        if first is not None:
            raise UsageError(f"{first} and {session.path} share the session id {session.session_id!r}")
        seen[session.session_id] = session.path


# --- output ----------------------------------------------------------------------------------


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


def _write(text: str) -> None:
    sys.stdout.write(text)
