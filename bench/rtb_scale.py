"""`rtb replay` and `--html` over one long generated session: python3 bench/rtb_scale.py [--calls N]

A dsh-shaped log (``session.jsonl.zstd``, a zstd frame per flushed batch) of N calls by one agent:
distinct ``read`` calls, and every 250 calls a loop of 8 identical failing ``bash`` calls (four of
them stopped). Then, interleaved so that a change in the machine's load touches all of them alike:

- the decisions alone: the same calls and results through ``Breaker`` (precheck, decide,
  record_result), made as they are decided (no log, no report), in a process of its own;
- ``rtb replay`` (the text report) of the log, a process of its own started at the same moment
  (so both meet the same load from the rest of the machine): time and peak RSS;
- ``rtb replay --html``: time, peak RSS, the page's size, and (with Chromium installed) how long
  headless Chromium takes to load the page and paint it.

Each figure is the median of ``--runs``; the targets are printed beside them. The ratios are of CPU
time (what the process itself spent), so other work on a shared machine does not skew them; the
wall time is printed beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from breaker.core.config import default_config  # noqa: E402
from breaker.core.decision import Breaker  # noqa: E402
from breaker.core.judging.verdicts import Deny  # noqa: E402
from breaker.core.reading.fingerprints import ToolCall  # noqa: E402

LOOP_EVERY = 250
LOOP_LENGTH = 8
SESSION = "session-5ca1e000-0000-4000-8000-000000000001"
START_MS = 1_796_000_000_000


def calls(total: int) -> Iterator[tuple[ToolCall, str, bool]]:
    """The session's calls in order: (call, its result text, whether the result is an error)."""
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


def write_log(folder: Path, total: int) -> Path:
    """The session log, written as dsh writes it: a header, then a frame per batch of events."""
    import zstandard

    path = folder / "--work--" / SESSION / "session.jsonl.zstd"
    path.parent.mkdir(parents=True)
    compressor = zstandard.ZstdCompressor(level=3)
    header = {"type": "session", "id": SESSION, "createdAt": START_MS, "cwd": "/work/project"}
    prompt = {"content": [{"type": "text", "text": "a very long session"}], "source": {"kind": "user"}}
    seq = 0
    batch: list[str] = []
    with path.open("wb") as out:
        out.write(compressor.compress((json.dumps(header) + "\n").encode()))

        def event(kind: str, data: dict[str, object]) -> None:
            nonlocal seq
            seq += 1
            batch.append(json.dumps({"type": kind, "seq": seq, "time": START_MS + seq * 10, "data": data}))

        event("user/message", prompt)
        for call, text, failed in calls(total):
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


def decisions_alone(total: int) -> tuple[float, float]:
    """(seconds, CPU seconds) the decisions take alone: precheck, decide and record_result of
    every call, made as they are decided."""
    breaker = Breaker(default_config())
    started, cpu = time.perf_counter(), time.process_time()
    for call, text, failed in calls(total):
        breaker.precheck("main", call)
        verdict = breaker.decide("main", call)
        facts: dict[str, object] = {"isError": failed or isinstance(verdict, Deny)}
        if isinstance(verdict, Deny):
            text = "Error: " + verdict.message
        elif call.name == "bash":
            facts["exitCode"] = 2
        breaker.record_result("main", call.call_id, text, facts)
    return time.perf_counter() - started, time.process_time() - cpu


def run_rtb(argv: list[str]) -> tuple[float, float, float]:
    """(seconds, CPU seconds, peak RSS in MB) of one ``rtb`` process."""
    [measured] = run_together([[sys.executable, "-m", "breaker", *argv]])
    return measured


def run_together(commands: list[list[str]]) -> list[tuple[float, float, float]]:
    """Start ``commands`` at once and wait for all: (seconds, CPU seconds, peak RSS in MB) of
    each. Run side by side, two processes meet the same load from the rest of the machine."""
    started = time.perf_counter()
    processes = [
        subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for command in commands
    ]
    measured = []
    for process, command in zip(processes, commands, strict=True):
        assert process.stderr is not None
        err = process.stderr.read()
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            raise SystemExit(f"{' '.join(command)} exited {process.returncode}: {err.decode()[-2000:]}")
        measured.append(
            (time.perf_counter() - started, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)
        )
    return measured


def open_in_chromium(page: Path) -> float | None:
    """Seconds headless Chromium takes to load ``page`` and paint it; None without Chromium."""
    from tests.cdp import Browser, chromium_binary

    binary = chromium_binary()
    if binary is None:
        return None
    with Browser(binary) as browser:
        browser.send("Page.enable")
        started = time.perf_counter()
        browser.send("Page.navigate", url=page.as_uri())
        browser.wait_for("Page.loadEventFired", timeout=120)
        browser.evaluate("new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument(
        "--decisions-only", action="store_true", help="time the decisions alone, print nothing"
    )
    options = parser.parse_args()
    total = options.calls
    if options.decisions_only:
        decisions_alone(total)
        return
    with tempfile.TemporaryDirectory(prefix="rtb-scale-") as scratch:
        folder = Path(scratch)
        started = time.perf_counter()
        log = write_log(folder / "logs", total)
        written = time.perf_counter() - started
        log_mb = log.stat().st_size / 1e6
        page = folder / "page.html"
        alone: list[tuple[float, float]] = []
        replay: list[tuple[float, float, float]] = []
        html: list[tuple[float, float, float]] = []
        decisions = [sys.executable, str(Path(__file__).resolve()), "--calls", str(total), "--decisions-only"]
        for _ in range(options.runs):
            by_itself, replayed = run_together(
                [decisions, [sys.executable, "-m", "breaker", "replay", str(log.parent)]]
            )
            alone.append(by_itself[:2])
            replay.append(replayed)
            html.append(run_rtb(["replay", "--html", str(page), str(log.parent)]))
        opened = open_in_chromium(page)
        size_mb = page.stat().st_size / 1e6
    decide_s, decide_cpu = (statistics.median(run[i] for run in alone) for i in (0, 1))
    replay_s, replay_cpu = (statistics.median(run[i] for run in replay) for i in (0, 1))
    html_s, html_cpu = (statistics.median(run[i] for run in html) for i in (0, 1))
    replay_mb = max(run[2] for run in replay)
    html_mb = max(run[2] for run in html)
    print(
        f"A generated session of {total:,} calls ({log_mb:.1f} MB of zstd log, written in {written:.0f} s);"
    )
    print(f"median of {options.runs} run(s); the decisions alone and `rtb replay` run side by side.")
    print("The ratios are of CPU time (user + system), which waiting for the CPU does not stretch;")
    print("wall time beside it (those two share the machine with each other). Load average at the end:")
    print(f"{' '.join(Path('/proc/loadavg').read_text().split()[:3])}.")
    print()
    print("| | CPU time | per call | wall time | peak RSS | target |")
    print("|---|---|---|---|---|---|")
    per_call = decide_cpu / total * 1e6
    print(f"| the decisions alone | {decide_cpu:.1f} s | {per_call:.0f} µs | {decide_s:.1f} s | | |")
    ratio = replay_cpu / decide_cpu
    verdict = "ok" if ratio <= 1.5 and replay_mb <= 300 else "MISSED"
    print(
        f"| `rtb replay` | {replay_cpu:.1f} s ({ratio:.2f}x the decisions) "
        f"| {replay_cpu / total * 1e6:.0f} µs "
        f"| {replay_s:.1f} s | {replay_mb:.0f} MB | ≤ 1.5x, ≤ 300 MB: {verdict} |"
    )
    ratio = html_cpu / replay_cpu
    verdict = "ok" if ratio <= 2 and size_mb <= 20 else "MISSED"
    print(
        f"| `rtb replay --html` | {html_cpu:.1f} s ({ratio:.2f}x replay) | {html_cpu / total * 1e6:.0f} µs "
        f"| {html_s:.1f} s | {html_mb:.0f} MB | ≤ 2x replay, page ≤ 20 MB: {verdict} |"
    )
    if opened is None:
        print("| the page in headless Chromium | | | (no chromium on PATH) | | ≤ 3 s |")
    else:
        verdict = "ok" if opened <= 3 else "MISSED"
        print(
            f"| the page ({size_mb:.1f} MB) in headless Chromium | | | {opened:.2f} s to load and paint "
            f"| | ≤ 3 s: {verdict} |"
        )


if __name__ == "__main__":
    main()
