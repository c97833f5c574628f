"""Decision cost inside Python alone (no pipe): python3 bench/decision.py [--calls N] [--profile SHAPE]

For each call shape, times ``Breaker.decide`` (fingerprinting, counting, committing) for one agent
whose window is already full, with every call distinct so that each is fingerprinted and
committed like real work. ``fingerprint`` is ``fingerprint_call`` alone; ``decide`` includes it.
``--profile SHAPE`` runs that shape under pyinstrument instead (install it yourself; it is not a
project dependency).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from breaker.core.config import BreakerConfig, default_config
from breaker.core.decision import Breaker
from breaker.core.reading.fingerprints import ToolCall, fingerprint_call

Shape = Callable[[int], ToolCall]

_PYTHON_LINE = "    total = sum(value * value for value in values if value % 3)  # line {n}\n"


def _curl(n: int) -> ToolCall:
    command = (
        f'curl -sSL --max-time 30 -H "Accept: application/json" '
        f'"https://open.canada.ca/data/api/action/package_search?q=housing&rows=10&start={n}" '
        f"-o /tmp/result-{n}.json"
    )
    return ToolCall("bash", {"command": command, "description": "search the catalogue"}, f"c{n}")


def _read(n: int) -> ToolCall:
    arguments = {"path": f"/work/project/src/module_{n % 50}.py", "offset": n, "limit": 200}
    return ToolCall("read", arguments, f"c{n}")


def _write(n: int) -> ToolCall:
    content = "".join(_PYTHON_LINE.format(n=line) for line in range(14))  # about 1 KB
    return ToolCall("write", {"path": f"/work/project/src/generated_{n}.py", "content": content}, f"c{n}")


def _write_large(n: int) -> ToolCall:
    content = "".join(_PYTHON_LINE.format(n=line) for line in range(880))  # about 64 KB
    return ToolCall("write", {"path": f"/work/project/src/generated_{n}.py", "content": content}, f"c{n}")


def _edit(n: int) -> ToolCall:
    arguments = {
        "path": "/work/project/src/app.py",
        "old_string": f"    return compute(values, limit={n})\n",
        "new_string": f"    return compute(values, limit={n + 1}, strict=True)\n",
    }
    return ToolCall("edit", arguments, f"c{n}")


def _web_fetch(n: int) -> ToolCall:
    url = f"https://docs.python.org/3/library/json.html?version={n}#basic-usage"
    arguments = {"url": url, "prompt": "summarise"}
    return ToolCall("web_fetch", arguments, f"c{n}")


def _heredoc(n: int) -> ToolCall:
    body = "".join(_PYTHON_LINE.format(n=line) for line in range(80))  # about 6 KB
    command = f"cat > /tmp/script_{n}.py <<'EOF'\n{body}EOF\npython3 /tmp/script_{n}.py"
    return ToolCall("bash", {"command": command}, f"c{n}")


def _padded_echo(size: int) -> Shape:
    padding = "x" * (size - 64)

    def shape(n: int) -> ToolCall:
        return ToolCall("bash", {"command": f"echo {n} {padding}", "description": "bench"}, f"c{n}")

    return shape


def _words_echo(size: int) -> Shape:
    """A command of many short words: the lexer's worst realistic case per byte."""
    words = " ".join(f"w{index}" for index in range(size // 6))[: size - 64]

    def shape(n: int) -> ToolCall:
        return ToolCall("bash", {"command": f"echo {n} {words}"}, f"c{n}")

    return shape


SHAPES: dict[str, tuple[Shape, int]] = {
    # name: (call maker, calls to time relative to --calls)
    "curl (typical)": (_curl, 1),
    "read": (_read, 1),
    "write 1 KB": (_write, 1),
    "write 64 KB": (_write_large, 20),
    "edit": (_edit, 1),
    "web_fetch": (_web_fetch, 1),
    "heredoc 6 KB": (_heredoc, 4),
    "bash 1 KB echo": (_padded_echo(1024), 1),
    "bash 64 KB echo": (_padded_echo(64 * 1024), 20),
    "bash 64 KB words": (_words_echo(64 * 1024), 20),
    "bash 1 MB echo": (_padded_echo(1024 * 1024), 200),
}


def _time(count: int, run: Callable[[int], object]) -> list[float]:
    """Microseconds per call of ``run(n)`` over ``count`` calls, after a warm-up."""
    for n in range(min(200, count)):
        run(-1 - n)
    samples = []
    clock = time.perf_counter_ns
    for n in range(count):
        started = clock()
        run(n)
        samples.append((clock() - started) / 1000)
    return samples


def _percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def measure(config: BreakerConfig, calls: int) -> None:
    print(f"python {sys.version.split()[0]}, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'shape':<20} {'kinds':<34} {'fingerprint p50':>15} {'decide p50':>11} {'p99':>8} {'mean':>8}")
    for name, (shape, divisor) in SHAPES.items():
        count = max(50, calls // divisor)
        fingerprint, decide = _measure_shape(config, shape, count)
        kinds = ",".join(dict.fromkeys(fp.kind for fp in fingerprint_call(shape(0), config).fingerprints))
        print(
            f"{name:<20} {kinds:<34} {_percentile(fingerprint, 0.5):>12.1f} µs"
            f" {_percentile(decide, 0.5):>8.1f} µs {_percentile(decide, 0.99):>5.0f} µs"
            f" {statistics.fmean(decide):>5.0f} µs"
        )


def _measure_shape(config: BreakerConfig, shape: Shape, count: int) -> tuple[list[float], list[float]]:
    """Per-call microseconds of fingerprinting alone and of the whole decision, distinct calls."""
    made = [shape(n) for n in range(count)]

    def call(n: int) -> ToolCall:
        return made[n] if n >= 0 else shape(n)  # negative: warm-up calls, never timed

    fingerprint = _time(count, lambda n: fingerprint_call(call(n), config))
    breaker = Breaker(config)
    for n in range(config.window):  # a full window before timing
        breaker.decide(1, shape(-10_000 - n))
    decide = _time(count, lambda n: breaker.decide(1, call(n)))
    return fingerprint, decide


def profile(config: BreakerConfig, name: str, calls: int) -> None:
    from pyinstrument import Profiler  # a tool, not a dependency: pip install pyinstrument

    shape, divisor = SHAPES[name]
    made = [shape(n) for n in range(max(50, calls // divisor))]
    breaker = Breaker(config)
    with Profiler(interval=0.0001) as profiler:
        for call in made:
            breaker.decide(1, call)
    profiler.print(show_all=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--profile", choices=list(SHAPES), help="profile one shape with pyinstrument")
    options = parser.parse_args()
    config = default_config()
    if options.profile:
        profile(config, options.profile, options.calls)
    else:
        measure(config, options.calls)


if __name__ == "__main__":
    main()
