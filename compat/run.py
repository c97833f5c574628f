"""Boot a real dsh against the scripted mock model and assert what the breaker did.

Each scenario scripts a loop for the mock model, runs one headless dsh turn (bounded by a
timeout, in its own process group), then judges the run from dsh's own session log
(`session.jsonl.zstd`: `tool/call` and `tool/result` events), from side effects on disk and
from what the mock model was sent back. It prints a short trajectory and a PASS/FAIL line.

    python compat/run.py --home /tmp/dsh-compat/rc8-dir        # all scenarios
    python compat/run.py --home ... --scenario loop-a-identical --save-sessions examples/sessions

`--home` is a DSH_HOME prepared by compat/setup.sh (it reads `compat.env` there).
Exit status: 0 when every scenario passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zstandard

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mock_model import MockModel, Script, ScriptedCall
from worker_loss import Loss, watch

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


@dataclass(frozen=True)
class Scenario:
    name: str
    summary: str
    calls: Callable[[Path, int], list[ScriptedCall]]  # (work dir, mock port) -> the scripted loop
    check: Callable[[Outcome], None]
    env: dict[str, str] = field(default_factory=dict)
    config: str = ""  # the row's `config:` body (YAML, one key a line); empty: the defaults


def bash(command: str, description: str, **extra: Any) -> ScriptedCall:
    return ScriptedCall("bash", {"command": command, "description": description, **extra})


def counter_lines(work: Path) -> int:
    counter = work / "counter.txt"
    return len(counter.read_text().splitlines()) if counter.exists() else 0


# --- loop A: the same call, verbatim -------------------------------------------------------


def identical_calls(work: Path, port: int) -> list[ScriptedCall]:
    return [bash(f"echo tick >> {work}/counter.txt", "Count one tick")] * 6


def check_blocked_by_five(o: Outcome) -> None:
    """Stopped by the 5th call, every call from the stop denied, and the side-effect counter proves
    the denied bodies never ran."""
    if o.expect_attempts(6):
        ran = o.expect_stopped(1, 6) - 1
        o.expect(
            counter_lines(o.work) == ran, f"counter file has {counter_lines(o.work)} lines, expected {ran}"
        )


# --- loop B: the description decoy ---------------------------------------------------------


def decoy_calls(work: Path, port: int) -> list[ScriptedCall]:
    ordinals = ["1st", "2nd", "3rd", "4th", "5th", "6th"]
    timeouts = [60000, 30000, 45000, 20000, 50000, 10000]
    return [
        bash(f"echo tick >> {work}/counter.txt", d, timeoutMs=t)
        for d, t in zip(ordinals, timeouts, strict=True)
    ]


# --- loop C: host ping-pong through a closed loopback proxy ---------------------------------


def pingpong_calls(work: Path, port: int) -> list[ScriptedCall]:
    sink = f"/tmp/dsh-compat-{uuid.uuid4().hex[:12]}.html"
    open_data = f"curl -x {CLOSED_PROXY} --max-time 60 -o {sink} https://open-data.canada.ca/"
    open_canada = f"curl -x {CLOSED_PROXY} --max-time 30 -o {sink} https://open.canada.ca/"
    return [
        bash(open_data if n % 2 == 0 else open_canada, f"Fetch the portal, try {n + 1}") for n in range(6)
    ]


def expect_refused_by_closed_proxy(o: Outcome, numbers: range) -> None:
    """Every executed fetch died at the loopback proxy: proof that nothing left this machine."""
    for n in numbers:
        o.expect(
            f"Failed to connect to 127.0.0.1 port {CLOSED_PROXY.split(':')[1]}" in o.attempts[n - 1].text,
            f"attempt {n} was not refused by the closed proxy {CLOSED_PROXY}",
        )


def check_pingpong(o: Outcome) -> None:
    if o.expect_attempts(6):
        stop = o.expect_stopped(1, 6)
        expect_refused_by_closed_proxy(o, range(1, stop))
        if stop <= 6:
            denial = o.attempts[stop - 1].text
            o.expect("net:open.canada.ca/" in denial, "the denial does not name the one folded host (net:)")


# --- pagination: one endpoint, a new page each time ----------------------------------------


def pagination_calls(work: Path, port: int) -> list[ScriptedCall]:
    """Eight pages of one listing. Each answer names its page (`-w`), as a real listing's pages
    differ: through the closed proxy every page would otherwise fail with the same text (curl's
    progress meter, whose times vary), and the same answer from one address, five times in a
    row, is no progress under the defaults."""
    write_out = "'page %{url}: %{errormsg}\\n'"
    return [
        bash(
            f"curl -s -x {CLOSED_PROXY} -w {write_out} https://api.example.com/items?page={n}",
            f"Fetch page {n}",
        )
        for n in range(1, 9)
    ]


def check_pagination(o: Outcome) -> None:
    if o.expect_attempts(8):
        o.expect_executed(range(1, 9))
        expect_refused_by_closed_proxy(o, range(1, 9))


# --- a local loop with nobody to answer the ask --------------------------------------------


def local_calls(work: Path, port: int) -> list[ScriptedCall]:
    """Seven different commands against one local URL: only the local `net:` target repeats.

    Identical calls would also hit `exact:`/`cmd:`, which a local approval never exempts, so
    the breaker would deny them outright instead of asking; varying the command is what
    exercises the ask path.
    """
    url = f"http://127.0.0.1:{port}/health"
    tails = ["", " | head -c 100", " | wc -c", " | tr a-z A-Z", " | cat -A", " | grep -c ok", " | tail -c 10"]
    return [bash(f"curl -s {url}{tail}", "Check the local health endpoint") for tail in tails]


def check_local(refusal: str) -> Callable[[Outcome], None]:
    def check(o: Outcome) -> None:
        """Calls 1-4 reach the server, dsh refuses the 5th (the ask) and the breaker's notice says
        why it was not run, then the breaker denies."""
        if o.expect_attempts(7):
            o.expect_executed(range(1, 5))
            o.expect_denied(range(5, 6), f"Error: {refusal}")
            o.expect_denied(range(6, 8), BLOCKED)
        texts = ["".join(part.get("text", "") for part in n.get("content", [])) for n in notices_of(o)]
        o.expect(
            [t.split(": it", 1)[0] for t in texts] == ["REPEAT_TOOL_NOTICE: the call above was not run"],
            f"expected one notice saying why the asked call was not run, found {texts}",
        )
        o.expect(o.health_hits == 4, f"the local server was hit {o.health_hits} times, expected 4")

    return check


# --- the demo: loops A, B and C in one session -----------------------------------------------


def demo_calls(work: Path, port: int) -> list[ScriptedCall]:
    """Five of each loop in a row; the breaker must stop each before it runs a fifth time."""
    loop_a = [bash(f"echo tick >> {work}/counter.txt", "Count one tick")] * 5
    loop_b = [
        bash("echo hello-repeat", ordinal, timeoutMs=timeout)
        for ordinal, timeout in zip(
            ["1st", "2nd", "3rd", "4th", "5th"], [60000, 1000, 30000, 5000, 45000], strict=True
        )
    ]
    loop_c = pingpong_calls(work, port)[:5]
    return loop_a + loop_b + loop_c


def check_demo(o: Outcome) -> None:
    if o.expect_attempts(15):
        stops = [o.expect_stopped(first, first + 4) for first in (1, 6, 11)]
        expect_refused_by_closed_proxy(o, range(11, stops[2]))
        ran = stops[0] - 1
        o.expect(
            counter_lines(o.work) == ran, f"counter file has {counter_lines(o.work)} lines, expected {ran}"
        )


# --- escalation (opt-in): notices, and the failure gate on a command that keeps failing -------

ESCALATION_CONFIG = "warnAt: 2\nsummarizeAt: 3\nfailWarnAt: 2\nfailLimit: 3\n"
MISSING_DIR = "/nonexistent-dir-rtb-compat"


def failing_calls(work: Path, port: int) -> list[ScriptedCall]:
    """A listing of a missing directory four times (exit 2 each time it runs), then the recovery."""
    return [bash(f"ls {MISSING_DIR}", f"List the output directory, try {n}") for n in range(1, 5)] + [
        bash(f"ls {work}", "List the working directory instead")
    ]


def notices_of(o: Outcome) -> list[dict[str, Any]]:
    """The breaker's notices in the session log: user messages from this plugin."""
    return [
        event["data"]
        for event in o.events
        if event.get("type") == "user/message"
        and event.get("data", {}).get("source", {}).get("plugin") == "repeat-tool-breaker"
    ]


def check_escalation(o: Outcome) -> None:
    """Calls 1-3 run and fail; 2 earns the failure and the repeat notice, 3 the summary demand;
    the failure gate stops 4, quoting the failure; 5, another call, runs."""
    if o.expect_attempts(5):
        o.expect_executed(range(1, 4))
        for n in range(1, 4):
            o.expect("[exit code: 2]" in o.attempts[n - 1].text, f"attempt {n} did not fail with exit code 2")
        o.expect_denied(range(4, 5), BLOCKED)
        fourth = o.attempts[3].text
        o.expect("failed on each of its last attempts" in fourth, "the 4th denial is not the failure gate's")
        quoted = "exited with code 2" in fourth and "No such file" in fourth
        o.expect(quoted, "the 4th denial does not quote the failure")
        o.expect_executed(range(5, 6))
    notices = notices_of(o)
    for notice in notices:
        source = notice["source"]
        o.expect(
            source.get("kind") == "plugin" and source.get("form") == "notice" and bool(source.get("summary")),
            f"a notice has the wrong source: {source}",
        )
    texts = ["".join(part.get("text", "") for part in n.get("content", [])) for n in notices]
    for n, text in enumerate(texts, 1):
        print(f"  notice {n}: {text.splitlines()[0][:110]}")
    o.expect(len(texts) == 3, f"expected 3 notices in the session log, found {len(texts)}")
    o.expect(any("has failed 2 times in a row" in t for t in texts), "no failure notice at failWarnAt")
    o.expect(any("has come up 2 times" in t for t in texts), "no repeat notice at warnAt")
    o.expect(any("summarise your progress" in t for t in texts), "no summary demand at summarizeAt")


# --- the worker lost in the middle of loop A: the window survives it ------------------------

#: Loop A's ticks around a call that waits while the worker is signalled (worker_loss.py); a
#: `sleep` changes nothing, so the ticks after it are the same action as those before.
PAUSE_AT = 3
TICKS = (1, 2, 4, 5, 6, 7)
#: Each lossy scenario's watcher, by its working folder.
LOSSES: dict[Path, Loss] = {}


def lost_worker_calls(signal_name: str) -> Callable[[Path, int], list[ScriptedCall]]:
    """Two ticks of loop A, a `sleep 2` during which the worker of this dsh gets the signal
    (from outside, as a crash or a hang would come), four ticks."""

    def calls(work: Path, port: int) -> list[ScriptedCall]:
        tick = identical_calls(work, port)[0]
        loss = LOSSES[work] = Loss(signal_name, after_lines=2, delay_s=0.5)
        watch(work, counter_lines, loss)
        return [tick, tick, bash("sleep 2", "Wait for the build"), tick, tick, tick, tick]

    return calls


def check_window_kept(stops: tuple[int, ...], lost: str) -> Callable[[Outcome], None]:
    """The worker was signalled, stderr says what was lost (``lost``), and the ticks ran up to
    one of the attempts ``stops``, which and every tick after it were denied: the window the
    replacement rebuilt from the journal (README: "keeps each agent's window across a worker
    crash"); a window lost would let every tick after the signal run. The counter proves it."""

    def check(o: Outcome) -> None:
        loss = LOSSES.pop(o.work)
        loss.done.wait(5)
        o.expect(loss.signalled is not None, f"the worker was not signalled: {loss.problem or 'too late'}")
        if not o.expect_attempts(len(TICKS) + 1):
            return
        stop = next((n for n in TICKS if o.attempts[n - 1].text.startswith(BLOCKED)), None)
        o.expect(stop in stops, f"the ticks were stopped at attempt {stop}, expected one of {stops}")
        if stop is None:
            return
        o.expect_executed(range(PAUSE_AT, PAUSE_AT + 1))
        for n in TICKS:
            if n < stop:
                o.expect_executed(range(n, n + 1))
            else:
                o.expect_denied(range(n, n + 1), BLOCKED)
        ran, counted = len([n for n in TICKS if n < stop]), counter_lines(o.work)
        o.expect(counted == ran, f"counter file has {counted} lines, expected {ran}")
        o.expect(lost in o.run.stderr, f"stderr does not say {lost!r}")

    return check


def finished_in_time(o: Outcome) -> None:
    """A hung run is killed at the timeout and fails; so does any non-zero exit."""
    if o.run.returncode is None:
        o.failures.append(f"dsh did not finish within {o.run.seconds:.0f} s and was killed")
    else:
        o.expect(o.run.returncode == 0, f"dsh exited with {o.run.returncode}")


SCENARIOS = [
    Scenario(
        "demo",
        "the README's loops A, B and C, five calls each, in one session",
        demo_calls,
        check_demo,
    ),
    Scenario(
        "loop-a-identical",
        "loop A: 6 identical bash calls appending to a counter",
        identical_calls,
        check_blocked_by_five,
    ),
    Scenario(
        "loop-b-decoy",
        "loop B: description 1st/2nd/... and churning timeoutMs, command unchanged",
        decoy_calls,
        check_blocked_by_five,
    ),
    Scenario(
        "loop-c-pingpong",
        "loop C: open-data.canada.ca <-> open.canada.ca, --max-time 60/30, one sink",
        pingpong_calls,
        check_pingpong,
    ),
    Scenario("pagination", "one endpoint, ?page=1..8: never blocked", pagination_calls, check_pagination),
    Scenario(
        "escalation",
        "warnAt/summarizeAt/failWarnAt/failLimit on: notices in the log, a failing ls stopped at 3",
        failing_calls,
        check_escalation,
        config=ESCALATION_CONFIG,
    ),
    Scenario(
        "local-loop",
        "a local URL, no approval channel (headless)",
        local_calls,
        check_local(NO_APPROVAL_CHANNEL),
    ),
    Scenario(
        "local-loop-full-access",
        "the same under DSH_PERMISSION_MODE=danger-full-access",
        local_calls,
        check_local(USER_REJECTED),
        env={"DSH_PERMISSION_MODE": "danger-full-access"},
    ),
    Scenario(
        "worker-killed",
        "loop A, its worker SIGKILLed after the 2nd tick: the 5th tick is still denied",
        lost_worker_calls("KILL"),
        # a request to the dead worker goes to its replacement after the journal: every tick counts
        check_window_kept((6,), "the worker is not running (killed by SIGKILL)"),
    ),
    Scenario(
        "worker-hung",
        "loop A, its worker SIGSTOPped after the 2nd tick: replaced, the loop still stopped",
        lost_worker_calls("STOP"),
        # the call that meets the hang is allowed unchecked and not journaled (onWorkerFailure:
        # allow, docs/failure-modes.md): the `sleep` or the next tick, so the 5th or 6th is stopped
        check_window_kept((6, 7), "did not answer within"),
    ),
]


HIT_LINE = re.compile(r"^- (\w+:.*) (\d+/\d+)$")


def print_trajectory(o: Outcome) -> None:
    """One line per attempt; a denial also lists the fingerprints it names (`- key n/cap` lines)."""
    for n, a in enumerate(o.attempts, 1):
        command = str(a.arguments.get("command", a.arguments))
        label = f"{command[:50]}…{command[-45:]}" if len(command) > 96 else command
        decoys = ", ".join(f"{k}={a.arguments[k]}" for k in ("description", "timeoutMs") if k in a.arguments)
        print(f"  attempt {n}: {a.name} {label}   [{decoys}]")
        verdict = "STOPPED" if a.is_error and a.text.startswith("Error:") else "ran    "
        print(f"             {verdict} isError={a.is_error} | {a.headline[:120]}")
        hits = [f"{m[1][:60]} {m[2]}" for m in map(HIT_LINE.match, a.text.splitlines()) if m]
        if hits:
            print(f"             hits: {'; '.join(hits)}")


def expect_model_saw_the_logged_text(o: Outcome) -> None:
    """What the mock model was sent back is, call by call, exactly the text the log records."""
    sent = {r["tool_call_id"]: r["content"] for r in o.received}
    o.expect(
        len(sent) == len(o.attempts), f"the model got {len(sent)} tool results for {len(o.attempts)} calls"
    )
    for n, a in enumerate(o.attempts, 1):
        o.expect(
            sent.get(a.call_id, a.text) == a.text,
            f"attempt {n}: the model was sent other text than the log's",
        )


def play(
    target: Target,
    scenario: Scenario,
    save_sessions: Path | None = None,
    quiet: bool = False,
    work_root: Path | None = None,
) -> Outcome:
    """Run one scenario and judge it; the outcome holds the run, the session log and any failures.

    ``quiet``: print nothing (the demo tells the story itself). ``work_root``: where the scenario's
    working folder goes (default: the dsh home's ``work``)."""
    work = (work_root or target.home / "work") / scenario.name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    calls = scenario.calls(work, target.mock_port)
    model = MockModel(
        Script(tuple(calls), final="compat run complete"),
        port=target.mock_port,
        record_path=work / "received.json",
    ).start()
    started = time.time()
    try:
        with retuned(target, scenario.config) as patch_args:
            run = run_dsh(target, [*patch_args, f"compat scenario {scenario.name}"], work, scenario.env)
    finally:
        model.stop()
    session = find_session(target.home, work, started - 1)
    events = read_events(session) if session else []
    outcome = Outcome(
        target,
        work,
        run,
        session,
        events,
        attempts_of(events),
        model.received.tool_results,
        model.received.health_hits,
    )
    if not quiet:
        print(f"=== {scenario.name}: {scenario.summary} ({run.seconds:.1f} s)")
        print_trajectory(outcome)
    finished_in_time(outcome)
    if session is None:
        outcome.failures.append("no session log was written")
    else:
        scenario.check(outcome)
        expect_model_saw_the_logged_text(outcome)
        if save_sessions is not None:
            save_sessions.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(session, save_sessions / f"{scenario.name}.jsonl.zstd")
    return outcome


def run_scenario(target: Target, scenario: Scenario, save_sessions: Path | None) -> bool:
    outcome = play(target, scenario, save_sessions)
    if any(NO_FRONTEND_LINE.match(line) for line in outcome.run.stderr.splitlines()):
        outcome.failures.append("the plugin said the profile has no frontend, in a profile that has one")
    return report(scenario.name, outcome.failures, outcome.run)


def report(name: str, failures: list[str], run: DshRun) -> bool:
    for failure in failures:
        print(f"  - {failure}")
    if failures and run.stderr.strip():
        print("  dsh stderr (tail):")
        for line in run.stderr.strip().splitlines()[-8:]:
            print(f"    {line}")
    print(f"{'PASS' if not failures else 'FAIL'}: {name}")
    return not failures


# --- boot-level checks: the composed tree, and a config that must not boot ----------------

ROW = "- id: repeat-tool-breaker"
#: Bad values, each with what its line must hold: the key, the value, what is allowed.
INVALID_CONFIGS = (
    ("limits: { exact: 1 }", ("limits.exact", "got 1", ">= 2")),
    ("window: -3", ("window", "got -3", ">= 4")),
)
#: What the plugin's line must start with and hold, as `rtb check` prints it.
PLUGIN_LINE = re.compile(r"^repeat-tool-breaker: .*\. Fix: .*cordis\.patch\.yml")
#: A stack frame in the plugin's own code, which a config error must not show.
OWN_FRAME = re.compile(r"^\s*at .*(node-shim|breaker)/")


def provenance_of_row(dump: str) -> str | None:
    """The `# == <layer>` header in force where the breaker's row is printed."""
    header = None
    for line in dump.splitlines():
        if line.startswith("# == "):
            header = line[len("# == ") :]
        elif line.strip() == ROW:
            return header
    return None


def check_dump_config(target: Target) -> bool:
    work = target.home / "work"
    run = run_dsh(target, ["--dump-config"], work, {}, timeout=60)
    print(f"=== dump-config: the composed tree shows the row and where it came from ({run.seconds:.1f} s)")
    failures = []
    if run.returncode != 0:
        failures.append(f"--dump-config exited with {run.returncode}")
    layer = provenance_of_row(run.stdout)
    print(f"  row layer: {layer}")
    expected_layer = str(target.patch) if target.patch else "dsh-repeat-tool-breaker"
    if layer is None:
        failures.append("no repeat-tool-breaker row in the composed tree")
    elif not layer.startswith(expected_layer):
        failures.append(f"the row's layer is {layer!r}, expected it to start with {expected_layer!r}")
    return report("dump-config", failures, run)


@contextlib.contextmanager
def retuned(target: Target, config: str) -> Iterator[list[str]]:
    """The row reconfigured with `config` (a `config:` body) while the block runs; yields dsh args.

    Bundle modes retune through the profile's own patch; with an overlay mount the row only
    exists after the overlay, so the retune goes in a second overlay after it.
    """
    if not config:
        yield []
        return
    row = f"{ROW}\n  config:\n" + "".join(f"    {line}\n" for line in config.splitlines())
    if target.patch is not None:
        retune = target.home / "retune.yml"
        retune.write_text(row)
        yield ["--patch", str(retune)]
        return
    original = target.profile_patch.read_text()
    target.profile_patch.write_text(original + row)
    try:
        yield []
    finally:
        target.profile_patch.write_text(original)


def check_invalid_config(target: Target) -> bool:
    """A bad value must stop the boot loudly: the plugin's line first on the terminal, alone."""
    work = target.home / "work" / "invalid-config"
    work.mkdir(parents=True, exist_ok=True)
    failures: list[str] = []
    for config, parts in INVALID_CONFIGS:
        model = MockModel(Script(calls=(), final="ok"), port=target.mock_port).start()
        try:
            with retuned(target, config) as patch_args:
                run = run_dsh(target, [*patch_args, "reply ok"], work, {}, timeout=60, merged=True)
        finally:
            model.stop()
        # stdout and stderr through one pipe, in the order a terminal shows them
        lines = [line for line in run.stdout.splitlines() if line.strip()]
        first = lines[0] if lines else ""
        print(f"=== invalid-config: {config} must fail the boot ({run.seconds:.1f} s)")
        print(f"  exit {run.returncode} | first line: {first.strip()[:300]}")
        if run.returncode in (0, None):
            failures.append(f"{config}: dsh exited with {run.returncode}, expected a non-zero exit")
        if not PLUGIN_LINE.match(first):
            failures.append(f"{config}: the first line on the terminal is not the plugin's: {first[:120]!r}")
        elif not all(part in first for part in parts):
            failures.append(f"{config}: the line does not name the key, the value and what is allowed")
        own_frames = [line.strip() for line in lines if OWN_FRAME.search(line)]
        if own_frames:
            failures.append(f"{config}: dsh printed frames of the plugin's own code: {own_frames[:2]}")
    return report("invalid-config", failures, run)


#: What the plugin says in a profile with no frontend, where dsh itself waits without a word.
NO_FRONTEND_LINE = re.compile(
    r"^\[repeat-tool-breaker\] this dsh profile has no frontend to run a task .*Fix: "
)
NO_FRONTEND_WAIT_S = 8


@contextlib.contextmanager
def without_headless(target: Target) -> Iterator[None]:
    """The profile's bundles without `@deepseek-ai/dsh-headless` while the block runs."""
    manifest = target.profile_dir / "package.json"
    original = manifest.read_text()
    document = json.loads(original)
    bundles = document["dsh"]["profile"]["bundles"]
    document["dsh"]["profile"]["bundles"] = [b for b in bundles if b != "@deepseek-ai/dsh-headless"]
    manifest.write_text(json.dumps(document))
    try:
        yield
    finally:
        manifest.write_text(original)


def check_no_frontend(target: Target) -> bool:
    """A profile without the headless bundle: dsh waits silently; the plugin must say why and the fix."""
    work = target.home / "work" / "no-frontend"
    work.mkdir(parents=True, exist_ok=True)
    with without_headless(target):
        run = run_dsh(target, ["reply ok"], work, {}, timeout=NO_FRONTEND_WAIT_S)
    said = [line for line in run.stderr.splitlines() if NO_FRONTEND_LINE.match(line)]
    print(f"=== no-frontend: a profile without dsh-headless ({run.seconds:.1f} s, exit {run.returncode})")
    print(f"  {said[0][:200] if said else '(nothing said)'}")
    failures = []
    if len(said) != 1:
        failures.append(f"the plugin said {len(said)} times what is missing, expected once")
    return report("no-frontend", failures, run)


#: A row for the plugin under a misspelt id: dsh ignores it without a word; the plugin names it.
MISSPELT_ROW = "- id: repeat-tool-braker\n  config:\n    limits: { exact: 3 }\n"
STRAY_LINE = re.compile(
    r"^\[repeat-tool-breaker\] the row 'repeat-tool-braker' is not this plugin's row .*Fix: "
)


def check_misspelt_row(target: Target) -> bool:
    """A row whose id is one edit from the plugin's: the boot says so in one line and goes on."""
    work = target.home / "work" / "misspelt-row"
    work.mkdir(parents=True, exist_ok=True)
    original = target.profile_patch.read_text()
    target.profile_patch.write_text(original + MISSPELT_ROW)
    model = MockModel(Script(calls=(), final="ok"), port=target.mock_port).start()
    try:
        run = run_dsh(target, ["reply ok"], work, {}, timeout=60)
    finally:
        model.stop()
        target.profile_patch.write_text(original)
    said = [line for line in run.stderr.splitlines() if STRAY_LINE.match(line)]
    print(f"=== misspelt-row: repeat-tool-braker in the profile ({run.seconds:.1f} s, exit {run.returncode})")
    print(f"  {said[0][:200] if said else '(nothing said)'}")
    failures = []
    if len(said) != 1:
        failures.append(f"the plugin named the misspelt row {len(said)} times, expected once")
    if run.returncode != 0:
        failures.append(f"dsh exited with {run.returncode}: the boot must go on, on the defaults")
    return report("misspelt-row", failures, run)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--home", type=Path, required=True, help="a DSH_HOME prepared by compat/setup.sh")
    names = [s.name for s in SCENARIOS] + ["dump-config", "invalid-config", "misspelt-row", "no-frontend"]
    parser.add_argument("--scenario", action="append", choices=names, help="run only these (repeatable)")
    parser.add_argument("--save-sessions", type=Path, help="copy each scenario's session log here")
    args = parser.parse_args()
    target = Target.load(args.home.resolve())
    selected = args.scenario or names
    print(f"##### dsh {target.version}, plugin mounted by '{target.mode}', DSH_HOME {target.home}")
    results = []
    if "dump-config" in selected:
        results.append(check_dump_config(target))
    for scenario in SCENARIOS:
        if scenario.name in selected:
            results.append(run_scenario(target, scenario, args.save_sessions))
    if "invalid-config" in selected:
        results.append(check_invalid_config(target))
    if "misspelt-row" in selected:
        results.append(check_misspelt_row(target))
    if "no-frontend" in selected:
        results.append(check_no_frontend(target))
    passed = sum(results)
    print(
        f"COMPAT {target.version} {target.mode}: {'PASS' if passed == len(results) else 'FAIL'} "
        f"({passed}/{len(results)} passed)"
    )
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
