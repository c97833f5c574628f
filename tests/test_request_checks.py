"""The request checks: a frame is accepted exactly when each field of its op fits, and a refusal
names every field that does not, in the words the pydantic models this replaced used (pinned)."""

from __future__ import annotations

from typing import Any

import msgpack  # type: ignore[import-untyped]
from hypothesis import given, settings
from hypothesis import strategies as st

from breaker.protocol import BadRequest, parse_request

OPS = ["configure", "guard", "preflight", "commit", "result", "human", "step", "forget", "stats", "shutdown"]
#: Each op's fields as the frame spells them, and the kind each takes: a required int or str, or
#: anything (``None`` when absent), or a map with string keys (``"map"``; nil or absent: None).
FIELDS: dict[str, dict[str, object]] = {
    "configure": {"config": Any, "known": Any, "rows": Any},
    "guard": {"agent": int, "call": str, "name": str, "args": Any, "standIn": Any},
    "preflight": {"agent": int, "call": str, "name": str, "args": Any, "standIn": Any},
    "commit": {"agent": int, "call": str},
    "result": {"agent": int, "call": str, "text": str, "outcome": "map"},
    "human": {"agent": int},
    "step": {"agent": int},
    "forget": {"agent": int},
    "stats": {},
    "shutdown": {},
}


def fits(kind: object, present: bool, value: object) -> bool:
    if kind is Any:
        return True
    if kind == "map":
        return value is None or (type(value) is dict and all(type(key) is str for key in value))
    return present and type(value) is kind


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


@settings(deadline=None, max_examples=1000)
@given(_MESSAGES)
def test_a_request_holds_its_fields_or_is_refused_naming_each_that_does_not_fit(
    message: dict[str, Any],
) -> None:
    """Accepted exactly when every field fits its kind (and ``reply`` is absent, nil, "later" or
    "errors"); then each field holds the frame's value; else the refusal names each misfit, in
    the order of the op's fields, and carries the id and where the reply goes."""
    op, fields = message["op"], FIELDS[message["op"]]
    reply = message.get("reply")
    misfits = [name for name, kind in fields.items() if not fits(kind, name in message, message.get(name))]
    if reply not in (None, "later", "errors"):
        misfits.insert(0, "reply")
    parsed = parse(message)
    if not misfits:
        assert not isinstance(parsed, BadRequest)
        name, values = parsed
        assert name.lower() == op
        expected = {"stand_in" if key == "standIn" else key: message.get(key) for key in fields}
        wanted = dict(sorted({**expected, "id": message["id"], "op": op, "reply": reply}.items()))
        # compared as encoded: a NaN the frame carried is not == to itself, yet it is the same value
        assert msgpack.packb(values, use_bin_type=True) == msgpack.packb(wanted, use_bin_type=True)
        return
    assert isinstance(parsed, BadRequest)
    assert (parsed.id, parsed.reply) == (message["id"], reply if reply in ("later", "errors") else None)
    assert parsed.error.startswith(f"{op}: ")
    named = [
        problem.partition(":")[0].partition(".")[0] for problem in parsed.error[len(op) + 2 :].split("; ")
    ]
    assert list(dict.fromkeys(named)) == misfits


def test_the_refusal_texts_are_pinned() -> None:
    """The texts the pydantic models this replaced gave (the shim's logs and tests read them)."""
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
    assert parse(message) == expected
    for op in ("guard", "preflight", "commit", "human", "forget"):
        message = {"id": 2, "op": op, "agent": 1, "call": "c", "name": "n", "outcome": [], "reply": "later"}
        assert not isinstance(parse(message), BadRequest)
    missing = BadRequest(3, "commit: agent: Field required; call: Field required")
    assert parse({"id": 3, "op": "commit"}) == missing
    wrong_map = {"id": 4, "op": "result", "agent": 1, "call": "c", "text": "t", "outcome": [1]}
    assert parse(wrong_map) == BadRequest(4, "result: outcome: Input should be a valid dictionary")
    known = "configure, guard, preflight, commit, result, human, step, forget, stats, shutdown"
    assert parse({"id": 3, "op": "outcome"}) == BadRequest(3, f"unknown op 'outcome' (known: {known})")
