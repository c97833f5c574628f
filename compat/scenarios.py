"""The scripted loops compat/run.py boots a real dsh with, and what each must show: the calls the
mock model makes (`calls`: the work folder and the mock's port in, the calls out) and the check of
the outcome (`check`), one `Scenario` each, in `SCENARIOS`.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dsh_run import BLOCKED, CLOSED_PROXY, NO_APPROVAL_CHANNEL, USER_REJECTED, Outcome
from mock_model import ScriptedCall
from worker_loss import Loss, watch


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
