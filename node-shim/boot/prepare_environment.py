"""Prepare the worker's environment: a venv with the worker's Python dependencies, and nothing else.

Run by node-shim/boot/environment.js with the base interpreter the venv is made from, in isolated mode
(``python -I prepare_environment.py TARGET PREFIX [REQUIREMENT ...]``); standard library only.
``python -I prepare_environment.py --pinned PINS TARGET PREFIX REQUIREMENT ...`` tries the pinned
wheels first (step 0 below).
``python -I prepare_environment.py --packages VENV_PYTHON TARGET PREFIX REQUIREMENT ...`` installs
requirements into the folder TARGET instead (``pip install --target``), for the venv of
VENV_PYTHON made from this interpreter: what only ``rtb`` needs, at the first ``rtb``.

It is the one slow step of a first boot, so it takes the short way and says how far it is:

0. ``--pinned PIN,PIN,...`` (the worker's ``worker-pins``): when pip's configuration allows it, the
   pinned wheels are fetched at once and unpacked into the venv (pinned_wheels.py), with no pip run
   at all; whenever that way does not apply (it says why), the steps below;
1. ``venv`` without pip (a fraction of a second; making pip inside the venv, as ``python -m venv``
   does by default, takes longer than the whole install that follows);
2. the base interpreter's own pip installs the requirements into the venv (``pip --python``, pip
   22.3 and later), with no byte-compilation (Python compiles what the worker imports, once, on its
   first start). A base interpreter without a recent pip falls back to the slow way: ensurepip
   inside the venv, then that pip.

Progress goes to stderr, one line per step and per package fetched, each starting with PREFIX.
The last line of stdout is JSON: ``{"ok": true, "pip": "pinned" | "base" | "ensurepip", "seconds": {...}}``
or ``{"ok": false, "step": "venv" | "pip", "detail": "the last lines pip or venv said"}``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import venv
from collections import deque

#: pip learned ``--python`` (run against another environment) in 22.3.
PIP_WITH_PYTHON_OPTION = (22, 3)
DETAIL_LINES = 6
#: Where in the venv being made the pinned wheels are downloaded (removed once they are unpacked).
WHEELS_FOLDER = "rtb-wheels"
FETCHED = re.compile(
    r"^\s*(Downloading|Using cached|Processing) (?:\S*/)?(\S+?)"
    r"(?:-(?:py|cp)\d\S*|\.tar\.gz|\.zip)?(?: \((.+)\))?\s*$"
)
VERBS = {"Downloading": "downloaded", "Using cached": "from pip's cache:", "Processing": "from a local file:"}
INSTALLING = re.compile(r"^Installing collected packages: (.*)$")
NOISE = re.compile(r"^WARNING: Location '.*' is ignored")


#: The pip this preparation runs, while it runs: in a process group of its own (pip runs another
#: pip under the venv's Python), stopped with the preparation (``stop``).
RUNNING: list[subprocess.Popen[str]] = []
#: The signals that stop a preparation: the caller's timeout (SIGTERM), Ctrl-C, a closed terminal.
STOPPING = (signal.SIGTERM, signal.SIGINT) + ((signal.SIGHUP,) if hasattr(signal, "SIGHUP") else ())


def stop(signum: int, _frame: object) -> None:
    """Stopped by a signal: the pip it runs goes first (it would go on installing, orphaned, into
    a folder the caller removes), then this process, by the same signal (the caller says which)."""
    for process in RUNNING:
        try:
            if os.name == "nt":
                process.terminate()
            else:
                os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def say(prefix: str, text: str) -> None:
    sys.stderr.write(f"{prefix}{text}\n")
    sys.stderr.flush()


def base_pip_version() -> tuple[int, ...] | None:
    """The version of the base interpreter's pip, or None when it has none."""
    try:
        from pip import __version__  # the package's __init__ only: cheap
    except ImportError:
        return None
    numbers = re.findall(r"\d+", __version__)[:2]
    return tuple(int(number) for number in numbers)


def run_pip(
    command: list[str], prefix: str, steps: tuple[str, str] = ("step 2/3, ", "step 3/3, ")
) -> tuple[int, list[str]]:
    """Run pip, turning what it fetches into progress lines (each after its ``steps`` label);
    its exit status and last lines."""
    fetched = 0
    last: deque[str] = deque(maxlen=DETAIL_LINES)
    process = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        start_new_session=os.name != "nt",
    )
    RUNNING.append(process)
    assert process.stdout is not None
    for line in process.stdout:
        line = line.rstrip("\n")
        if not line.strip() or NOISE.match(line):
            continue
        last.append(line)
        if match := FETCHED.match(line):
            fetched += 1
            verb = VERBS[match[1]]
            size = f" ({match[3]})" if match[3] else ""
            say(prefix, f"{steps[0]}fetching packages: {fetched} so far, {verb} {match[2]}{size}")
        elif match := INSTALLING.match(line):
            count = len(match[1].split(","))
            say(prefix, f"{steps[1]}installing {count} packages into the environment")
    status = process.wait()
    RUNNING.remove(process)
    return status, list(last)


def install_packages(python: str, target: str, prefix: str, requirements: list[str]) -> int:
    """``--packages``: the requirements into the folder ``target``, for the venv of ``python``."""
    started = time.monotonic()
    flags = [
        "--no-input",
        "--disable-pip-version-check",
        "--progress-bar",
        "off",
        "--no-compile",
        "--no-cache-dir",
    ]
    version = base_pip_version()
    if version is not None and version >= PIP_WITH_PYTHON_OPTION:  # for the venv's Python, whatever ours is
        command = [sys.executable, "-m", "pip", "--python", python, "install", "--target", target, *flags]
    else:
        command = [python, "-m", "pip", "install", "--target", target, *flags]  # the venv's own (ensurepip)
    say(prefix, f"fetching packages: {len(requirements)} requirements and what they need")
    status, last = run_pip([*command, *requirements], prefix, ("", ""))
    if status != 0:
        print(json.dumps({"ok": False, "step": "pip", "detail": "\n".join(last)}))
        return 1
    print(json.dumps({"ok": True, "seconds": {"pip": round(time.monotonic() - started, 2)}}))
    return 0


def install_pinned(target: str, prefix: str, pins: list[str], requirements: list[str]) -> bool:
    """The short way (pinned_wheels.py): True when the pins are installed, False when pip is to
    install the requirements (said on a progress line, with the reason). Raises Tampered. The
    wheels are downloaded into ``WHEELS_FOLDER`` of ``target``, removed before it returns."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import pinned_wheels

    # Inside the venv being made (the environment's work folder, environment.js): a preparation
    # killed mid-download leaves the wheels nowhere else, and the work folder goes (cache.js).
    scratch = os.path.join(target, WHEELS_FOLDER)
    os.mkdir(scratch, 0o700)
    try:
        pinned_wheels.install(target, pins, requirements, scratch, lambda text: say(prefix, text))
    except pinned_wheels.Unpinnable as why:
        say(prefix, f"step 2/3, the pinned wheels do not apply here: {why}; pip resolves them instead")
        return False
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return True


def main(argv: list[str]) -> int:
    for signum in STOPPING:
        signal.signal(signum, stop)
    if argv[:1] == ["--packages"]:
        return install_packages(argv[1], argv[2], argv[3], argv[4:])
    pins: list[str] = []
    if argv[:1] == ["--pinned"]:
        pins, argv = [pin for pin in argv[1].split(",") if pin], argv[2:]
    target, prefix, requirements = argv[0], argv[1], argv[2:]
    seconds: dict[str, float] = {}
    started = time.monotonic()
    say(prefix, "step 1/3, creating a venv (without pip)")
    try:
        venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(target)
    except Exception as error:  # what the caller reports: the step and its reason
        print(json.dumps({"ok": False, "step": "venv", "detail": f"{type(error).__name__}: {error}"}))
        return 1
    seconds["venv"] = round(time.monotonic() - started, 2)
    python = os.path.join(target, "Scripts" if os.name == "nt" else "bin", "python")
    flags = ["--no-input", "--disable-pip-version-check", "--progress-bar", "off", "--no-cache-dir"]
    version = base_pip_version()
    if pins and requirements and version is not None and version >= PIP_WITH_PYTHON_OPTION:
        step = time.monotonic()
        try:
            pinned = install_pinned(target, prefix, pins, requirements)
        except Exception as error:  # Tampered, or unpacking failed: the caller reports it
            print(json.dumps({"ok": False, "step": "pip", "detail": f"{type(error).__name__}: {error}"}))
            return 1
        if pinned:
            seconds["pinned"] = round(time.monotonic() - step, 2)
            print(json.dumps({"ok": True, "pip": "pinned", "seconds": seconds}))
            return 0
    if version is not None and version >= PIP_WITH_PYTHON_OPTION:
        pip = "base"
        command = [sys.executable, "-m", "pip", "--python", python, "install", "--no-compile", *flags]
    else:
        pip = "ensurepip"
        why = "has no pip" if version is None else f"has pip {'.'.join(map(str, version))} (older than 22.3)"
        say(prefix, f"the base Python {why}: installing pip into the venv first (slower)")
        step = time.monotonic()
        made = subprocess.run(
            [python, "-m", "ensurepip", "--default-pip"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
        )
        if made.returncode != 0:
            said = (made.stderr + made.stdout).strip().splitlines()[-DETAIL_LINES:]
            print(json.dumps({"ok": False, "step": "venv", "detail": "\n".join(said)}))
            return 1
        seconds["ensurepip"] = round(time.monotonic() - step, 2)
        command = [python, "-m", "pip", "install", *flags]
    if requirements:
        step = time.monotonic()
        say(prefix, f"step 2/3, fetching packages: {len(requirements)} requirements and what they need")
        status, last = run_pip([*command, *requirements], prefix)
        if status != 0:
            print(json.dumps({"ok": False, "step": "pip", "detail": "\n".join(last)}))
            return 1
        seconds["pip"] = round(time.monotonic() - step, 2)
    print(json.dumps({"ok": True, "pip": pip, "seconds": seconds}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
