"""The message set between the shim and the worker: each op's request and its fields, replies.

A decoded frame (a msgpack map, ``breaker.frames``) becomes a typed request here, or a
``BadRequest`` saying every problem with it. The ops, their fields and replies are documented
in ``breaker.protocol``'s docstring, the reference.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

#: An error reply is read by an operator, not parsed: a few lines at most.
ERROR_TEXT_CHARS = 1000

#: An unknown op is quoted this far: enough to recognise a typo, never a whole argument.
_OP_SHOWN_CHARS = 40

Reply = dict[str, Any]


#: Where a request's reply goes (see the module docstring); None: on stdout.
ReplyMode = Literal["later", "errors"] | None


# Requests are named tuples (immutable and the cheapest records to build) checked by hand in
# ``_read_request``: a tool call costs the worker two or three frames, and the model validator
# this replaced cost more than decoding them. Every request has ``id``, its own fields, ``reply``
# and ``op`` last: ``op`` differs by type, so requests of two types never compare equal.


class Configure(NamedTuple):
    id: int
    #: Left untyped on purpose: ``load_config`` explains a config of the wrong shape itself.
    config: Any = None
    #: Truthy: the shim says this very configuration was accepted before by this very code, so
    #: pydantic's strict check (the last gate behind ``load_config``'s own) is not repeated.
    known: Any = None
    #: The rows of the patches dsh composed, as ``{id, keys, name}`` (the keys of a row's ``config:``),
    #: for ``breaker.strayrows``; untyped: whatever it holds, what cannot be a row is skipped.
    rows: Any = None
    reply: ReplyMode = None
    op: Literal["configure"] = "configure"


class Guard(NamedTuple):
    id: int
    agent: int
    call: str
    name: str
    args: Any = None
    #: Truthy: the reply carries ``standIn`` when the call has one (``breaker.core.history.standin``).
    stand_in: Any = None
    reply: ReplyMode = None
    op: Literal["guard"] = "guard"


class Preflight(NamedTuple):
    id: int
    agent: int
    call: str
    name: str
    args: Any = None
    #: Truthy: the reply carries ``standIn`` when the call has one (``breaker.core.history.standin``).
    stand_in: Any = None
    reply: ReplyMode = None
    op: Literal["preflight"] = "preflight"


class Commit(NamedTuple):
    id: int
    agent: int
    call: str
    reply: ReplyMode = None
    op: Literal["commit"] = "commit"


class Result(NamedTuple):
    id: int
    agent: int
    call: str
    text: str
    #: The plain facts the failure track judges (``breaker.core.reading.outcomes.judge``); nil from
    #: older shims.
    outcome: dict[str, Any] | None = None
    reply: ReplyMode = None
    op: Literal["result"] = "result"


class Human(NamedTuple):
    id: int
    agent: int
    reply: ReplyMode = None
    op: Literal["human"] = "human"


class Step(NamedTuple):
    id: int
    agent: int
    reply: ReplyMode = None
    op: Literal["step"] = "step"


class Forget(NamedTuple):
    id: int
    agent: int
    reply: ReplyMode = None
    op: Literal["forget"] = "forget"


class Stats(NamedTuple):
    id: int
    reply: ReplyMode = None
    op: Literal["stats"] = "stats"


class Shutdown(NamedTuple):
    id: int
    reply: ReplyMode = None
    op: Literal["shutdown"] = "shutdown"


Request = Configure | Guard | Preflight | Commit | Result | Human | Step | Forget | Stats | Shutdown


class _Anything:
    """A field that takes any value; absent, it is None."""


class _StringKeyedMap:
    """A field that takes nil or a map whose keys are strings (a msgpack key can be any value);
    absent, it is None."""


#: What a field takes: ``int`` or ``str`` exactly (a bool is an int subclass, and no integer
#: here), and then it is required; or one of the two optional kinds above.
_Kind = type[int] | type[str] | type[_Anything] | type[_StringKeyedMap]

#: op → its request type and its fields between ``id`` and ``reply``, in the order of the type's
#: fields and of the problems an error text tells.
_REQUEST_FIELDS: dict[str, tuple[type[Request], tuple[tuple[str, _Kind], ...]]] = {
    "configure": (Configure, (("config", _Anything), ("known", _Anything), ("rows", _Anything))),
    "guard": (
        Guard,
        (("agent", int), ("call", str), ("name", str), ("args", _Anything), ("standIn", _Anything)),
    ),
    "preflight": (
        Preflight,
        (("agent", int), ("call", str), ("name", str), ("args", _Anything), ("standIn", _Anything)),
    ),
    "commit": (Commit, (("agent", int), ("call", str))),
    "result": (Result, (("agent", int), ("call", str), ("text", str), ("outcome", _StringKeyedMap))),
    "human": (Human, (("agent", int),)),
    "step": (Step, (("agent", int),)),
    "forget": (Forget, (("agent", int),)),
    "stats": (Stats, ()),
    "shutdown": (Shutdown, ()),
}


def read_request(message: object) -> Request | BadRequest:
    """A decoded frame → a validated request, or the reason it is not one."""
    if not isinstance(message, dict):
        return BadRequest(None, f"frame must hold a map, got {_type_name(message)}")
    request_id = message.get("id")
    if type(request_id) is not int:  # exactly: a bool is an int subclass, and no id
        return BadRequest(None, f"request needs an integer id, got {_brief(request_id)}")
    op = message.get("op")
    reply = message.get("reply")
    mode: ReplyMode = reply if reply in ("later", "errors") else None
    if not isinstance(op, str):  # a list or a map is not even hashable: test the type first
        return BadRequest(request_id, f"op must be a string, got {_type_name(op)}", reply=mode)
    if op not in _REQUEST_FIELDS:
        known = ", ".join(_REQUEST_FIELDS)
        return BadRequest(request_id, f"unknown op {op[:_OP_SHOWN_CHARS]!r} (known: {known})", reply=mode)
    return _read_request(message, request_id, op, mode)


def _read_request(message: dict[Any, Any], request_id: int, op: str, mode: ReplyMode) -> Request | BadRequest:
    """The request a map with an integer id and a known op holds, or every problem with it."""
    request_type, fields = _REQUEST_FIELDS[op]
    values: list[Any] = [request_id]
    problems: list[str] = []
    if mode is None and message.get("reply") is not None:
        problems.append("reply: Input should be 'later' or 'errors'")
    for name, kind in fields:
        value = message.get(name)
        if type(value) is kind or kind is _Anything or (kind is _StringKeyedMap and _is_string_keyed(value)):
            values.append(value)
        else:
            problems.append(_field_problem(name, kind, value, name in message))
    if problems:
        return BadRequest(request_id, f"{op}: {'; '.join(problems)}", reply=mode)
    values.append(mode)
    return request_type(*values)


def _is_string_keyed(value: object) -> bool:
    # The keys' types gathered in C: a result's facts are read with every result.
    return value is None or (type(value) is dict and set(map(type, value)) <= _STRING_ONLY)


_STRING_ONLY = frozenset({str})


def _field_problem(name: str, kind: _Kind, value: object, present: bool) -> str:
    """Why a field does not fit, worded as the pydantic validation this replaced worded it (the
    shim's logs and the tests read these texts)."""
    if not present:
        return f"{name}: Field required"
    if kind is int:
        return f"{name}: Input should be a valid integer"
    if kind is str:
        return f"{name}: Input should be a valid string"
    if not isinstance(value, dict):
        return f"{name}: Input should be a valid dictionary"
    wrong_keys = [key for key in value if type(key) is not str]
    problems = (f"{name}.{_key_location(key)}.[key]: Input should be a valid string" for key in wrong_keys)
    return "; ".join(problems)


def _key_location(key: object) -> str:
    """A map key in an error's location: integers and booleans as numbers, the rest by repr."""
    return str(int(key)) if isinstance(key, int) else repr(key)


@dataclass(frozen=True, slots=True)
class BadRequest:
    """A frame that is not a valid request; it is answered with ``error_reply(id, error)``."""

    id: int | None
    error: str
    #: The body was not msgpack: its length prefix may be wrong, so the stream may be out of step.
    unreadable: bool = False
    #: Where its reply goes, when the frame said so in a readable way.
    reply: ReplyMode = None


def superseded(requests: list[Request | BadRequest]) -> set[int]:
    """The positions of awaited ``result`` requests followed, among those read at once, by another
    awaited result of the same agent: the last one's reply brings the passes as of then, and theirs
    leave them out (the shim keeps the latest answer's passes, and grants nothing for a reply
    without them). When the worker lags behind an agent calling back to back it reads several of
    its results at once, and each promise costs as much as reading a result."""
    answered: set[int] = set()  # agents whose result further on is answered with its passes
    positions: set[int] = set()
    for position in range(len(requests) - 1, -1, -1):
        request = requests[position]
        if isinstance(request, Result) and request.reply != "errors":
            if request.agent in answered:
                positions.add(position)
            answered.add(request.agent)
    return positions


def ok_reply(request_id: int, **fields: Any) -> Reply:
    return {"id": request_id, "ok": True, **fields}


def error_reply(request_id: int | None, error: str) -> Reply:
    """The shim logs this text, so what an odd frame or a failure quoted is redacted and cut short.

    The redaction rules are imported here, not with this module: a worker answers ``configure``
    before it imports them, and imports them with the decision core (``RequestHandler.start``);
    their patterns compile at the first redaction (``secretformats.redactions``)."""
    from breaker.core.wording.redaction import REDACTION_MARGIN, redact

    text = redact(error[: ERROR_TEXT_CHARS + REDACTION_MARGIN])
    if len(text) > ERROR_TEXT_CHARS:
        text = text[:ERROR_TEXT_CHARS] + " [cut]"
    return {"id": request_id, "ok": False, "error": text}


def _type_name(value: object) -> str:
    return "nil" if value is None else type(value).__name__


def _brief(value: object) -> str:
    """A field's value for an error text: short scalars as they are, anything else by its type."""
    if isinstance(value, (str, int, float)) or value is None:
        text = repr(value)
        return text if len(text) <= 80 else f"{text[:80]}... ({_type_name(value)})"
    return f"a {_type_name(value)}"
