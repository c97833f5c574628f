"""The worker's own Python time per call for bench/pipeline.mjs's call shapes, one agent calling
back to back: what bounds such an agent's calls once the shim runs ahead of the worker.

``python bench/worker_time.py [--calls N] [--agents N] [--shapes 0,1,2,3,4] [--profile INDEX]``

The frames are the ones the real shim sends (bench/worker_frames.mjs records them through
node-shim/index.js on the fake dsh, its worker running): per call a guard event and its result
awaited, the agent's first call a preflight and a commit. Each agent's frames are replayed through
the worker's own path (``FrameDecoder``, ``RequestHandler``, the replies encoded and written to
/dev/null) with a handler configured as the shim configured its worker, the frames of one write of
the shim's (its events, then the request after them) read at once as the worker reads them. Prints
per shape the CPU time per call (the agent's frames in all, over its calls; the median over
agents), the same with the writes of 3 calls read at once (the worker behind the shim by the
conditional promise of the default caps, as it mostly is back to back), the p50 and p99 of the time
per write read alone, and a digest of every reply to the writes read alone (the same frames must
get the same replies, byte for byte, from a change that only makes the worker faster).
``--record FILE`` keeps the frames recorded, ``--frames FILE`` replays such a file (two checkouts
timed on the same frames); ``--profile`` runs one shape under cProfile.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import hashlib
import json
import os
import pstats
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from breaker import worker  # noqa: E402
from breaker.frames import FrameDecoder, encode_frame_parts  # noqa: E402

SHORT_SHAPES = "0,1,2,3,4"
#: How many calls' writes the worker reads at once when it lags behind an agent calling back to
#: back: the shim goes as far ahead as the conditional promise of the default caps (3 calls).
LAGGING = 3


def recorded(calls: int, agents: int, shapes: str) -> dict[str, Any]:
    """bench/worker_frames.mjs's frames, its worker run by this interpreter."""
    env = {**os.environ, "RTB_PYTHON": os.environ.get("RTB_PYTHON", sys.executable)}
    command = ["node", str(ROOT / "bench" / "worker_frames.mjs"), str(calls), str(agents), *shapes.split(",")]
    output = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
    frames: dict[str, Any] = json.loads(output)
    return frames


def writes(frames: list[dict[str, Any]], first_id: int) -> list[bytes]:
    """The agent's frames as the shim writes them: events wait for the next request (one write)."""
    chunks: list[bytes] = []
    pending: list[bytes] = []
    for offset, frame in enumerate(frames):
        header, body = encode_frame_parts({"id": first_id + offset, **frame})
        pending += (header, body)
        if frame.get("reply") != "errors":
            chunks.append(b"".join(pending))
            pending = []
    if pending:
        chunks.append(b"".join(pending))
    return chunks


def configured(configure: dict[str, Any], output_fd: int) -> worker.RequestHandler:
    handler = worker.RequestHandler()
    worker._answer(handler, FrameDecoder().feed(b"".join(writes([configure], 0))), output_fd, output_fd)
    gc.freeze()  # as the worker does once started (breaker/worker.py main)
    return handler


def replies_digest(frames: dict[str, Any], shape: dict[str, Any]) -> str:
    """SHA-256 of every reply the worker writes for the shape's agents (its first 12 hex digits)."""
    written = hashlib.sha256()
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    try:
        for number, agent in enumerate(shape["agents"]):
            handler = configured(frames["configure"], write_end)
            for chunk in writes(agent, 1_000_000 * (number + 1)):
                replay(handler, [chunk], write_end)
                try:
                    while data := os.read(read_end, 1 << 20):
                        written.update(data)
                except BlockingIOError:
                    pass
    finally:
        os.close(read_end)
        os.close(write_end)
    return written.hexdigest()[:12]


def replay(handler: worker.RequestHandler, chunks: list[bytes], output_fd: int) -> list[int]:
    """Each write's CPU nanoseconds through the worker's path."""
    decoder = FrameDecoder()
    spent: list[int] = []
    clock = time.thread_time_ns  # CPU time: what other processes take of the CPU meanwhile is not counted
    for chunk in chunks:
        started = clock()
        worker._answer(handler, decoder.feed(chunk), output_fd, None)
        spent.append(clock() - started)
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=300, help="calls per agent (default 300)")
    parser.add_argument("--agents", type=int, default=5, help="agents per shape, timed apart (default 5)")
    parser.add_argument("--shapes", default=SHORT_SHAPES, help="bench/shapes.mjs indexes (short ones)")
    parser.add_argument("--record", metavar="FILE", help="keep the frames recorded in FILE (JSON)")
    parser.add_argument("--frames", metavar="FILE", help="replay the frames --record kept instead")
    parser.add_argument("--profile", type=int, metavar="INDEX", help="run this shape under cProfile instead")
    options = parser.parse_args()
    shapes = str(options.profile) if options.profile is not None else options.shapes
    if options.frames:
        frames = json.loads(Path(options.frames).read_text())
    else:
        frames = recorded(options.calls, options.agents, shapes)
    if options.record:
        Path(options.record).write_text(json.dumps(frames))
    output_fd = os.open(os.devnull, os.O_WRONLY)
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    version = sys.version.split()[0]
    print(f"python {version}, load average {load}; {options.calls} calls per agent, back to back, CPU time")
    print(f"{'shape':56} {'per call':>9} {'3 a read':>9} {'p50/write':>10} {'p99/write':>10} {'replies':>12}")
    for shape in frames["shapes"]:
        per_call: list[float] = []
        behind: list[float] = []
        every: list[int] = []
        profile = cProfile.Profile() if options.profile is not None else None
        for number, agent in enumerate(shape["agents"]):
            handler = configured(frames["configure"], output_fd)
            chunks = writes(agent, 1_000_000 * (number + 1))
            if profile is not None:
                profile.enable()
            spent = replay(handler, chunks, output_fd)
            if profile is not None:
                profile.disable()
            per_call.append(sum(spent) / shape["calls"] / 1000)
            every += spent
            handler = configured(frames["configure"], output_fd)
            together = [b"".join(chunks[at : at + LAGGING]) for at in range(0, len(chunks), LAGGING)]
            behind.append(sum(replay(handler, together, output_fd)) / shape["calls"] / 1000)
        every.sort()
        alone, lagging = statistics.median(per_call), statistics.median(behind)
        print(
            f"{shape['label'][:56]:56} {alone:6.1f} µs {lagging:6.1f} µs"
            f" {every[len(every) // 2] / 1000:7.1f} µs {every[len(every) * 99 // 100] / 1000:7.1f} µs"
            f" {replies_digest(frames, shape):>12}"
        )
        if profile is not None:
            pstats.Stats(profile).sort_stats("tottime").print_stats(35)


if __name__ == "__main__":
    main()
