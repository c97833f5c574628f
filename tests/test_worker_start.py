"""A worker told its configuration is ``known`` (accepted before by this very code) answers it
without importing pydantic; any other configuration gets pydantic's strict check too. The decision
core is imported after the answer, at once: before dsh's first call needs it."""

from __future__ import annotations

import os
import select
import subprocess
import sys
from collections.abc import Callable

import pytest

from breaker import worker
from breaker.frames import encode_frame_parts
from breaker.ops import BadRequest, Reply, Request
from breaker.worker import RequestHandler, serve

SCRIPT = """
import sys
from breaker.worker import RequestHandler
from breaker.ops import Configure
handler = RequestHandler(defer_core=True)
reply = handler.handle(Configure(id=1, config={"identity": "state-aware"}, known=KNOWN))
print(reply.get("ok"), "pydantic" in sys.modules)
"""


@pytest.mark.parametrize(("known", "imports_pydantic"), [(True, False), (None, True)])
def test_a_known_configuration_is_answered_without_pydantic(
    known: bool | None, imports_pydantic: bool
) -> None:
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT.replace("KNOWN", repr(known))],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["True", str(imports_pydantic)]


#: Modules that answering ``configure`` must not wait for: the decision core, the verdicts, the
#: redaction rules (compiled at import), a call's group and the digests (OpenSSL's, ~5 ms) and the
#: log, which only the requests after it use.
DECISION_CORE = (
    "breaker.core.decision",
    "breaker.core.history.analysis",
    "breaker.core.judging.verdicts",
    "breaker.core.reading.fingerprints",
    "breaker.core.reading.groups",
    "breaker.core.wording.redaction",
    "hashlib",
    "logging",
    "traceback",
)

CORE_SCRIPT = """
import sys
from breaker.worker import RequestHandler
from breaker.ops import Configure
handler = RequestHandler(defer_core=True)
reply = handler.handle(Configure(id=1, config={}, known=True))
print(reply.get("ok"), *sorted(name for name in MODULES if name in sys.modules))
handler.start()
print(*sorted(name for name in MODULES if name in sys.modules))
"""


def test_configure_is_answered_before_the_decision_core_is_imported() -> None:
    script = CORE_SCRIPT.replace("MODULES", repr(DECISION_CORE))
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    answered, started = run.stdout.splitlines()
    assert answered == "True"
    assert started.split() == sorted(DECISION_CORE)


class Recording(RequestHandler):
    """A handler that notes each request it handles, in ``seen`` beside what ``serve`` prepares."""

    def __init__(self, seen: list[str]) -> None:
        super().__init__(defer_core=True)
        self.seen = seen

    def handle(self, request: Request | BadRequest, *, promise: bool = True) -> Reply:
        self.seen.append(getattr(request, "op", "bad"))
        return super().handle(request, promise=promise)


def frames(*requests: dict[str, object]) -> bytes:
    return b"".join(b"".join(encode_frame_parts(request)) for request in requests)


def served(written: bytes, prepare: Callable[[int], object] | None, *, keep_open: bool = False) -> list[str]:
    """What a worker serving ``written`` did, in order (``prepare(writer)`` may write more)."""
    seen: list[str] = []
    reader, writer = os.pipe()
    sink = os.open(os.devnull, os.O_WRONLY)
    try:
        os.write(writer, written)
        if not keep_open:
            os.close(writer)

        def note() -> None:
            seen.append("prepare")
            if prepare is not None:
                prepare(writer)

        serve(reader, sink, handler=Recording(seen), prepare=note if prepare is not None else None)
    finally:
        os.close(reader)
        os.close(sink)
        if keep_open:
            os.close(writer)
    return seen


CONFIGURED = {"id": 1, "op": "configure", "config": {}, "known": True}


def test_the_core_is_prepared_before_the_first_requests_that_come_are_handled() -> None:
    seen = served(frames(CONFIGURED, {"id": 2, "op": "stats"}), prepare=lambda writer: None)
    assert seen == ["prepare", "configure", "stats"]


def test_a_worker_whose_input_ends_with_nothing_asked_never_prepares_the_core() -> None:
    assert served(b"", prepare=lambda writer: None) == []


def test_a_configured_worker_prepares_the_core_before_it_sleeps(monkeypatch: pytest.MonkeyPatch) -> None:
    # The first call must not wait for the import: the worker never sleeps on an empty input
    # before it prepared the core (a sleep of CORE_AFTER_IDLE_S > 0 would come first).
    timeouts: list[float | None] = []  # of each select() until prepare, which ends the list
    real_select = select.select

    def recording_select(
        readers: list[int], writers: list[int], errors: list[int], timeout: float | None = None
    ) -> tuple[list[int], list[int], list[int]]:
        timeouts.append(timeout)
        return real_select(readers, writers, errors, timeout)

    def prepare(writer: int) -> None:
        timeouts.append(-1.0)
        os.write(writer, frames({"id": 2, "op": "shutdown"}))

    monkeypatch.setattr(select, "select", recording_select)
    # serve() begins once configure is answered (answer_configure), its input then empty
    assert served(b"", prepare=prepare, keep_open=True) == ["prepare", "shutdown"]
    before = timeouts[: timeouts.index(-1.0)]
    assert all(timeout == 0 for timeout in before), before


def test_a_worker_left_idle_prepares_the_core_unasked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker, "CORE_AFTER_IDLE_S", 0.0)  # the idle wait is over at once
    # nothing to read until prepare writes the next request: only the idle wait can call it
    seen = served(
        b"", prepare=lambda writer: os.write(writer, frames({"id": 1, "op": "shutdown"})), keep_open=True
    )
    assert seen == ["prepare", "shutdown"]


def test_a_one_shot_worker_answers_its_configuration_and_exits_without_the_decision_core() -> None:
    """dsh's boot that makes no call: the worker answers ``configure``, its input ends, and it exits
    0 having imported none of the decision core (``-X importtime`` lists every import)."""
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "breaker.worker"],
        input=frames(CONFIGURED),
        capture_output=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert len(run.stdout) > 4, "no answer"
    imported = {line.rsplit("|", 1)[-1].strip() for line in run.stderr.decode().splitlines()}
    assert "breaker.strayrows" in imported, "-X importtime lists what the answer imports"
    assert not imported & set(DECISION_CORE[:4])
