"""`rtb replay` and `--html` over one long generated session: python3 bench/rtb_scale.py [--calls N]
[--shape reads|failing-tests]

A dsh-shaped log (``session.jsonl.zstd``, a zstd frame per flushed batch) of N calls by one agent,
of one of two shapes: ``reads``, distinct ``read`` calls and, every 250 calls, a loop of 8
identical failing ``bash`` calls (four of them stopped); ``failing-tests``, a test run that fails
alike every time (``npm test``, the same 40 lines back: all but the first few stopped, each
denial quoting the failure). Then three processes, each timed by the CPU time it spent:

- the decisions alone: the same calls and results through ``Breaker`` as the live worker makes
  them (precheck, then commit of the verdict it kept, and record_result), made as they are
  decided (no log, no report), over and over;
- ``rtb replay`` (the text report) of the log: CPU time and peak RSS;
- ``rtb replay --html``: CPU time, peak RSS, the page's size, and (with Chromium installed) how
  long headless Chromium takes to load the page and paint it (``reads`` only).

They take turns on one CPU, ``SLICE`` seconds each, the others stopped meanwhile
(``run_sliced``): each meets the same load from the rest of a shared machine, spread over the same
minutes, and none of them waits behind another. The decisions go on until the replay is done and
are counted per call. Each of ``--runs`` runs gives a ratio; their median is printed beside
each run's and the target. ``--html`` runs in the first only (its target is far off).
"""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from breaker.core.config import default_config  # noqa: E402
from breaker.core.decision import Breaker  # noqa: E402
from breaker.core.judging.verdicts import Deny  # noqa: E402
from breaker.core.reading.fingerprints import ToolCall  # noqa: E402

LOOP_EVERY = 250
LOOP_LENGTH = 8
#: How long each process of a sliced run runs at a turn (s).
SLICE = 0.2
SESSION = "session-5ca1e000-0000-4000-8000-000000000001"
START_MS = 1_796_000_000_000


def reads(total: int) -> Iterator[tuple[ToolCall, str, bool]]:
    """The ``reads`` session's calls in order: (call, its result text, whether the result is an error)."""
    for number in range(total):
        call_id = f"call-{number}"
        if number % LOOP_EVERY < LOOP_LENGTH:
            command = f"make check-{number // LOOP_EVERY}"
            call = ToolCall("bash", {"command": command, "description": "run the checks"}, call_id)
            yield call, "1 check failed\n[exit code: 2]", True
        else:
            path = f"/work/project/src/module_{number}.py"
            yield (
                ToolCall("read", {"file_path": path}, call_id),
                f"def f{number}():\n    return {number}\n",
                False,
            )


#: The last 40 lines of a test run with one failure, as the ``failing-tests`` session gets back.
TEST_FAILURE = "\n".join(
    [
        *(f"  \u2713 case {case} passes ({case % 7} ms)" for case in range(34)),
        "  \u2717 case 34 adds the totals",
        "    AssertionError: expected 41 to equal 42",
        "      at Context.<anonymous> (test/totals.test.js:12:10)",
        "  34 passing (212 ms)",
        "  1 failing",
        "[exit code: 1]",
    ]
)


def failing_tests(total: int) -> Iterator[tuple[ToolCall, str, bool]]:
    """The ``failing-tests`` session's calls: the test suite run again and again, failing alike."""
    for number in range(total):
        call = ToolCall("bash", {"command": "npm test", "description": "run the tests"}, f"call-{number}")
        yield call, TEST_FAILURE, False


SHAPES = {"reads": reads, "failing-tests": failing_tests}


def write_log(folder: Path, total: int, shape: str = "reads") -> Path:
    """The session log, written as dsh writes it: a header, then a frame per batch of events."""
    import zstandard

    path = folder / "--work--" / SESSION / "session.jsonl.zstd"
    path.parent.mkdir(parents=True)
    compressor = zstandard.ZstdCompressor(level=3)
    header = {"type": "session", "id": SESSION, "createdAt": START_MS, "cwd": "/work/project"}
    prompt: dict[str, object] = {
        "content": [{"type": "text", "text": "a very long session"}],
        "source": {"kind": "user"},
    }
    seq = 0
    batch: list[str] = []
    with path.open("wb") as out:
        out.write(compressor.compress((json.dumps(header) + "\n").encode()))

        def event(kind: str, data: dict[str, object]) -> None:
            nonlocal seq
            seq += 1
            batch.append(json.dumps({"type": kind, "seq": seq, "time": START_MS + seq * 10, "data": data}))

        event("user/message", prompt)
        for call, text, failed in SHAPES[shape](total):
            arguments = json.dumps(call.arguments)
            event("tool/call", {"callId": call.call_id, "name": call.name, "arguments": arguments})
            part = {
                "type": "tool-result",
                "toolCallId": call.call_id,
                "isError": failed,
                "content": [{"type": "text", "text": text}],
            }
            event("tool/result", {"message": {"content": [part]}})
            if len(batch) >= 2000:
                out.write(compressor.compress(("\n".join(batch) + "\n").encode()))
                batch.clear()
        if batch:
            out.write(compressor.compress(("\n".join(batch) + "\n").encode()))
    return path


class _Stop(Exception):
    """Raised in the decisions' loop when the bench asks it to stop (SIGTERM)."""


def decisions_alone(total: int, shape: str = "reads", *, until_stopped: bool = False) -> int:
    """The decisions alone, as the live worker makes them: precheck, the verdict it kept committed
    (the shim's guard; decide when none was kept) and record_result of every call, made as they
    are decided; how many calls were decided. ``until_stopped``: the session again and again (each
    time a fresh ``Breaker``) until SIGTERM, so that the decisions go on as long as what they are
    compared with does."""

    def stop(*_: object) -> None:
        raise _Stop

    decided = 0
    if until_stopped:
        signal.signal(signal.SIGTERM, stop)
    try:
        while True:
            breaker = Breaker(default_config())
            for call, text, failed in SHAPES[shape](total):
                breaker.precheck("main", call)
                verdict = breaker.commit("main", call.call_id) or breaker.decide("main", call)
                facts: dict[str, object] = {"isError": failed or isinstance(verdict, Deny)}
                if isinstance(verdict, Deny):
                    text = "Error: " + verdict.message
                elif call.name == "bash":
                    facts["exitCode"] = 2 if failed else 1
                breaker.record_result("main", call.call_id, text, facts)
                decided += 1
            if not until_stopped:
                return decided
    except _Stop:
        return decided


@dataclass(frozen=True)
class Measured:
    """One process of a sliced run: CPU seconds (user + system), peak RSS in MB, what it printed."""

    cpu: float
    peak_mb: float
    printed: str


def run_sliced(commands: dict[str, list[str]], endless: str, until: str, folder: Path) -> dict[str, Measured]:
    """Run ``commands`` taking turns, one at a time, each for ``SLICE`` seconds while the others are
    stopped (SIGSTOP): so each meets the same load from the rest of the machine, spread over the
    same minutes, and none waits for the CPU behind another of them. ``endless`` runs until
    ``until`` has ended, then is told to stop (SIGTERM); the rest run to their end."""
    processes: dict[str, subprocess.Popen[bytes]] = {}
    measured: dict[str, Measured] = {}

    def reap(name: str) -> None:
        _, status, usage = os.wait4(processes[name].pid, 0)
        processes[name].returncode = code = os.waitstatus_to_exitcode(status)
        if code != 0:
            error = (folder / f"{name}.err").read_text()[-2000:]
            raise SystemExit(f"{' '.join(commands[name])} exited {code}: {error}")
        printed = (folder / f"{name}.out").read_text()
        measured[name] = Measured(usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, printed)

    try:
        for name, command in commands.items():
            with (folder / f"{name}.out").open("wb") as out, (folder / f"{name}.err").open("wb") as err:
                processes[name] = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=err)
            os.kill(processes[name].pid, signal.SIGSTOP)
        while len(measured) < len(commands):
            for name in commands:
                if name in measured:
                    continue
                if name == endless and until in measured:
                    os.kill(processes[name].pid, signal.SIGTERM)
                    os.kill(processes[name].pid, signal.SIGCONT)
                    reap(name)
                    continue
                process = processes[name]
                os.kill(process.pid, signal.SIGCONT)
                pid_fd = os.pidfd_open(process.pid)
                try:
                    ended, _, _ = select.select([pid_fd], [], [], SLICE)
                finally:
                    os.close(pid_fd)
                if ended:
                    reap(name)
                else:
                    os.kill(process.pid, signal.SIGSTOP)
    finally:
        for process in processes.values():  # an error or ^C: none left behind, stopped
            if process.returncode is None:
                process.kill()
                process.wait()
    return measured


def open_in_chromium(page: Path, times: int = 3) -> list[float] | None:
    """Seconds headless Chromium takes to load ``page`` and paint it, each of ``times`` fresh
    browsers; None without Chromium."""
    from tests.cdp import Browser, chromium_binary

    binary = chromium_binary()
    if binary is None:
        return None
    seconds = []
    for _ in range(times):
        with Browser(binary) as browser:
            browser.send("Page.enable")
            started = time.perf_counter()
            browser.send("Page.navigate", url=page.as_uri())
            browser.wait_for("Page.loadEventFired", timeout=120)
            browser.evaluate("new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
            seconds.append(time.perf_counter() - started)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--shape", choices=sorted(SHAPES), default="reads")
    parser.add_argument(
        "--decisions-only",
        action="store_true",
        help="make the decisions alone until SIGTERM, print how many were made",
    )
    options = parser.parse_args()
    total, shape = options.calls, options.shape
    if options.decisions_only:
        print(decisions_alone(total, shape, until_stopped=True))
        return
    load_before = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    with tempfile.TemporaryDirectory(prefix="rtb-scale-") as scratch:
        folder = Path(scratch)
        started = time.perf_counter()
        log = write_log(folder / "logs", total, shape)
        written = time.perf_counter() - started
        log_mb = log.stat().st_size / 1e6
        page = folder / "page.html"
        here = str(Path(__file__).resolve())
        commands = {
            "decisions": [sys.executable, here, "--calls", str(total), "--shape", shape, "--decisions-only"],
            "replay": [sys.executable, "-m", "breaker", "replay", str(log.parent)],
        }
        if shape == "reads":
            commands["html"] = [
                sys.executable,
                "-m",
                "breaker",
                "replay",
                "--html",
                str(page),
                str(log.parent),
            ]
        runs: list[dict[str, Measured]] = []
        started = time.perf_counter()
        for run in range(options.runs):  # --html in the first run only: its target is far off
            taking_turns = (
                commands if run == 0 else {name: commands[name] for name in ("decisions", "replay")}
            )
            runs.append(run_sliced(taking_turns, "decisions", "replay", folder))
        elapsed = time.perf_counter() - started
        opened = open_in_chromium(page) if "html" in commands else None
        size_mb = page.stat().st_size / 1e6 if "html" in commands else 0.0
    load_after = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(
        f"A generated session of {total:,} calls, shape `{shape}` ({log_mb:.1f} MB of zstd log,"
        f" written in {written:.0f} s)."
    )
    print(
        f"{options.runs} runs, {elapsed / 60:.0f} minutes in all. In each, the decisions alone and"
        f" `rtb replay`{' (in the first, `--html` too)' if 'html' in commands else ''} took turns of"
        f" {SLICE} s on one CPU, the others stopped meanwhile; the decisions over and over until the"
        " replay was done, counted per call."
    )
    print(
        "Figures are CPU time (user + system), the median of the runs; a ratio is of one run's figures."
        f" Load average before: {load_before}; after: {load_after}."
    )
    print()
    table(runs, total, opened, size_mb)


def table(runs: list[dict[str, Measured]], total: int, opened: list[float] | None, size_mb: float) -> None:
    """The figures of ``runs`` as a Markdown table: the decisions, the replay, ``--html`` and the
    page when the first run made one."""
    # The decisions' CPU time per call, over every call they made while the replay ran.
    per_decision = [run["decisions"].cpu / int(run["decisions"].printed) for run in runs]
    replay_ratios = [run["replay"].cpu / total / each for run, each in zip(runs, per_decision, strict=True)]
    decide_cpu = statistics.median(per_decision) * total
    replay_cpu = statistics.median(run["replay"].cpu for run in runs)
    replay_mb = max(run["replay"].peak_mb for run in runs)
    print("| | CPU time | per call | peak RSS | each run | target |")
    print("|---|---|---|---|---|---|")
    print(f"| the decisions alone | {decide_cpu:.1f} s | {decide_cpu / total * 1e6:.0f} µs | | | |")
    ratio = statistics.median(replay_ratios)
    verdict = "ok" if ratio <= 1.5 and replay_mb <= 300 else "MISSED"
    print(
        f"| `rtb replay` | {replay_cpu:.1f} s, {ratio:.2f}x the decisions "
        f"| {replay_cpu / total * 1e6:.0f} µs | {replay_mb:.0f} MB "
        f"| {', '.join(f'{each:.2f}x' for each in replay_ratios)} | ≤ 1.5x, ≤ 300 MB: {verdict} |"
    )
    if "html" not in runs[0]:
        return
    html, html_mb = runs[0]["html"].cpu, runs[0]["html"].peak_mb
    ratio = html / runs[0]["replay"].cpu
    verdict = "ok" if ratio <= 2 and size_mb <= 20 else "MISSED"
    print(
        f"| `rtb replay --html` | {html:.1f} s, {ratio:.2f}x the replay beside it "
        f"| {html / total * 1e6:.0f} µs | {html_mb:.0f} MB | the first "
        f"| ≤ 2x replay, page ≤ 20 MB: {verdict} |"
    )
    if opened is None:
        print(f"| the page ({size_mb:.1f} MB) in headless Chromium | (no chromium on PATH) | | | | ≤ 3 s |")
    else:
        verdict = "ok" if max(opened) <= 3 else "MISSED"
        print(
            f"| the page ({size_mb:.1f} MB) in headless Chromium | {statistics.median(opened):.2f} s to load "
            f"and paint | | | {', '.join(f'{each:.2f} s' for each in opened)} | ≤ 3 s: {verdict} |"
        )


if __name__ == "__main__":
    main()
