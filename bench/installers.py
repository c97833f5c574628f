"""The first boot's pinned wheels against a maintained installer (uv), from nothing, interleaved.

``python3 bench/installers.py --uv PATH --runs 5`` times, in alternating order, each into an empty
folder with no cache, the worker's pinned packages (``worker-pins`` in pyproject.toml):

* this version's recipe (node-shim/boot/prepare_environment.py: a venv without pip, the pinned
  wheels fetched at once and unpacked);
* uv already on the machine: ``uv venv`` and ``uv pip install --no-cache`` of the same pins;
* uv fetched first, as a first boot would have to: the base Python's pip installs the ``uv`` wheel
  into a folder of its own (``--target``, no cache), then the same.

Both read the index they are configured with: run it with pip and uv pointed at the same one (by
default pypi.org: ``PIP_CONFIG_FILE=/dev/null``, no ``UV_*`` set). It prints a markdown table of
the medians and each run (docs/install.md quotes one).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def pins() -> list[str]:
    script = (
        "import('./node-shim/boot/package.js').then((m) => console.log(JSON.stringify(m.packageIdentity())))"
    )
    probe = subprocess.run(["node", "-e", script], cwd=ROOT, capture_output=True, text=True, check=True)
    found: list[str] = json.loads(probe.stdout)["pinned"]
    return found


def timed(step: Callable[[], None]) -> float:
    started = time.monotonic()
    step()
    return time.monotonic() - started


def run(command: list[str], env: dict[str, str]) -> None:
    subprocess.run(command, env=env, check=True, capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uv", required=True, help="the uv command to time")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    pinned = pins()
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_CACHE_DIR": "1", "UV_NO_CACHE": "1"}
    seconds: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="rtb-bench-installers-") as folder:
        scratch = Path(folder)

        def fresh(name: str) -> Path:
            target = scratch / name
            shutil.rmtree(target, ignore_errors=True)
            return target

        def this_recipe() -> None:
            script = str(ROOT / "node-shim" / "boot" / "prepare_environment.py")
            worker = ["msgpack>=1.0", "pydantic>=2.5"]
            run(["python3", "-I", script, "--pinned", ",".join(pinned), str(fresh("this")), "", *worker], env)

        def with_uv(uv: str) -> None:
            target = fresh("uv-env")
            run([uv, "venv", "--quiet", "--python", "python3", str(target)], env)
            run([uv, "pip", "install", "--quiet", "--python", str(target / "bin" / "python"), *pinned], env)

        def uv_fetched_first() -> None:
            tools = fresh("uv-tool")
            run(
                [
                    "python3",
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--no-cache-dir",
                    "--target",
                    str(tools),
                    "uv",
                ],
                env,
            )
            with_uv(str(tools / "bin" / "uv"))

        steps: list[tuple[str, Callable[[], None]]] = [
            ("this version's pinned wheels (prepare_environment.py)", this_recipe),
            ("uv already there: `uv venv` + `uv pip install`", lambda: with_uv(args.uv)),
            ("uv fetched first (pip --target), then the same", uv_fetched_first),
        ]
        print(f"load average before: {os.getloadavg()[0]:.2f}")
        for round_number in range(args.runs):
            for label, step in reversed(steps) if round_number % 2 else steps:
                seconds.setdefault(label, []).append(timed(step))
        print(f"load average after: {os.getloadavg()[0]:.2f}")
    heading = f"the worker's {len(pinned)} pinned packages from nothing ({args.runs} interleaved rounds)"
    print(f"\n| {heading} | median | runs |")
    print("|---|---|---|")
    for label, values in seconds.items():
        print(f"| {label} | {statistics.median(values):.2f} s | {', '.join(f'{v:.2f}' for v in values)} |")


if __name__ == "__main__":
    main()
