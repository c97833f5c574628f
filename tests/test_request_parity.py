"""The hand-written request checks accept, refuse and explain exactly as the pydantic models they
replaced did: those models are kept here as the reference, and generated frames go through both."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgpack  # type: ignore[import-untyped]
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from breaker.protocol import BadRequest, parse_request


class _Request(BaseModel):
    model_config = ConfigDict(strict=True, frozen=True, extra="ignore")

    id: int
    reply: Literal["later", "errors"] | None = None


class Configure(_Request):
    op: Literal["configure"]
    config: Any = None


class Guard(_Request):
    op: Literal["guard"]
    agent: int
    call: str
    name: str
    args: Any = None
    stand_in: Any = Field(default=None, alias="standIn")


class Preflight(_Request):
    op: Literal["preflight"]
    agent: int
    call: str
    name: str
    args: Any = None
    stand_in: Any = Field(default=None, alias="standIn")


class Commit(_Request):
    op: Literal["commit"]
    agent: int
    call: str


class Result(_Request):
    op: Literal["result"]
    agent: int
    call: str
    text: str
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


_Reference = Configure | Guard | Preflight | Commit | Result | Human | Forget | Stats | Shutdown
_reference: TypeAdapter[_Reference] = TypeAdapter(Annotated[_Reference, Field(discriminator="op")])
OPS = ["configure", "guard", "preflight", "commit", "result", "human", "forget", "stats", "shutdown"]


def reference_parse(message: dict[Any, Any]) -> tuple[str, dict[str, Any]] | BadRequest:
    """What ``parse_request`` made of a map with an integer id and a known op before: the type's
    name and the fields, or the refusal."""
    reply = message.get("reply")
    mode = reply if reply in ("later", "errors") else None
    try:
        request = _reference.validate_python(message)
    except ValidationError as error:
        problems = []
        for detail in error.errors(include_url=False):
            location = ".".join(str(item) for item in detail["loc"][1:]) or "message"
            problems.append(f"{location}: {detail['msg']}")
        return BadRequest(message["id"], f"{message['op']}: {'; '.join(problems)}", reply=mode)
    return type(request).__name__, dict(sorted(dict(request).items()))


def parse(message: dict[Any, Any]) -> tuple[str, dict[str, Any]] | BadRequest:
    parsed = parse_request(msgpack.packb(message, use_bin_type=True))
    if isinstance(parsed, BadRequest):
        return parsed
    return type(parsed).__name__, dict(sorted(parsed._asdict().items()))


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats()
    | st.text(max_size=6)
    | st.binary(max_size=4)
    | st.builds(msgpack.ExtType, st.integers(0, 127), st.binary(max_size=2))
)
_KEYS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats()
    | st.text(max_size=4)
    | st.binary(max_size=4)
)
_VALUES = st.recursive(
    _SCALARS,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_KEYS, children, max_size=3),
    max_leaves=6,
)
#: Values a field most often holds, so that most frames are accepted or nearly so.
_LIKELY = st.sampled_from([0, 3, "c1", "later", "errors", None, {"exitCode": 1}, {}, True, b"c1"])
_FIELD = _LIKELY | _VALUES
_MESSAGES = st.fixed_dictionaries(
    {"id": st.integers(-(2**63), 2**64 - 1), "op": st.sampled_from(OPS)},
    optional={
        name: _FIELD
        for name in ("reply", "agent", "call", "name", "args", "text", "outcome", "config", "future")
    },
)


@settings(deadline=None, max_examples=3000)  # the first example pays for building the validators
@given(_MESSAGES)
def test_a_request_is_read_as_the_pydantic_models_read_it(message: dict[str, Any]) -> None:
    assert repr(parse(message)) == repr(reference_parse(message))


def test_the_texts_pinned_here_are_the_reference_texts() -> None:
    message = {
        "id": 1,
        "op": "result",
        "reply": "x",
        "agent": True,
        "call": b"c",
        "text": None,
        "outcome": {b"x": 1, 3.5: 1, None: 1, True: 1, 2**64 - 1: 1, "ok": 1},
    }
    expected = BadRequest(
        1,
        "result: reply: Input should be 'later' or 'errors'; "
        "agent: Input should be a valid integer; call: Input should be a valid string; "
        "text: Input should be a valid string; outcome.b'x'.[key]: Input should be a valid "
        "string; outcome.3.5.[key]: Input should be a valid string; outcome.None.[key]: "
        "Input should be a valid string; outcome.1.[key]: Input should be a valid string; "
        "outcome.18446744073709551615.[key]: Input should be a valid string",
    )
    assert parse(message) == reference_parse(message) == expected
    for op in ("guard", "preflight", "commit", "human", "forget"):
        message = {"id": 2, "op": op, "agent": 1, "call": "c", "name": "n", "outcome": [], "reply": "later"}
        assert parse(message) == reference_parse(message)
    missing = BadRequest(3, "commit: agent: Field required; call: Field required")
    assert parse({"id": 3, "op": "commit"}) == reference_parse({"id": 3, "op": "commit"}) == missing
    known = "configure, guard, preflight, commit, result, human, forget, stats, shutdown"
    assert parse({"id": 3, "op": "outcome"}) == BadRequest(3, f"unknown op 'outcome' (known: {known})")
