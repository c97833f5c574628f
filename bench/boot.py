"""What starting costs: python3 bench/boot.py --home DSH_HOME [--runs 7] [--reference DIR] [--first-boot N]

Boot time: a headless one-shot ``dsh "prompt"`` of the real pinned dsh whose scripted model answers
at once, from process start to exit, with this plugin mounted, without it, and (``--reference``,
a folder holding dsh-repeat-tool-breaker 0.5.2) with the reference plugin mounted instead; the
runs are interleaved (with, without, reference, with, ...) so load drifts hit each alike, and each
median is shown beside the no-plugin median. Two shapes: the model answers with text (no tool
call: the boot alone), and the model makes one ``bash`` call first (the first call waits for a
worker that an instant model left no time to start). ``--home`` is a
DSH_HOME made by ``compat/setup.sh VERSION dir HOME`` whose worker environment is ready (the
first boot there prepares it, before the timed runs).

First boot (``--first-boot N [--before HOME]``): N interleaved rounds, each from an empty cache and
an empty pip cache (every package fetched from the index as on a fresh machine): a real first boot
of dsh, timed by its own progress line (``worker environment ready after … s``); the same with
``--before``, a DSH_HOME (``compat/setup.sh``, ``PLUGIN_DIR`` an earlier checkout) mounting an
earlier version; this version's recipe alone (prepare_environment.py: a venv without pip, the
worker's pinned wheels fetched at once and unpacked into it, else the base Python's pip installs
the worker's packages into it; no byte-compilation); and ``python -m venv``
(with pip) + that pip installing the same packages. Then the lines a first boot prints.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "compat"))

from dsh_run import Target, run_dsh  # noqa: E402
from mock_model import MockModel, Script  # noqa: E402
from scenarios import bash  # noqa: E402

BUNDLE = "dsh-repeat-tool-breaker"
REFERENCE_LABEL = ["with reference 0.5.2"]


def profile_copy(home: Path, suffix: str, reference: Path | None) -> Path:
    """A copy of ``home`` whose profile lists every bundle but this plugin's, or mounts ``reference``."""
    copy = home.with_name(f"{home.name}-{suffix}")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(home, copy, symlinks=True, ignore=shutil.ignore_patterns("work", "sessions", "cache"))
    (copy / "cache").symlink_to(home / "cache")
    profile = copy / "profiles" / "compat"
    manifest_path = profile / "package.json"
    manifest = json.loads(manifest_path.read_text())
    if reference is None:
        bundles = manifest["dsh"]["profile"]["bundles"]
        manifest["dsh"]["profile"]["bundles"] = [name for name in bundles if name != BUNDLE]
        manifest_path.write_text(json.dumps(manifest, indent=2))
    else:
        installed = profile / "node_modules" / BUNDLE
        if installed.is_symlink() or installed.is_file():
            installed.unlink()
        else:
            shutil.rmtree(installed, ignore_errors=True)
        installed.symlink_to(reference)
    env_file = copy / "compat.env"
    env_file.write_text(env_file.read_text().replace(f"={home}/", f"={copy}/"))
    return copy


#: The folder the boots run in, new for each run of this bench: dsh keeps a session per boot under
#: its working folder, and the boots of a home whose folder holds more sessions take longer (190
#: sessions: +0.05 s a boot), so a folder reused from run to run would count them against this
#: plugin alone (the copies of the home, made anew each run, start without any).
WORK_FOLDER = f"bench-boot-{os.getpid()}"

#: Variables every timed boot runs with (``--python`` sets RTB_PYTHON here).
BOOT_ENV: dict[str, str] = {}


def cpu_seconds() -> float:
    """CPU time of this process's waited-for descendants: dsh's process, every thread of it (the
    plugin's helper thread too), and the processes dsh reaped: the worker, which ends on its
    input's end when dsh disposes the plugin at its exit, before dsh does."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


#: The shapes of a timed one-shot: what the model does before its answer.
SHAPES: dict[str, Script] = {
    "no tool call": Script((), final="done"),
    "one tool call": Script((bash("true", "a first command"),), final="done"),
}


def boot_seconds(
    home: Path, label: str, extra_env: dict[str, str] | None = None, script: Script = SHAPES["no tool call"]
) -> tuple[float, str, float]:
    """Seconds of one headless one-shot whose model follows `script`, what it printed on stderr and
    the CPU time dsh's process took; checks it succeeded."""
    target = Target.load(home)
    extra_env = {**BOOT_ENV, **(extra_env or {})}
    work = home / "work" / WORK_FOLDER
    work.mkdir(parents=True, exist_ok=True)
    model = MockModel(script, port=target.mock_port).start()
    cpu = cpu_seconds()
    try:
        run = run_dsh(target, [f"bench boot {label}"], work, extra_env or {}, timeout=600)
    finally:
        model.stop()
    cpu = cpu_seconds() - cpu
    if run.returncode != 0:
        raise SystemExit(f"{label}: dsh exited {run.returncode}\n{run.stderr[-2000:]}")
    return run.seconds, run.stderr, cpu


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def paired_median(runs: list[float], bare: list[float]) -> float:
    """The median of each run minus the no-plugin run of its round."""
    return statistics.median(a - b for a, b in zip(runs, bare, strict=True))


def middle_half(values: list[float]) -> tuple[float, float]:
    """The first and third quartiles of ``values`` (both the value itself for one run): how far a
    run's paired difference moves from the median."""
    if len(values) < 2:
        return values[0], values[0]
    quartiles = statistics.quantiles(values, n=4)
    return quartiles[0], quartiles[2]


def boots(home: Path, runs: int, reference: Path | None) -> None:
    boot_seconds(home, "warm-up")  # prepares the environment if it is not ready; untimed
    homes = {"with this plugin": home, "without a plugin": profile_copy(home, "bare", None)}
    if reference is not None:
        homes[REFERENCE_LABEL[0]] = profile_copy(home, "reference", reference)
    for label, copy in homes.items():
        boot_seconds(copy, f"{label} warm-up")
    runs_of = [(shape, label) for shape in SHAPES for label in homes]
    seconds: dict[tuple[str, str], list[float]] = {key: [] for key in runs_of}
    cpus: dict[tuple[str, str], list[float]] = {key: [] for key in runs_of}
    print(f"load average before: {load()}")
    for run in range(runs):
        # every other round in the opposite order: no label always runs first, or last
        for shape, label in runs_of if run % 2 == 0 else runs_of[::-1]:
            took, _, cpu = boot_seconds(homes[label], f"{label} {run}", script=SHAPES[shape])
            seconds[shape, label].append(took)
            cpus[shape, label].append(cpu)
    print(f"load average after: {load()}")
    for shape in SHAPES:
        print()
        bare = statistics.median(seconds[shape, "without a plugin"])
        bare_cpu = statistics.median(cpus[shape, "without a plugin"])
        print(
            f"| dsh one-shot, {shape} ({runs} interleaved runs) | median | minus no plugin "
            "| paired: median of (run minus its round's no-plugin run) | paired, middle half "
            "| dsh's own CPU, median | minus no plugin | CPU paired | runs |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        for label in homes:
            values = seconds[shape, label]
            median = statistics.median(values)
            paired = paired_median(values, seconds[shape, "without a plugin"])
            low, high = middle_half(
                [a - b for a, b in zip(values, seconds[shape, "without a plugin"], strict=True)]
            )
            cpu = statistics.median(cpus[shape, label])
            cpu_paired = paired_median(cpus[shape, label], cpus[shape, "without a plugin"])
            shown = ", ".join(f"{v:.2f}" for v in values)
            wall = f"{median:.2f} s | {median - bare:+.2f} s | {paired:+.2f} s | {low:+.2f} to {high:+.2f} s"
            figures = f"{wall} | {cpu:.2f} s | {cpu - bare_cpu:+.2f} s | {cpu_paired:+.2f} s"
            print(f"| {label} | {figures} | {shown} |")
    for copy in homes.values():
        if copy != home:
            shutil.rmtree(copy, ignore_errors=True)
    shutil.rmtree(home / "work" / WORK_FOLDER, ignore_errors=True)
    for sessions in (home / "sessions").glob(f"*{WORK_FOLDER}*"):  # this run's sessions, by their folder
        shutil.rmtree(sessions, ignore_errors=True)


def identity() -> dict[str, list[str]]:
    """The dependency lists as the plugin reads them: every one, and the worker's."""
    script = (
        "import('./node-shim/boot/package.js').then((m) => console.log(JSON.stringify(m.packageIdentity())))"
    )
    probe = subprocess.run(["node", "-e", script], cwd=ROOT, capture_output=True, text=True, check=True)
    found: dict[str, list[str]] = json.loads(probe.stdout)
    return found


def recipe_seconds(recipe: str, scratch: Path, dependencies: list[str], pins: Sequence[str] = ()) -> float:
    """One preparation from nothing: an empty target and an empty pip cache (``pins``: this
    version's recipe tries the pinned wheels first, as a first boot does)."""
    target = scratch / f"{recipe}-env"
    pip_cache = scratch / f"{recipe}-pip-cache"
    shutil.rmtree(target, ignore_errors=True)
    shutil.rmtree(pip_cache, ignore_errors=True)
    env = {**os.environ, "PIP_CACHE_DIR": str(pip_cache), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    started = time.monotonic()
    if recipe == "venv+pip":
        subprocess.run(["python3", "-m", "venv", str(target)], env=env, check=True)
        python = str(target / "bin" / "python")
        subprocess.run(
            [python, "-m", "pip", "install", "--quiet", "--no-input", *dependencies],
            env=env,
            check=True,
            capture_output=True,
        )
    else:
        script = str(ROOT / "node-shim" / "boot" / "prepare_environment.py")
        pinned = ["--pinned", ",".join(pins)] if pins else []
        command = ["python3", "-I", script, *pinned, str(target), "", *dependencies]
        subprocess.run(command, env=env, check=True, capture_output=True)
    return time.monotonic() - started


#: The line a first boot ends its preparation with, and the seconds it gives.
READY = re.compile(r"\[repeat-tool-breaker\] worker environment ready after ([\d.]+) s")


def first_boot(home: Path, scratch: Path, label: str) -> tuple[float, float, str]:
    """A real first boot of dsh in `home` from an empty cache and an empty pip cache: the seconds
    its own progress line gives for preparing the environment, the whole boot's, and its lines."""
    cache = scratch / f"{label}-cache"
    pip_cache = scratch / f"{label}-pip-cache"
    shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(pip_cache, ignore_errors=True)
    cache.mkdir()
    took, stderr, _ = boot_seconds(
        home, label, {"XDG_CACHE_HOME": str(cache), "PIP_CACHE_DIR": str(pip_cache)}
    )
    ready = READY.search(stderr)
    if ready is None:
        raise SystemExit(
            f"{label}: the first boot said no 'worker environment ready' line:\n{stderr[-2000:]}"
        )
    lines = "\n".join(line for line in stderr.splitlines() if "repeat-tool-breaker" in line)
    return float(ready[1]), took, lines


def first_boots(home: Path, runs: int, before: Path | None) -> None:
    """Interleaved, `runs` rounds: a real first boot (its own progress line's figure), the same with
    `before` (a DSH_HOME mounting an earlier version), this version's recipe alone, and
    `python -m venv` + its pip installing the same packages."""
    found = identity()
    packages, pins = found["worker"], found["pinned"]
    seconds: dict[str, list[float]] = {}
    said = ""
    with tempfile.TemporaryDirectory(prefix="rtb-bench-first-boot-") as folder:
        scratch = Path(folder)
        print(f"load average before: {load()}")
        for round_number in range(runs):
            steps: list[tuple[str, Callable[[], float]]] = [
                ("first boot, its own line", lambda: first_boot(home, scratch, "after")[0]),
                ("this version's recipe alone", lambda: recipe_seconds("this", scratch, packages, pins)),
                (
                    "`python -m venv` + its pip, the same packages",
                    lambda: recipe_seconds("venv+pip", scratch, packages),
                ),
            ]
            if before is not None:
                steps.insert(
                    1, ("first boot before, its own line", lambda: first_boot(before, scratch, "before")[0])
                )
            if round_number % 2:
                steps.reverse()  # no step always first or last
            for label, step in steps:
                seconds.setdefault(label, []).append(step())
        said = first_boot(home, scratch, "shown")[2]
        print(f"load average after: {load()}")
    print()
    print(f"Worker packages: {' '.join(packages)}; pinned: {' '.join(pins)}")
    print()
    print(f"| first boot from an empty cache and pip cache ({runs} interleaved rounds) | median | runs |")
    print("|---|---|---|")
    for label, values in seconds.items():
        shown = ", ".join(f"{v:.1f}" for v in values)
        print(f"| {label} | {statistics.median(values):.1f} s | {shown} |")
    ratio = statistics.median(seconds["first boot, its own line"]) / statistics.median(
        seconds["`python -m venv` + its pip, the same packages"]
    )
    print(f"| ratio, first boot / `python -m venv` + pip | {ratio:.2f} | |")
    if before is not None:
        change = statistics.median(seconds["first boot, its own line"]) / statistics.median(
            seconds["first boot before, its own line"]
        )
        print(f"| ratio, first boot / first boot before | {change:.2f} | |")
    print()
    print("What a first boot prints while it works:")
    print()
    print("```")
    print(said)
    print("```")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--reference", type=Path, help="a folder holding dsh-repeat-tool-breaker 0.5.2")
    parser.add_argument("--first-boot", type=int, default=0, metavar="N")
    parser.add_argument(
        "--before", type=Path, help="with --first-boot: a DSH_HOME mounting an earlier version"
    )
    parser.add_argument("--python", help="RTB_PYTHON for every boot (default: the plugin's own environment)")
    parser.add_argument("--reference-label", default="with reference 0.5.2")
    options = parser.parse_args()
    if options.python:
        BOOT_ENV["RTB_PYTHON"] = options.python
    REFERENCE_LABEL[0] = options.reference_label
    if options.runs:
        boots(options.home, options.runs, options.reference)
    if options.first_boot:
        print()
        first_boots(options.home, options.first_boot, options.before)


if __name__ == "__main__":
    main()
