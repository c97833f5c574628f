"""One headless dsh run and what its session log says: the prepared DSH_HOME a run boots
(`Target`, from the `compat.env` compat/setup.sh writes), the run bounded by a timeout in its own
process group (`run_dsh`), the calls and results dsh logged (`read_events`, `attempts_of`) and
what a scenario's check may look at (`Outcome`). compat/run.py plays the scenarios of
compat/scenarios.py through it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zstandard

BLOCKED = "Error: REPEAT_TOOL_BLOCKED"
NO_APPROVAL_CHANNEL = 'tool "bash" requires approval, but no approval channel is available'
USER_REJECTED = 'the user rejected tool "bash"'
DSH_TIMEOUT_S = 120.0
# A closed port on loopback: `curl -x` through it keeps every "remote" fetch on this machine.
CLOSED_PROXY = "127.0.0.1:9"
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "ftp_proxy")


@dataclass(frozen=True)
class Target:
    """One prepared DSH_HOME: which dsh, how the plugin is mounted, where the mock must listen."""

    home: Path
    version: str
    mode: str
    dsh_bin: Path
    node_dir: Path
    mock_port: int
    patch: Path | None
    profile: str
    cache: Path  # the XDG_CACHE_HOME dsh runs with: where the plugin keeps its worker environment
    plugin_dir: Path
    upgrade_tarball: Path | None  # the `upgrade` mode's next version

    @classmethod
    def load(cls, home: Path) -> Target:
        env = dict(
            line.split("=", 1) for line in (home / "compat.env").read_text().splitlines() if "=" in line
        )
        return cls(
            home=home,
            version=env["DSH_VERSION"],
            mode=env["MODE"],
            dsh_bin=Path(env["DSH_BIN"]),
            node_dir=Path(env["NODE_DIR"]),
            mock_port=int(env["MOCK_PORT"]),
            patch=Path(env["PATCH"]) if env.get("PATCH") else None,
            profile=env["PROFILE"],
            cache=Path(env["CACHE"]),
            plugin_dir=Path(env["PLUGIN_DIR"]),
            upgrade_tarball=Path(env["UPGRADE_TARBALL"]) if env.get("UPGRADE_TARBALL") else None,
        )

    @property
    def profile_dir(self) -> Path:
        return self.home / "profiles" / self.profile

    @property
    def profile_patch(self) -> Path:
        return self.profile_dir / "cordis.patch.yml"

    def env(self, extra: dict[str, str]) -> dict[str, str]:
        """The environment for dsh: Node 22 first on PATH, no proxy settings that could route around."""
        env = {k: v for k, v in os.environ.items() if k.lower() not in PROXY_VARIABLES}
        # The worker must come from the plugin's own install step, as it would for a user.
        env.pop("RTB_PYTHON", None)
        env.pop("DSH_PERMISSION_MODE", None)
        env.update(
            PATH=f"{self.node_dir}{os.pathsep}{env.get('PATH', '')}",
            DSH_HOME=str(self.home),
            MOCK_API_KEY="compat",
            XDG_CACHE_HOME=str(self.cache),
        )
        env.update(extra)
        return env


@dataclass(frozen=True)
class DshRun:
    returncode: int | None  # None: killed at the timeout
    stdout: str
    stderr: str
    seconds: float


def descendants(root: int) -> list[int]:
    """Every live process below `root` (Linux /proc), including ones that left its process group.

    dsh's bash tool starts each command in a session of its own, so killing dsh's group would
    leave a hung command behind.
    """
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            pid_text, rest = stat.read_text().split(" (", 1)
            parent = int(rest.rsplit(") ", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(pid_text))
    found, queue = [], [root]
    while queue:
        for child in children.get(queue.pop(), []):
            found.append(child)
            queue.append(child)
    return found


def run_dsh(
    target: Target,
    args: list[str],
    cwd: Path,
    extra_env: dict[str, str],
    timeout: float = DSH_TIMEOUT_S,
    merged: bool = False,
) -> DshRun:
    """Run dsh bounded by `timeout`; at the timeout, dsh and everything it spawned are killed.

    `merged`: stderr goes into stdout, in the order written (as on a terminal); `stderr` is empty.
    """
    patch = ["--patch", str(target.patch)] if target.patch else []
    command = [str(target.dsh_bin), "--profile", target.profile, *patch, *args]
    started = time.monotonic()
    # dsh leaves spill and subprocess folders in its TMPDIR: a private one, removed after the run
    with (
        tempfile.TemporaryDirectory(prefix="dsh-compat-tmp-") as scratch,
        subprocess.Popen(
            command,
            cwd=cwd,
            env={**target.env(extra_env), "TMPDIR": scratch},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if merged else subprocess.PIPE,
            text=True,
            start_new_session=True,
        ) as process,
    ):
        try:
            stdout, stderr = process.communicate(timeout=timeout)
            returncode: int | None = process.returncode
        except subprocess.TimeoutExpired:
            for pid in [process.pid, *descendants(process.pid)]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            stdout, stderr = process.communicate()
            returncode = None
    return DshRun(returncode, stdout, stderr or "", time.monotonic() - started)


@dataclass(frozen=True)
class Attempt:
    """One tool call and its result, as the session log recorded them."""

    call_id: str
    name: str
    arguments: dict[str, Any]
    is_error: bool | None  # None: the call has no result in the log
    text: str

    @property
    def headline(self) -> str:
        """The first line of the text, or the last one when the first only says which stream follows."""
        lines = [line for line in self.text.splitlines() if line.strip()]
        if not lines:
            return ""
        return lines[-1] if lines[0] in ("[stdout]", "[stderr]") else lines[0]


def read_events(path: Path, limit: int | None = None) -> list[dict[str, Any]]:
    """The session log's events, optionally only the first `limit` of them."""
    events = []
    with (
        path.open("rb") as raw,
        zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True) as reader,
    ):
        for line in io.TextIOWrapper(reader, encoding="utf-8"):
            if line.strip():
                events.append(json.loads(line))
            if limit is not None and len(events) >= limit:
                break
    return events


def attempts_of(events: list[dict[str, Any]]) -> list[Attempt]:
    """Pair each `tool/call` with its `tool/result` by call id, in call order."""
    results: dict[str, tuple[bool, str]] = {}
    for event in events:
        if event.get("type") != "tool/result":
            continue
        for part in event["data"]["message"]["content"]:
            if part.get("type") == "tool-result":
                text = "".join(c.get("text", "") for c in part.get("content", []) if c.get("type") == "text")
                results[part["toolCallId"]] = (bool(part.get("isError")), text)
    attempts = []
    for event in events:
        if event.get("type") != "tool/call":
            continue
        data = event["data"]
        is_error, text = results.get(data["callId"], (None, ""))
        attempts.append(Attempt(data["callId"], data["name"], json.loads(data["arguments"]), is_error, text))
    return attempts


def find_session(home: Path, cwd: Path, since: float) -> Path | None:
    """The newest session log written by a run whose working directory was `cwd`."""
    candidates = []
    for path in (home / "sessions").glob("*/session-*/session.jsonl.zstd"):
        if path.stat().st_mtime < since:
            continue
        header = read_events(path, limit=1)
        if header and header[0].get("cwd") == str(cwd):
            candidates.append(path)
    return max(candidates, key=lambda p: p.stat().st_mtime, default=None)


@dataclass
class Outcome:
    """Everything a scenario check may look at."""

    target: Target
    work: Path
    run: DshRun
    session: Path | None
    events: list[dict[str, Any]]
    attempts: list[Attempt]
    received: list[dict[str, str]]
    health_hits: int
    failures: list[str] = field(default_factory=list)

    def expect(self, condition: bool, message: str) -> None:
        if not condition:
            self.failures.append(message)

    def expect_attempts(self, count: int) -> bool:
        self.expect(
            len(self.attempts) == count, f"expected {count} tool calls in the log, found {len(self.attempts)}"
        )
        return len(self.attempts) == count

    def expect_executed(self, numbers: range) -> None:
        for n in numbers:
            a = self.attempts[n - 1]
            self.expect(
                a.is_error is False and not a.text.startswith("Error:"),
                f"attempt {n} should have executed, got isError={a.is_error}: {a.headline}",
            )

    def stopped_at(self, first: int, last: int) -> int | None:
        """The call of ``first``..``last`` from which every call was denied (None: none)."""
        denied = [n for n in range(first, last + 1) if self.attempts[n - 1].text.startswith(BLOCKED)]
        return denied[0] if denied and denied == list(range(denied[0], last + 1)) else None

    def expect_stopped(self, first: int, last: int) -> int:
        """A loop of calls ``first``..``last``: the calls before its stop ran, every call from the
        stop on was denied, and the stop came before the loop ran a 5th time (the defaults stop a
        loop whose results show no progress sooner than the caps). Returns the stop (or last + 1)."""
        stop = self.stopped_at(first, last)
        self.expect(stop is not None, f"calls {first}-{last}: not stopped, or a call ran after a denial")
        if stop is None:
            return last + 1
        self.expect(
            first + 2 <= stop <= first + 4, f"calls {first}-{last}: stopped at {stop}, not the 3rd-5th"
        )
        self.expect_executed(range(first, stop))
        self.expect_denied(range(stop, last + 1), BLOCKED)
        return stop

    def expect_denied(self, numbers: range, prefix: str) -> None:
        for n in numbers:
            a = self.attempts[n - 1]
            self.expect(
                a.is_error is True and a.text.startswith(prefix),
                f"attempt {n} should be denied with {prefix!r}, got isError={a.is_error}: {a.headline}",
            )
