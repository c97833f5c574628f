"""How the decision's cost grows with the work: python3 bench/scaling.py [--session-calls N]

In the worker's own Python, no pipe: ``Breaker.decide`` timed per call, and the process's resident
memory (VmRSS), against
- the number of live agents (1 to 10,000, each with a full window of distinct curl calls; calls
  then go to agents picked at random), and what an agent holds when its calls' results came too
  (a window of distinct reads, each answered with 200 to 20,000 characters),
- the window (12 to 256 calls, one agent, window full),
- the size of a call's argument (a ``write`` of 1 KB to 1 MB, every call distinct),
- the length of a session (one agent calling on and on, distinct `read` calls, up to a million):
  the time per call and the memory at each point, which must stay flat.
Memory per agent and per window entry is what Python allocated for them (tracemalloc, in a pass of
its own, untimed), divided by what was added; the RSS column is the whole process. The idle
worker's own RSS (configured, no agent) is printed by bench/worker.mjs. Calls are made as they are
timed (a ToolCall costs about a microsecond), so that no list of them weighs on the memory figures.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from breaker.core.config import load_config
from breaker.core.decision import Breaker
from breaker.core.reading.fingerprints import ToolCall


def rss_mb() -> float:
    gc.collect()
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def curl(agent: int, n: int) -> ToolCall:
    command = f'curl -sSL --max-time 30 "https://api{agent % 50}.example.org/v1/items?page={n}&agent={agent}"'
    return ToolCall("bash", {"command": command, "description": "fetch a page"}, f"a{agent}-c{n}")


def read(n: int) -> ToolCall:
    return ToolCall(
        "read", {"path": f"/work/project/src/module_{n % 500}.py", "offset": n, "limit": 200}, f"c{n}"
    )


def write(size: int, n: int) -> ToolCall:
    line = f"    total = sum(value * value for value in values if value % {n})  # generated\n"
    content = (line * (size // len(line) + 1))[:size]
    return ToolCall("write", {"path": f"/work/project/src/generated_{n}.py", "content": content}, f"c{n}")


def per_call_us(calls: Iterable[tuple[int, ToolCall]], decide: Callable[[int, ToolCall], object]) -> float:
    count = 0
    started = time.perf_counter()
    for agent, call in calls:
        decide(agent, call)
        count += 1
    return (time.perf_counter() - started) / count * 1e6


def allocated(fill: Callable[[Breaker], None], config: dict[str, object]) -> int:
    """Bytes Python holds for a breaker after ``fill`` (tracemalloc), the breaker's own start excluded."""
    gc.collect()
    tracemalloc.start()
    breaker = Breaker(load_config(config))
    empty = tracemalloc.get_traced_memory()[0]
    fill(breaker)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - empty
    tracemalloc.stop()
    return held


def fill_agents(count: int, window: int = 12) -> Callable[[Breaker], None]:
    def fill(breaker: Breaker) -> None:
        for agent in range(1, count + 1):
            for n in range(window):
                breaker.decide(agent, curl(agent, n))

    return fill


def agents_table(calls: int) -> None:
    print("| live agents, full windows | decide per call | held per agent | process RSS |")
    print("|---|---|---|---|")
    breaker = Breaker(load_config({}))
    live = 0
    first_us = None
    for target in (1, 100, 1_000, 10_000, 20_000):
        for agent in range(live + 1, target + 1):
            for n in range(12):
                breaker.decide(agent, curl(agent, n))
        live = target
        rng = random.Random(target)
        sample = ((agent, curl(agent, 1000 + i)) for i in range(calls) for agent in [rng.randint(1, live)])
        us = per_call_us(sample, breaker.decide)
        first_us = first_us or us
        per_agent = allocated(fill_agents(min(live, 1000)), {}) / min(live, 1000)
        print(
            f"| {live:,} (held: {breaker.stats()['agents']:,}) | {us:.1f} µs ({us / first_us:.2f}x) | "
            f"{per_agent / 1024:.1f} KB | {rss_mb():.1f} MB |"
        )
    print("\nPast maxAgents (10,000 by default) the idlest agent is forgotten: 20,000 agents hold no more.")


def answered(size: int, agents: int = 200) -> Callable[[Breaker], None]:
    """Each of ``agents`` agents fills its window with distinct ``read`` calls, each answered with a
    text of ``size`` characters (distinct lines: no two answers alike)."""

    def fill(breaker: Breaker) -> None:
        window = breaker.config.window
        for agent in range(1, agents + 1):
            for n in range(window):
                call = ToolCall("read", {"path": f"/w/src/module_{n}.py"}, f"call-{agent}-{n}")
                breaker.decide(agent, call)
                lines = (
                    f"{agent:>6} {n:>4} {line:>6}  value = compute({line})\n"
                    for line in range(size // 40 + 1)
                )
                breaker.record_result(agent, call.call_id, "".join(lines)[:size])

    return fill


def results_table() -> None:
    print("| each call's result | held per agent, full window of distinct reads, each answered |")
    print("|---|---|")
    for size in (200, 3_000, 20_000):
        print(f"| {size:,} characters | {allocated(answered(size), {}) / 200 / 1024:.1f} KB |")


def window_table(calls: int) -> None:
    print("| window | decide per call | held per window entry |")
    print("|---|---|---|")
    first_us = None
    for window in (12, 32, 64, 128, 256):
        agents = 100
        per_entry = allocated(fill_agents(agents, window), {"window": window}) / (agents * window)
        breaker = Breaker(load_config({"window": window}))
        fill_agents(1, window)(breaker)
        sample = ((1, curl(1, 10_000 + i)) for i in range(calls))
        us = per_call_us(sample, breaker.decide)
        first_us = first_us or us
        print(f"| {window} | {us:.1f} µs ({us / first_us:.2f}x) | {per_entry:.0f} bytes |")


def size_table(calls: int) -> None:
    print("| argument size | decide per call | per KB |")
    print("|---|---|---|")
    first_us = None
    for size in (1024, 10 * 1024, 100 * 1024, 1024 * 1024):
        count = max(20, min(calls, calls * 16 * 1024 // size))
        breaker = Breaker(load_config({}))
        for n in range(12):
            breaker.decide(1, write(size, n))
        sample = ((1, write(size, 100 + i)) for i in range(count))
        us = per_call_us(sample, breaker.decide)
        first_us = first_us or us
        print(f"| {size // 1024:,} KB | {us:,.0f} µs ({us / first_us:.1f}x) | {us / (size / 1024):.2f} µs |")


def session_table(total: int) -> None:
    print("| calls so far in one session | decide per call (last stretch) | worker RSS |")
    print("|---|---|---|")
    breaker = Breaker(load_config({}))
    done = 0
    checkpoint = 1_000
    while checkpoint <= total:
        stretch = ((1, read(n)) for n in range(done, checkpoint))
        us = per_call_us(stretch, breaker.decide)
        done = checkpoint
        print(f"| {done:,} | {us:.1f} µs | {rss_mb():.1f} MB |")
        checkpoint *= 10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="timed calls per row")
    parser.add_argument("--session-calls", type=int, default=1_000_000)
    options = parser.parse_args()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    agents_table(options.calls)
    print()
    results_table()
    print()
    window_table(options.calls)
    print()
    size_table(options.calls)
    print()
    session_table(options.session_calls)
    print(f"\nload average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
