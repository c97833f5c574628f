"""``rtb``: explain a call, replay recorded dsh sessions, and sweep the caps over them.

Every verdict comes from the same ``fingerprint_call`` and ``Breaker`` the live gate runs; this
module only parses the command line and runs the subcommand: ``configfile`` and ``inputs`` read
the files, ``tables`` prints. Exit status: 0 when everything was read, 1 when some file or line
could not be (the rest still ran), 2 on a usage or configuration error.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from breaker.core.config import ConfigError, load_config
from breaker.core.reading import SHELL_TOOLS
from breaker.core.reading.fingerprints import ToolCall, fingerprint_call
from breaker.rtb import replayrun
from breaker.rtb.config import check
from breaker.rtb.config.configfile import read_config_file
from breaker.rtb.config.whichconfig import choose, loaded
from breaker.rtb.inputs import load_sessions, read_labels, replay_sources
from breaker.rtb.read import dshhome
from breaker.rtb.read.events import UsageError
from breaker.rtb.read.jsontext import Unreadable, load_json
from breaker.rtb.read.logstream import MissingZstandard
from breaker.rtb.replay.sweep import Setting, sweep
from breaker.rtb.show import shown
from breaker.rtb.show.replayjson import JsonReport
from breaker.rtb.show.replaytext import TextReport
from breaker.rtb.show.tables import Progress, explanation_json, explanation_text, score_json, sweep_text
from breaker.rtb.show.timeline import PAGE_TITLE, TimelineReport

FORMATS = ("table", "json", "markdown")
#: What rtb imports only when a command needs it, by module, and the package that brings it (the
#: package's dependencies; zstandard and pyyaml name themselves where they are read).
_DEPENDENCIES = {"pydantic": "pydantic", "pydantic_core": "pydantic"}


def main(argv: Sequence[str] | None = None) -> int:
    """The ``rtb`` entry point; returns the exit status."""
    args = _parser().parse_args(argv)
    command: Callable[[argparse.Namespace], int] = args.command
    for stream in (sys.stdout, sys.stderr):  # a text no encoding takes (a path's bytes) never stops a report
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    try:
        return command(args)
    except (ConfigError, UsageError, MissingZstandard) as error:
        print(f"rtb: {error}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as error:
        package = _DEPENDENCIES.get((error.name or "").partition(".")[0])
        if package is None:
            raise
        python = sys.executable
        print(
            f"rtb: this Python ({python}) cannot import {error.name}, which rtb needs (the package "
            f"{package}). Fix: `{python} -m pip install {package}`, or run `npx --no rtb` in a dsh profile "
            "with the plugin and RTB_PYTHON unset (it prepares the plugin's own environment)",
            file=sys.stderr,
        )
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
    explain.add_argument(
        "--tool",
        default="bash",
        help="the shell tool the command is given to (bash, pwsh, shell; default: bash)",
    )
    explain.add_argument(
        "--json", dest="call_json", metavar="CALL", help='a whole call: {"name": ..., "arguments": ...}'
    )
    _add_common(explain)
    _add_profile(explain)
    explain.set_defaults(command=_explain)

    replay = commands.add_parser("replay", help="replay recorded sessions under a configuration")
    replay.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="SESSION",
        help="a log, a .jsonl file or a folder (default: $DSH_HOME/sessions, else ~/.dsh/sessions)",
    )
    replay.add_argument(
        "--show-denials",
        action="store_true",
        help="print what the model read of each stop and notice: denials, asks, notices",
    )
    replay.add_argument(
        "--session",
        action="append",
        default=[],
        metavar="ID",
        help="only this session (its id or the start of it; repeatable)",
    )
    replay.add_argument(
        "--agent",
        action="append",
        default=[],
        metavar="ID",
        help="only the calls of this agent (a subagent's session id or the start of it; repeatable)",
    )
    replay.add_argument(
        "--calls",
        action="store_true",
        help="list the calls around each stop (those that filled the window), not only the stops",
    )
    replay.add_argument(
        "--around",
        type=_count,
        metavar="N",
        help="with --calls: how many calls before a stop (default: the window)",
    )
    replay.add_argument(
        "--html",
        type=Path,
        metavar="FILE",
        help="write a self-contained HTML timeline of every call instead (--config: beside the defaults)",
    )
    _add_common(replay)
    _add_profile(replay)
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

    check.add_subcommand(commands)
    _add_help(parser, commands)
    return parser


def _add_help(parser: argparse.ArgumentParser, commands: Any) -> None:
    """``rtb help [COMMAND]``: ``npx --no rtb --help`` prints npx's own help, not this one."""
    named: dict[str, argparse.ArgumentParser] = dict(commands.choices)

    def show(args: argparse.Namespace) -> int:
        (parser if args.topic is None else named[args.topic]).print_help()
        return 0

    helper = commands.add_parser(
        "help", help="this help, or a command's (`npx --no rtb help replay`: npx takes --help for itself)"
    )
    helper.add_argument("topic", nargs="?", choices=list(named), metavar="COMMAND")
    helper.set_defaults(command=show)


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config", type=Path, metavar="FILE", help="YAML or JSON: the config: mapping or a cordis patch"
    )
    parser.add_argument("--format", choices=FORMATS, default="table")


def _add_profile(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--profile",
        metavar="NAME",
        help="use the config of dsh profile NAME ($DSH_HOME/profiles/NAME); without it and --config, "
        "the config of the profile folder rtb runs in, else the defaults",
    )


def _count(text: str) -> int:
    """A whole number >= 0 (``--around``): a negative one read as 0 without a word."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return value


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


def _explain(args: argparse.Namespace) -> int:
    chosen = choose(args.config, args.profile)
    config = chosen.config
    call = _call_from_args(args)
    explained = fingerprint_call(call, config)
    if args.format == "json":
        document = {"config": chosen.json(), **explanation_json(call, explained, config)}
        _write(json.dumps(document, indent=2) + "\n")
    else:
        text = explanation_text(call, explained, config, markdown=args.format == "markdown")
        _write(f"config: {shown.inline(chosen.label)}\n{text}")
    return 0


def _call_from_args(args: argparse.Namespace) -> ToolCall:
    if args.call_json is not None:
        if args.command_text is not None:
            raise UsageError("give either a COMMAND or --json, not both")
        try:
            document = load_json(args.call_json)
        except json.JSONDecodeError as error:
            raise UsageError(f"--json is not JSON: {error.msg}") from None
        except Unreadable as error:
            raise UsageError(f"--json {error}") from None
        if not isinstance(document, dict) or not isinstance(document.get("name"), str):
            raise UsageError('--json must be an object with a "name" and "arguments"')
        arguments = document.get("arguments", {})
        if isinstance(arguments, str):  # as dsh logs it
            try:
                arguments = load_json(arguments)
            except json.JSONDecodeError as error:
                raise UsageError(f"--json arguments string is not JSON: {error.msg}") from None
            except Unreadable as error:
                raise UsageError(f"--json arguments string {error}") from None
        return ToolCall(name=document["name"], arguments=arguments)
    if args.command_text is None:
        raise UsageError("give a COMMAND to explain, or a whole call with --json")
    if args.tool.lower() not in SHELL_TOOLS:
        raise UsageError(
            f"--tool {args.tool} takes no COMMAND: COMMAND is the command of a shell tool "
            f"({', '.join(sorted(SHELL_TOOLS))}); give a {args.tool} call whole: "
            f'--json \'{{"name": "{args.tool}", "arguments": {{...}}}}\''
        )
    return ToolCall(name=args.tool, arguments={"command": args.command_text})


def _page_target(path: Path) -> None:
    """Stop in one line, before a replay, where ``--html`` names no file that can be written."""
    if path.is_dir():
        raise UsageError(f"--html {path} is a folder: name the page's file, such as {path / 'replay.html'}")
    if not path.parent.is_dir():
        raise UsageError(
            f"--html {path}: no folder {path.parent}: create it, or name a file in a folder that exists"
        )
    if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise UsageError(f"--html {path} cannot be written: name a file in a folder you can write to")
    if path.is_file() and path.stat().st_size > 0:
        with path.open("rb") as existing:
            head = existing.read(4096)
        if f"<title>{PAGE_TITLE}".encode() not in head:  # a log taken for --html's FILE, say
            raise UsageError(
                f"--html {path} is a file that is not a page rtb wrote (a session log?): name a new file "
                f"for the page, such as {path.parent / 'replay.html'}"
            )


def _page_alone(args: argparse.Namespace) -> None:
    """Refuse an option of the text or JSON report beside ``--html``, which writes the page instead."""
    given = [
        ["--format", args.format] if args.format != "table" else [],
        ["--show-denials"] if args.show_denials else [],
        ["--calls"] if args.calls else [],
        ["--around", str(args.around)] if args.around is not None else [],
    ]
    option = next((words for words in given if words), None)
    if option is not None:
        raise UsageError(
            f"--html writes the page instead of the report, so {option[0]} does nothing with it: run rtb "
            f"replay twice, once with --html and once with {' '.join(option)}"
        )


def _replay(args: argparse.Namespace) -> int:
    if args.html is not None:
        _page_target(args.html)
        _page_alone(args)
    chosen = choose(args.config, args.profile)
    config = chosen.config
    sources, problems = replay_sources(args.paths or dshhome.default_session_paths(), args.session)
    agents: list[str] = args.agent
    report: TimelineReport | JsonReport | TextReport
    other = None
    if args.html is not None:
        other = load_config(None) if args.config is not None else None
        report = TimelineReport(config, setting=chosen.short, source=chosen.label, other=other)
    elif args.format == "json":
        report = JsonReport()
    else:
        report = TextReport(
            markdown=args.format == "markdown",
            show_denials=args.show_denials,
            calls=args.calls,
            around=config.window if args.around is None else max(args.around, 0),
            config=chosen.label,
            config_short=chosen.short,
        )
    digests, unread = replayrun.run(
        sources,
        config,
        report,
        counts=not isinstance(report, TextReport) or args.calls,
        other=other,
        keep=(lambda call: any(shown.matches(call.agent, a) for a in agents)) if agents else None,
    )
    problems.extend(unread)
    listed = sorted((digest for digest in digests if digest.calls), key=lambda digest: digest.sort_key)
    if agents and not listed:
        wanted = ", ".join(agents)
        raise UsageError(
            f"no call of an agent matches --agent {wanted} (a session's or subagent's id, or its start)"
        )
    empty = 0 if agents else len(digests) - len(listed)
    if isinstance(report, TimelineReport):
        try:
            with args.html.open("w", encoding="utf-8", errors="backslashreplace") as page:
                report.write(page, listed, empty=empty)
        except OSError as error:
            raise UsageError(f"--html {args.html} could not be written: {error.strerror or error}") from None
        calls = sum(digest.calls for digest in listed)
        print(
            f"rtb: wrote {args.html} ({len(listed)} session{'' if len(listed) == 1 else 's'}, {calls} calls)",
            file=sys.stderr,
        )
    elif isinstance(report, JsonReport):
        config_json = {key: shown.inline(v) if isinstance(v, str) else v for key, v in chosen.json().items()}
        report.write(sys.stdout, listed, config=config_json, empty=empty, problems=problems)
    else:
        report.write(sys.stdout, listed, empty=empty)
    return 1 if problems else 0


def _sweep(args: argparse.Namespace) -> int:
    base = read_config_file(args.config)
    if args.config is not None:  # a broken base config fails before any replay
        loaded(base, args.config, "correct it in that file")
    labels, loop_starts, unread = read_labels(args.labels) if args.labels is not None else (None, None, [])
    sessions, problems = load_sessions(args.paths)
    problems = [*unread, *problems]
    if labels is not None:
        for session in sessions:
            if session.session_id not in labels:
                print(f"rtb: {session.session_id} has no label; it counts for denials only", file=sys.stderr)
    grid = [Setting(window, cap) for window in args.window for cap in args.cap]
    progress = Progress(len(grid) * len(sessions), sys.stderr)
    scores = sweep(sessions, grid, base, labels, on_replayed=progress.advance, loop_starts=loop_starts)
    progress.close()
    # What every setting of the grid is laid over: only --config (a profile's is not read here).
    source = f"{args.config} (--config)" if args.config is not None else "defaults (no --config given)"
    if args.format == "json":
        _write(
            json.dumps(
                {
                    "config": source,
                    "settings": [score_json(score) for score in scores],
                    "problems": [str(problem) for problem in problems],
                },
                indent=2,
            )
            + "\n"
        )
    else:
        table = sweep_text(
            scores, len(sessions), labelled=labels is not None, markdown=args.format == "markdown"
        )
        _write(f"config: {shown.inline(source)}\n{table}")
    return 1 if problems else 0


def _write(text: str) -> None:
    sys.stdout.write(text)
