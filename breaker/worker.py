"""The worker process: ``python -m breaker.worker`` serves the protocol on stdin/stdout.

A thin I/O shell. ``RequestHandler`` translates each request into one call of the pure ``Breaker``
and its verdict into a reply; ``serve`` moves bytes. stdout carries frames only (``print`` is
pointed at stderr, so a stray debug line cannot corrupt the stream); logs go to stderr. The
worker exits 0 on end of input or after ``shutdown``.

Nothing it is given is executed, evaluated or resolved: no shell, no DNS, no file, no network.
``RTB_AUDIT=1`` makes that checkable: once serving, an audit hook ends the process (exit 70) at
the first attempt to start a process, open a file or use a socket. Its only channels are the
FIFOs it opened before (``--fifos``, breaker/streams.py) or the stdio pipes it inherited. Logs
and error replies never carry raw arguments or results: any text that could derive from them
goes through ``messages.redact`` and is cut short.

Latency is the point of the I/O loop: one thread, no event loop; stdin is non-blocking and read
directly, sleeping in ``select`` only once empty for ``POLL_BEFORE_SLEEP_S``; the replies to the
requests of one read go out in one ``writev`` per stream (stdout, and the ``later`` FIFO or the fd
``--later-replies FD`` names, which the shim reads on its event loop: ``breaker/protocol.py``).

Starting is on dsh's boot path (dsh's boot waits for the answer to ``configure``): the worker makes
its FIFOs first (``streams.announce``), answers having imported only what that needs (pydantic only
for a configuration not ``known``), and imports the decision core once that answer is out
(``CORE_AFTER_IDLE_S``), before dsh's first call needs it; never if its input ends first.
"""

from __future__ import annotations

import sys

from breaker.streams import announce

if __name__ == "__main__":
    announce(sys.argv[1:])  # the FIFOs first: the shim opens its ends while the rest is imported

import contextlib
import gc
import os
import select
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from breaker.audit import forbid_side_effects
from breaker.core.config import BreakerConfig, ConfigError, load_config
from breaker.core.history.agents import OPERATIONS
from breaker.core.reading.counted import counted_tools_pattern
from breaker.core.reading.names import grouping
from breaker.core.reading.sent import BREAKS, CONDENSED_CHARS, FACT_FIELDS, FACT_TEXT_CHARS, RESULT_TEXT_CHARS
from breaker.core.wording.unavailable import WORKER_FAILURE_DENIAL
from breaker.lifeline import die_with_the_shim
from breaker.protocol import (
    BadRequest,
    Commit,
    Configure,
    Forget,
    FrameDecoder,
    Guard,
    Human,
    Preflight,
    Reply,
    Request,
    Result,
    Shutdown,
    Stats,
    Step,
    encode_frame_parts,
    error_reply,
    ok_reply,
    superseded,
)
from breaker.strayrows import patch_rows, stray_rows
from breaker.streams import USAGE, open_streams, stream_options

if TYPE_CHECKING:
    import logging
    from collections.abc import Callable

    from breaker.core.decision import Breaker
    from breaker.core.judging.verdicts import Ask
    from breaker.core.reading.fingerprints import ToolCall

#: Set by ``main``: log lines go to stderr with the worker's prefix. ``logging`` is imported (and set
#: up) when first used: by an error, or by ``RequestHandler.start`` once ``configure`` is answered.
_LOG_TO_STDERR = False


def worker_log() -> logging.Logger:
    import logging

    if _LOG_TO_STDERR:  # does nothing once the root logger has a handler
        logging.basicConfig(
            stream=sys.stderr, level=logging.INFO, format="repeat-tool-breaker worker: %(message)s"
        )
    return logging.getLogger("breaker.worker")


READ_SIZE = 1 << 20
#: Below the usual IOV_MAX of 1024 buffers per writev.
WRITEV_MAX_PARTS = 512
#: After answering, how long the worker keeps reading its input before it sleeps (seconds). A
#: sleeping worker costs the shim's event loop a wake-up with every request it writes (20-60 µs on
#: a small VM); an agent calling back to back sends its next one well within this, and an idle
#: worker spends at most this much CPU per batch before it sleeps.
POLL_BEFORE_SLEEP_S = 0.0003
#: After answering ``configure``, the seconds idle before the decision core is imported unasked:
#: none, so dsh's first call never waits for the import (docs/benchmarks.md, "Starting").
CORE_AFTER_IDLE_S = 0.0


class RequestHandler:
    """Request → Breaker call → reply. Holds the Breaker once ``configure`` has succeeded.

    ``defer_core``: a successful ``configure`` only validates; the Breaker is built (and the
    decision core imported) by ``start``, which the worker calls once the answer has gone out.
    ``start`` also imports, configured or not, the verdict types and the redaction rules (error
    replies quote through them): under ``RTB_AUDIT`` an import once serving would end the worker.
    """

    def __init__(self, *, defer_core: bool = False) -> None:
        self._defer_core = defer_core
        self._config: BreakerConfig | None = None
        self._breaker: Breaker | None = None
        self._tool_call: type[ToolCall] | None = None
        self._stand_in: Callable[[ToolCall, BreakerConfig], object] | None = None
        self._ask: type[Ask] | None = None  # the verdict type a preflight may answer, once imported

    def start(self) -> None:
        """Build the Breaker of the accepted configuration, if there is one and it is not built yet."""
        if self._ask is None:
            import traceback  # noqa: F401  # what handle() logs, and the redaction of error replies

            import breaker.core.wording.redaction  # noqa: F401
            from breaker.core.judging.verdicts import Ask

            worker_log()

            self._ask = Ask
        if self._config is not None and self._breaker is None:
            from breaker.core.decision import Breaker
            from breaker.core.history.standin import stand_in
            from breaker.core.reading.fingerprints import ToolCall

            self._breaker = Breaker(self._config)
            self._tool_call = ToolCall
            self._stand_in = stand_in

    def handle(self, request: Request | BadRequest, *, promise: bool = True) -> Reply:
        """The reply to ``request``; ``promise`` False: a ``result``'s reply leaves its passes out (a
        later result of the agent, read with it, brings them: ``superseded``)."""
        if isinstance(request, BadRequest):
            return error_reply(request.id, request.error)
        try:
            return self._dispatch(request, promise)
        except Exception as error:  # a bug in the core must cost one reply, not the worker
            # The traceback may quote the arguments; it is logged redacted, like everything else.
            import traceback

            from breaker.core.wording.redaction import redact  # imported by start() if not before

            worker_log().error(
                "%s request %d failed: %s", request.op, request.id, redact(traceback.format_exc())
            )
            return error_reply(request.id, f"{request.op} failed: {type(error).__name__}: {error}")

    def _dispatch(self, request: Request, promise: bool) -> Reply:
        if isinstance(request, Configure):
            return self._configure(request)
        if isinstance(request, Shutdown):
            return ok_reply(request.id)
        if self._config is None:
            return error_reply(request.id, f"{request.op} before a successful configure")
        breaker, ToolCall, Ask = self._breaker, self._tool_call, self._ask
        if breaker is None or ToolCall is None or Ask is None:
            self.start()  # the classes, imported by start()
            breaker, ToolCall, Ask = self._breaker, self._tool_call, self._ask
            assert breaker is not None and ToolCall is not None and Ask is not None
        # The two requests of every call (a guard, a result) are matched first.
        match request:
            case Guard():
                call = ToolCall(request.name, request.args, request.call)
                verdict = breaker.decide(request.agent, call)
                if request.reply == "errors":
                    return ok_reply(request.id)  # a call the shim let through on a pass: allowed
                reply = ok_reply(request.id, **breaker.denial(verdict), **breaker.promise(request.agent))
                return self._with_history(self._with_stand_in(reply, request.stand_in, call), request.agent)
            case Result():
                notices = breaker.record_result(request.agent, request.call, request.text, request.outcome)
                if request.reply == "errors":
                    return ok_reply(request.id)  # an event: nobody reads the reply
                reply = ok_reply(request.id, **(breaker.promise(request.agent) if promise else {}))
                if notices:
                    reply["notices"] = [{"text": owed.text, "summary": owed.summary} for owed in notices]
                return reply
            case Preflight():
                call = ToolCall(request.name, request.args, request.call)
                answer = breaker.precheck(request.agent, call)
                if isinstance(answer, Ask):
                    return self._with_stand_in(
                        ok_reply(request.id, ask=answer.reason, decided=False), request.stand_in, call
                    )
                if answer is None:
                    return ok_reply(request.id, ask=None, decided=False, **breaker.promise(request.agent))
                reply = ok_reply(request.id, ask=None, decided=True, **breaker.promise(request.agent))
                reply.update(breaker.denial(answer))
                return self._with_history(self._with_stand_in(reply, request.stand_in, call), request.agent)
            case Commit():
                if breaker.commit(request.agent, request.call) is None:
                    # The shim used a verdict this worker no longer holds: the two sides disagree
                    # about the ahead-of-guard rule (agents.OPERATIONS). Nothing was committed.
                    return error_reply(request.id, f"commit: no verdict kept for call {request.call[:80]!r}")
            case Human():
                breaker.human_message(request.agent)
            case Step():
                breaker.new_step(request.agent)
            case Forget():
                breaker.forget(request.agent)
            case Stats():
                return ok_reply(request.id, stats=dict(breaker.stats()))
        return ok_reply(request.id)

    def _with_stand_in(self, reply: Reply, asked: object, call: ToolCall) -> Reply:
        """``reply`` with the call's stand-in when the shim asked for one and there is one."""
        if asked and self._breaker is not None and self._stand_in is not None:
            arguments = self._stand_in(call, self._breaker.config)
            if arguments is not None:
                reply["standIn"] = arguments
        return reply

    def _with_history(self, reply: Reply, agent: int) -> Reply:
        """``reply`` with ``keepFrom`` when the agent's state needs calls older than its window
        (``Breaker.history_from``): the shim's journal keeps them from that call on."""
        first = self._breaker.history_from(agent) if self._breaker is not None else None
        if first is not None:
            reply["keepFrom"] = first
        return reply

    def _configure(self, request: Configure) -> Reply:
        if self._config is not None:
            # The shim starts a new worker for a new configuration; a second one could only come
            # from a stray writer, and could switch every cap off.
            return error_reply(request.id, "configure: this worker is configured already")
        try:
            config = load_config(request.config, type_checked=not request.known)
        except ConfigError as error:
            return error_reply(request.id, str(error))
        self._config = config
        if not self._defer_core:
            self.start()
        settings = {
            "countedTools": counted_tools_pattern(config),
            "onWorkerFailure": config.onWorkerFailure,
            "guardTimeoutMs": config.guardTimeoutMs,
            "startTimeoutMs": config.startTimeoutMs,
            # How much of an agent's history the shim must journal to rebuild a new worker.
            "window": config.window,
            "maxAgents": config.maxAgents,
            "logDenials": config.logDenials,
            # Whether a result can earn a notice, so the shim must wait for the result's reply.
            "notices": config.gives_notices,
            # A call this heavy (text units) may hold a text that counts by its digest: it asks for
            # its stand-in, which the journal keeps instead of the call (breaker/core/history/standin.py).
            "condensedChars": CONDENSED_CHARS,
            # What the shim must not define itself: which requests make an agent the most recent
            # and which drop verdicts kept ahead (agents.OPERATIONS), how much of a result and
            # which of its facts it sends, and the denial it gives when no worker can answer.
            "operations": {
                op: {"recent": effect.recent, "changes": effect.changes} for op, effect in OPERATIONS.items()
            },
            "resultTextChars": RESULT_TEXT_CHARS,
            "factFields": list(FACT_FIELDS),
            "factTextChars": FACT_TEXT_CHARS,
            "breaks": BREAKS._asdict(),  # what in a result breaks a conditional pass
            "grouping": grouping(config.ignoreArgs, config.url_calls_grouped, config.window),
            "workerFailureDenial": WORKER_FAILURE_DENIAL,
            # Rows dsh gives to nothing that were meant for this plugin: the shim prints each line.
            "strays": [stray.line for stray in stray_rows(patch_rows(request.rows))],
        }
        return ok_reply(request.id, settings=settings)


def serve(
    input_fd: int,
    output_fd: int,
    *,
    later_fd: int | None = None,
    audit: bool = False,
    handler: RequestHandler | None = None,
    decoder: FrameDecoder | None = None,
    prepare: Callable[[], None] | None = None,
) -> None:
    """Answer requests from ``input_fd`` on ``output_fd`` (and ``later_fd``, for the replies a
    request asks to get there) until end of input or ``shutdown``; ``handler`` and ``decoder``
    carry on from ``answer_configure``. ``prepare`` is called once, before the first requests are
    handled or once nothing has come for ``CORE_AFTER_IDLE_S``; never if input ends first."""
    if audit:  # every import is done (prepare's first): what follows is the decision path
        if prepare is not None:
            prepare()
        prepare = None
        forbid_side_effects()
    handler = handler or RequestHandler()
    decoder = decoder or FrameDecoder()
    until = None if prepare is None else time.monotonic() + CORE_AFTER_IDLE_S
    was_blocking = os.get_blocking(input_fd)
    os.set_blocking(input_fd, False)
    try:
        while True:
            chunk = _read_soon(input_fd)
            if chunk is None:
                waited = None if until is None else max(0.0, until - time.monotonic())
                if select.select([input_fd], [], [], waited)[0] or prepare is None:
                    continue  # there is input, or its end
            elif not chunk:
                if decoder.pending:
                    _write_replies(output_fd, [error_reply(None, "input ended inside a frame")])
                return
            if prepare is not None:  # before the first requests, or once idle that long
                prepare()
                prepare = until = None
            if chunk and _answer(handler, decoder.feed(chunk), output_fd, later_fd):
                return
    finally:
        os.set_blocking(input_fd, was_blocking)


def _answer(
    handler: RequestHandler, requests: Iterable[Request | BadRequest], output_fd: int, later_fd: int | None
) -> bool:
    """Handle ``requests`` and write their replies, each to its stream; True after ``shutdown``."""
    replies: list[Reply] = []
    later: list[Reply] = []
    stop = False
    requests = list(requests)
    restated = superseded(requests)
    for position, request in enumerate(requests):
        reply = handler.handle(request, promise=position not in restated)
        if request.reply is None:
            replies.append(reply)
        elif request.reply == "later" or not reply["ok"]:
            later.append(reply)
        if isinstance(request, Shutdown):
            stop = True
            break
    _write_replies(output_fd, replies)
    _write_replies(output_fd if later_fd is None else later_fd, later)
    return stop


def answer_configure(
    handler: RequestHandler,
    decoder: FrameDecoder,
    input_fd: int,
    output_fd: int,
    later_fd: int | None,
    first: bytes = b"",
) -> bool:
    """Before anything else is imported: read (blocking) up to the first whole request and answer
    the requests read with it, the shim's ``configure`` first (``first``: what was read before,
    breaker/streams.py). False when input ended or after a ``shutdown``: nothing is left to serve."""
    while True:
        chunk, first = first or os.read(input_fd, READ_SIZE), b""
        if not chunk:
            if decoder.pending:
                _write_replies(output_fd, [error_reply(None, "input ended inside a frame")])
            return False
        requests = list(decoder.feed(chunk))
        if requests:
            return not _answer(handler, requests, output_fd, later_fd)


def _read_soon(fd: int) -> bytes | None:
    """What ``fd`` holds now or within POLL_BEFORE_SLEEP_S, else None (time to sleep)."""
    until = time.perf_counter() + POLL_BEFORE_SLEEP_S
    while True:
        try:
            return os.read(fd, READ_SIZE)
        except BlockingIOError:
            if time.perf_counter() >= until:
                return None


def _write_replies(fd: int, replies: list[Reply]) -> None:
    if not replies:
        return
    parts: list[bytes] = []
    for reply in replies:
        parts.extend(encode_frame_parts(reply))
    for first in range(0, len(parts), WRITEV_MAX_PARTS):
        _write_all(fd, parts[first : first + WRITEV_MAX_PARTS])


def _write_all(fd: int, parts: list[bytes]) -> None:
    written = os.writev(fd, parts)
    total = sum(map(len, parts))
    if written < total:  # a signal interrupted the write: finish the rest the plain way
        remainder = memoryview(b"".join(parts))[written:]
        while remainder:
            remainder = remainder[os.write(fd, remainder) :]


def main(argv: list[str] | None = None) -> int:
    parent = os.getppid()
    global _LOG_TO_STDERR
    _LOG_TO_STDERR = True
    try:
        folder, later_fd = stream_options(sys.argv[1:] if argv is None else argv)
    except ValueError as error:
        sys.stderr.write(f"{USAGE}\npython -m breaker.worker: error: {error}\n")
        return 2
    sys.stdout = sys.stderr
    with contextlib.suppress(BrokenPipeError):  # the shim went away; nobody is left to answer
        streams = open_streams(folder, later_fd)
        output_fd, later_fd = streams.output_fd, streams.later_fd
        handler = RequestHandler(defer_core=True)
        decoder = FrameDecoder()
        if not answer_configure(handler, decoder, streams.input_fd, output_fd, later_fd, streams.first):
            return 0
        die_with_the_shim(parent)

        def prepare() -> None:  # the decision core; what is made by then lives as long as the
            handler.start()  # worker: the cyclic collector stops walking it (a full collection
            gc.freeze()  # took ~25 ms mid-call)

        audit = os.environ.get("RTB_AUDIT") == "1"
        serve(
            streams.input_fd,
            output_fd,
            later_fd=later_fd,
            audit=audit,
            handler=handler,
            decoder=decoder,
            prepare=prepare,
        )
    return 0


if __name__ == "__main__":
    code = main()
    # Nothing is left to do: the interpreter's teardown (~9 ms of CPU at every dsh exit) is skipped.
    sys.stderr.flush()
    os._exit(code)
