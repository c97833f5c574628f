"""Lose the worker of a running dsh in the middle of a scenario (run.py): SIGKILL or SIGSTOP.

A watcher thread waits until the scenario's side effects say the loop has got far enough (its
counter file has so many lines), then signals the plugin's worker of the dsh that runs in the
scenario's working folder: the process that runs ``breaker.worker`` whose parent's current folder
is that folder. Linux only (``/proc``). What it did is kept for the scenario's check.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

#: How long the watcher waits for the loop to get far enough before it gives up.
WATCH_S = 60.0
POLL_S = 0.02


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat", encoding="latin-1") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[1])


def _pids() -> Iterator[int]:
    return (int(entry) for entry in os.listdir("/proc") if entry.isdigit())


def _runs_worker(pid: int) -> bool:
    with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
        return b"breaker.worker" in cmdline.read().split(b"\0")


def worker_in(folder: Path) -> int | None:
    """The pid of the worker whose parent (dsh) runs in ``folder``, or None."""
    for pid in _pids():
        try:
            if _runs_worker(pid) and Path(os.readlink(f"/proc/{_parent(pid)}/cwd")) == folder.resolve():
                return pid
        except OSError:
            continue  # gone meanwhile, or not ours to look into
    return None


@dataclass
class Loss:
    """A watcher's plan and what it did: ``signalled`` is the worker's pid once signalled."""

    signal_name: str
    after_lines: int
    delay_s: float
    signalled: int | None = None
    problem: str = ""
    done: threading.Event = field(default_factory=threading.Event)


def watch(folder: Path, lines: Callable[[Path], int], loss: Loss) -> threading.Thread:
    """Start the watcher: once ``lines(folder)`` reaches ``loss.after_lines``, wait ``delay_s``
    and signal the worker of the dsh running in ``folder``."""

    def run() -> None:
        try:
            deadline = time.monotonic() + WATCH_S
            while lines(folder) < loss.after_lines:
                if time.monotonic() > deadline:
                    loss.problem = f"the loop never reached {loss.after_lines} lines in {WATCH_S:.0f} s"
                    return
                time.sleep(POLL_S)
            time.sleep(loss.delay_s)
            pid = worker_in(folder)
            if pid is None:
                loss.problem = "no worker of this dsh was found"
                return
            os.kill(pid, getattr(signal, f"SIG{loss.signal_name}"))
            loss.signalled = pid
        finally:
            loss.done.set()

    thread = threading.Thread(target=run, name=f"lose-worker-{folder.name}", daemon=True)
    thread.start()
    return thread
