"""Frames and messages between the Node shim and the Python worker (pure: no I/O).

Framing
    A frame is a 4-byte big-endian unsigned length ``N`` followed by ``N`` bytes holding one
    msgpack map. Strings are UTF-8: the shim replaces lone UTF-16 surrogates with U+FFFD before
    encoding, and the worker decodes invalid UTF-8 with replacement too, so text never breaks a
    frame. A frame longer than ``MAX_FRAME_BYTES`` is skipped without being buffered and answered
    with an error, so one hostile argument cannot exhaust memory or desynchronise the stream.

Requests (shim → worker)
    Every request is a map with ``id`` (int) and ``op`` (str). The worker answers every request
    with exactly one reply carrying the same ``id``, in request order; a reply is
    ``{id, ok: true, ...fields}`` or ``{id, ok: false, error: str}``. A frame whose ``id`` cannot
    be read (not msgpack, not a map, no int ``id``) is answered with ``id: null``.

    ============  ===================================  =========================================
    op            request fields                       ok reply fields
    ============  ===================================  =========================================
    configure     config: raw map | nil                settings: {countedTools, onWorkerFailure,
                                                       guardTimeoutMs, startTimeoutMs, window,
                                                       maxAgents, notices}
    guard         agent: int, call: str, name: str,    deny: str | nil   (``Breaker.decide``)
                  args: any
    preflight     agent, call, name, args              ask: str | nil, deny: str | nil, decided:
                                                       bool (``Breaker.precheck``: the ask, else
                                                       the guard's verdict as of now when
                                                       ``decided``, kept for ``commit``)
    commit        agent: int, call: str                -                 (``Breaker.commit``: the
                                                       kept verdict of that call takes effect)
    result        agent: int, call: str, text: str,    notices: [{text, summary}], only when
                  outcome: map | nil                   some are owed (``record_result``)
    human         agent: int                           -                 (``human_message``)
    forget        agent: int                           -
    stats         -                                    stats: map
    shutdown      -                                    - (then the worker exits 0)
    ============  ===================================  =========================================

    ``reply`` (optional) says where the reply goes: absent, on stdout in request order (the shim
    blocks for it); ``"later"``, on the worker's second reply stream, in request order (the
    shim's event loop reads it; ``--later-replies FD`` names it, else stdout serves); ``"errors"``,
    nowhere unless the request failed, and then on that second stream (events nobody waits for).

    ``preflight`` serves ``tools/pre-execute``, which dsh awaits before the guard: the shim uses a
    ``decided`` verdict in the guard, without a round trip, only when nothing else was sent for
    that agent since (but preflights that did not ask), and then sends ``commit``; otherwise the
    guard sends ``guard`` as usual (node-shim/ahead.js). ``commit`` of a call with no kept verdict
    changes nothing (a replacement worker rebuilt that call from the journal's ``guard``).

    ``configure`` must succeed before any other op except ``shutdown``; a config
    that ``load_config`` rejects is answered with ``ok: false`` and the ConfigError text, which
    names the key. Sending ``configure`` again replaces the breaker and its state. Unknown extra
    fields are ignored, so a newer shim can talk to this worker; a wrong field type is an error.

An ordered pipe gives the ordering guarantee the shim relies on: an event (``result``, ``human``)
sent before a ``guard`` is applied before that guard is decided.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import msgpack  # type: ignore[import-untyped]  # no stubs published
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from breaker.core.messages import REDACTION_MARGIN, redact

#: Big enough for any real tool call (a 10 MB write), small enough to bound the worker's memory.
MAX_FRAME_BYTES = 64 * 1024 * 1024

#: An error reply is read by an operator, not parsed: a few lines at most.
ERROR_TEXT_CHARS = 1000

#: An unknown op is quoted this far: enough to recognise a typo, never a whole argument.
_OP_SHOWN_CHARS = 40

_HEADER = struct.Struct(">I")
HEADER_BYTES = _HEADER.size

Reply = dict[str, Any]


#: Where a request's reply goes (see the module docstring); None: on stdout.
ReplyMode = Literal["later", "errors"] | None


class _Request(BaseModel):
    model_config = ConfigDict(strict=True, frozen=True, extra="ignore")

    id: int
    reply: ReplyMode = None


class Configure(_Request):
    op: Literal["configure"]
    #: Left untyped on purpose: ``load_config`` explains a config of the wrong shape itself.
    config: Any = None


class Guard(_Request):
    op: Literal["guard"]
    agent: int
    call: str
    name: str
    args: Any = None


class Preflight(_Request):
    op: Literal["preflight"]
    agent: int
    call: str
    name: str
    args: Any = None


class Commit(_Request):
    op: Literal["commit"]
    agent: int
    call: str


class Result(_Request):
    op: Literal["result"]
    agent: int
    call: str
    text: str
    #: The plain facts the failure track judges (``breaker.core.outcomes.judge``); nil from older shims.
    outcome: dict[str, Any] | None = None


class Human(_Request):
    op: Literal["human"]
    agent: int


class Forget(_Request):
    op: Literal["forget"]
    agent: int


class Stats(_Request):
    op: Literal["stats"]


class Shutdown(_Request):
    op: Literal["shutdown"]


Request = Configure | Guard | Preflight | Commit | Result | Human | Forget | Stats | Shutdown

_REQUEST_TYPES: dict[str, type[_Request]] = {
    "configure": Configure,
    "guard": Guard,
    "preflight": Preflight,
    "commit": Commit,
    "result": Result,
    "human": Human,
    "forget": Forget,
    "stats": Stats,
    "shutdown": Shutdown,
}
_request_adapter: TypeAdapter[Request] = TypeAdapter(
    Annotated[Request, Field(discriminator="op")]
)


@dataclass(frozen=True, slots=True)
class BadRequest:
    """A frame that is not a valid request; it is answered with ``error_reply(id, error)``."""

    id: int | None
    error: str
    #: Where its reply goes, when the frame said so in a readable way.
    reply: ReplyMode = None


def parse_request(body: bytes | memoryview) -> Request | BadRequest:
    """One frame body → a validated request, or the reason it is not one."""
    try:
        message = msgpack.unpackb(body, raw=False, unicode_errors="replace", strict_map_key=False)
    except Exception as error:  # msgpack raises several unrelated types for bad input
        return BadRequest(None, f"frame is not valid msgpack: {type(error).__name__}: {error}")
    if not isinstance(message, dict):
        return BadRequest(None, f"frame must hold a map, got {_type_name(message)}")
    request_id = message.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, int):
        return BadRequest(None, f"request needs an integer id, got {request_id!r}")
    op = message.get("op")
    reply = message.get("reply")
    mode: ReplyMode = reply if reply in ("later", "errors") else None
    if not isinstance(op, str):  # a list or a map is not even hashable: test the type first
        return BadRequest(request_id, f"op must be a string, got {_type_name(op)}", mode)
    if op not in _REQUEST_TYPES:
        known = ", ".join(_REQUEST_TYPES)
        return BadRequest(request_id, f"unknown op {op[:_OP_SHOWN_CHARS]!r} (known: {known})", mode)
    try:
        return _request_adapter.validate_python(message)
    except ValidationError as error:
        return BadRequest(request_id, f"{op}: {_describe(error)}", mode)


def ok_reply(request_id: int, **fields: Any) -> Reply:
    return {"id": request_id, "ok": True, **fields}


def error_reply(request_id: int | None, error: str) -> Reply:
    """The shim logs this text, so what an odd frame or a failure quoted is redacted and cut short."""
    text = redact(error[: ERROR_TEXT_CHARS + REDACTION_MARGIN])
    if len(text) > ERROR_TEXT_CHARS:
        text = text[:ERROR_TEXT_CHARS] + " [cut]"
    return {"id": request_id, "ok": False, "error": text}


_packer = msgpack.Packer(use_bin_type=True)


def encode_frame_parts(message: Reply) -> tuple[bytes, bytes]:
    """The header and the body of one frame, kept apart so a writer can send them without joining."""
    body: bytes = _packer.pack(message)
    return _HEADER.pack(len(body)), body


def encode_frame(message: Reply) -> bytes:
    header, body = encode_frame_parts(message)
    return header + body


class FrameDecoder:
    """Incremental: feed whatever a read returned, get every request it completed."""

    def __init__(self, max_frame_bytes: int = MAX_FRAME_BYTES) -> None:
        self._max_frame_bytes = max_frame_bytes
        self._buffer = bytearray()
        self._skipping = 0  # bytes of an oversized frame still to discard

    @property
    def pending(self) -> int:
        """Bytes of an unfinished frame (non-zero at end of input means a truncated frame)."""
        return len(self._buffer) + self._skipping

    def feed(self, data: bytes) -> list[Request | BadRequest]:
        if self._skipping:
            skipped = min(self._skipping, len(data))
            self._skipping -= skipped
            data = data[skipped:]
        buffer = self._buffer
        buffer += data
        decoded: list[Request | BadRequest] = []
        start = 0
        while len(buffer) - start >= HEADER_BYTES:
            (length,) = _HEADER.unpack_from(buffer, start)
            if length > self._max_frame_bytes:
                available = len(buffer) - start - HEADER_BYTES
                self._skipping = max(0, length - available)
                start = min(len(buffer), start + HEADER_BYTES + length)
                decoded.append(
                    BadRequest(None, f"frame of {length} bytes exceeds the limit of {self._max_frame_bytes}")
                )
                continue
            end = start + HEADER_BYTES + length
            if end > len(buffer):
                break
            with memoryview(buffer) as view:
                decoded.append(parse_request(view[start + HEADER_BYTES : end]))
            start = end
        del buffer[:start]
        return decoded


def _describe(error: ValidationError) -> str:
    parts = []
    for detail in error.errors(include_url=False):
        location = ".".join(str(item) for item in detail["loc"][1:]) or "message"
        parts.append(f"{location}: {detail['msg']}")
    return "; ".join(parts)


def _type_name(value: object) -> str:
    return "nil" if value is None else type(value).__name__
