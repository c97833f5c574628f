"""Worker memory and time per hostile frame: python3 bench/frame_memory.py [--mb 16] [--shapes ...]

Each shape is a guard request whose arguments fill about ``--mb`` megabytes with one kind of
msgpack value, the cheapest on the wire for what it costs decoded (an empty array or map is one
byte). A fresh worker (``python -m breaker.worker``) is configured, sent the frame and then one
ordinary guard; the table gives the reply, the time to it, and the worker's resident memory
before and at its peak (``VmHWM``), i.e. what one frame can cost the worker.
"""

from __future__ import annotations

import argparse
import os
import struct
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from breaker.protocol import MAX_FRAME_VALUES  # noqa: E402  (after the path is set)

#: shape name → (value filling ``size`` bytes of msgpack)
SHAPES: dict[str, Callable[[int], object]] = {
    "empty arrays": lambda size: [[]] * size,
    "empty maps": lambda size: [{}] * size,
    "nils": lambda size: [None] * size,
    "2-letter strings": lambda size: ["ab"] * (size // 3),
    "one string": lambda size: "x" * size,
    # The costliest frame still answered, whatever --mb says: as many empty arrays as allowed.
    "empty arrays at the value limit": lambda _size: [[]] * (MAX_FRAME_VALUES - 20),
}


def frame(message: dict[str, Any]) -> bytes:
    body: bytes = msgpack.packb(message, use_bin_type=True)
    return struct.pack(">I", len(body)) + body


def memory_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise LookupError(field)


def reply(stream: Any) -> dict[str, Any]:
    (length,) = struct.unpack(">I", stream.read(4))
    answer: dict[str, Any] = msgpack.unpackb(stream.read(length))
    return answer


def measure(shape: str, size: int) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    worker = subprocess.Popen(
        [sys.executable, "-m", "breaker.worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
    )
    assert worker.stdin is not None and worker.stdout is not None
    try:
        worker.stdin.write(frame({"id": 1, "op": "configure", "config": None}))
        worker.stdin.flush()
        assert reply(worker.stdout)["ok"]
        before = memory_kb(worker.pid, "VmRSS")
        data = frame(
            {"id": 2, "op": "guard", "agent": 1, "call": "c", "name": "bash", "args": SHAPES[shape](size)}
        )
        started = time.perf_counter()
        worker.stdin.write(data)
        worker.stdin.flush()
        answer = reply(worker.stdout)
        elapsed = time.perf_counter() - started
        peak = memory_kb(worker.pid, "VmHWM")
        ordinary = {"id": 3, "op": "guard", "agent": 1, "call": "d", "name": "bash", "args": {}}
        worker.stdin.write(frame(ordinary))
        worker.stdin.flush()
        after = reply(worker.stdout)
        outcome = "answered" if answer["ok"] else f"refused: {answer['error'][:60]}"
        return (
            f"| {shape} | {len(data) / 2**20:.1f} MB | id {answer['id']}: {outcome} | {elapsed:.2f} s "
            f"| {before / 1024:.0f} MB | {peak / 1024:.0f} MB | {'yes' if after['ok'] else 'no'} |"
        )
    finally:
        worker.kill()
        worker.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=16)
    parser.add_argument("--shapes", nargs="*", default=list(SHAPES), choices=list(SHAPES))
    options = parser.parse_args()
    size = int(options.mb * 2**20)
    print("| arguments | frame | reply | time | RSS before | peak RSS | next call answered |")
    print("|---|---|---|---|---|---|---|")
    for shape in options.shapes:
        print(measure(shape, size), flush=True)


if __name__ == "__main__":
    main()
