"""The frame codec and the typed message set (pure: bytes in, messages out)."""

from __future__ import annotations

import struct
from typing import cast

import msgpack  # type: ignore[import-untyped]
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from breaker.protocol import (
    BadRequest,
    Configure,
    FrameDecoder,
    Guard,
    Reply,
    ReplyMode,
    Request,
    Result,
    Shutdown,
    encode_frame_parts,
    error_reply,
    holds_more_values_than,
    ok_reply,
    parse_request,
    peek_id,
    superseded,
)


def encode_frame(message: Reply) -> bytes:
    """One frame in one piece (the worker writes its two parts without joining them)."""
    return b"".join(encode_frame_parts(message))


def frame(message: object) -> bytes:
    body: bytes = msgpack.packb(message, use_bin_type=True)
    return struct.pack(">I", len(body)) + body


GUARD = {"id": 7, "op": "guard", "agent": 1, "call": "c1", "name": "bash", "args": {"command": "ls"}}


def test_a_guard_request_is_typed() -> None:
    request = parse_request(msgpack.packb(GUARD))
    assert request == Guard(id=7, op="guard", agent=1, call="c1", name="bash", args={"command": "ls"})


def test_every_op_parses() -> None:
    requests = [
        {"id": 1, "op": "configure", "config": {"window": 6}},
        {"id": 2, "op": "configure"},
        GUARD,
        {**GUARD, "id": 3, "op": "preflight"},
        {"id": 4, "op": "result", "agent": 1, "call": "c1", "text": "out"},
        {"id": 5, "op": "human", "agent": 1},
        {"id": 6, "op": "forget", "agent": 1},
        {"id": 8, "op": "stats"},
        {"id": 9, "op": "shutdown"},
    ]
    parsed = [parse_request(msgpack.packb(message)) for message in requests]
    assert [type(request).__name__ for request in parsed] == [
        "Configure",
        "Configure",
        "Guard",
        "Preflight",
        "Result",
        "Human",
        "Forget",
        "Stats",
        "Shutdown",
    ]
    assert parsed[1] == Configure(id=2, op="configure", config=None)


def test_configure_passes_any_config_shape_through_for_load_config_to_judge() -> None:
    request = parse_request(msgpack.packb({"id": 1, "op": "configure", "config": [1, 2]}))
    assert request == Configure(id=1, op="configure", config=[1, 2])


def test_unknown_fields_are_ignored() -> None:
    assert isinstance(parse_request(msgpack.packb({**GUARD, "future": True})), Guard)


def test_not_msgpack_not_a_map_and_no_id_are_answered_with_a_null_id() -> None:
    not_msgpack = parse_request(b"\xc1")
    assert isinstance(not_msgpack, BadRequest)
    assert not_msgpack.id is None
    assert not_msgpack.error.startswith("frame is not valid msgpack")
    not_a_map = parse_request(msgpack.packb([1, 2]))
    assert not_a_map == BadRequest(None, "frame must hold a map, got list")
    for bad_id in (None, "7", True, 1.5):
        problem = parse_request(msgpack.packb({**GUARD, "id": bad_id}))
        assert isinstance(problem, BadRequest)
        assert problem.id is None
        assert "integer id" in problem.error


def test_trailing_bytes_after_the_map_are_malformed_and_answered_with_the_frames_id() -> None:
    problem = parse_request(msgpack.packb(GUARD) + b"\x00")
    assert isinstance(problem, BadRequest)
    assert problem.id == 7
    assert "ExtraData" in problem.error


def test_an_undecodable_frame_is_answered_with_the_id_at_its_head() -> None:
    cut_short = msgpack.packb(GUARD)[:-3]
    refused = parse_request(cut_short)
    assert isinstance(refused, BadRequest)
    assert refused == BadRequest(7, refused.error, unreadable=True)
    broken = msgpack.packb({"id": 8, "op": "guard", "args": "XX"}).replace(b"\xa2XX", b"\xc1XX")
    problem = parse_request(broken)
    assert isinstance(problem, BadRequest)
    assert problem.id == 8
    assert problem.error.startswith("frame is not valid msgpack")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (msgpack.packb({"id": 5, "op": "guard"}), 5),
        (msgpack.packb({"id": 2**63, "op": "guard"}), 2**63),
        (msgpack.packb({"op": "guard", "id": 6}), None),  # the shim writes it first
        (msgpack.packb({"id": "5"}), None),
        (msgpack.packb({"id": True}), None),
        (msgpack.packb([5]), None),
        (b"\xc1", None),
        (b"", None),
    ],
    ids=["first", "wide", "not-first", "text", "bool", "not-a-map", "invalid", "empty"],
)
def test_peek_id_reads_an_integer_id_from_the_head_only(body: bytes, expected: int | None) -> None:
    assert peek_id(body) == expected


def _values(value: object) -> int:
    """The reference count: every container, key and scalar is one value."""
    if isinstance(value, dict):
        return 1 + sum(_values(key) + _values(item) for key, item in value.items())
    if isinstance(value, list):
        return 1 + sum(_values(item) for item in value)
    return 1


_ANY_MSGPACK = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats()
    | st.text(max_size=300)
    | st.binary(max_size=300)
    | st.builds(msgpack.ExtType, st.integers(0, 127), st.binary(max_size=20)),
    lambda children: (
        st.lists(children, max_size=20)
        | st.dictionaries(st.text(max_size=4) | st.integers(-(2**63), 2**64 - 1), children, max_size=20)
    ),
    max_leaves=60,
)


@given(_ANY_MSGPACK, st.integers(1, 80))
def test_the_value_count_agrees_with_the_decoded_value(value: object, limit: int) -> None:
    body = msgpack.packb(value, use_bin_type=True)
    assert holds_more_values_than(body, limit) == (_values(value) > limit)


@pytest.mark.parametrize(
    "arguments",
    [[[]] * 200, [{}] * 200, [None] * 200, ["ab"] * 200, [[[[]]]] * 50],
    ids=["empty-arrays", "empty-maps", "nils", "short-strings", "nested-arrays"],
)
def test_a_frame_of_too_many_values_is_refused_unbuilt_with_its_id(arguments: list[object]) -> None:
    body = msgpack.packb({**GUARD, "args": arguments})
    problem = parse_request(body, max_values=150)
    assert problem == BadRequest(7, f"frame of {len(body)} bytes holds more than 150 values")
    assert isinstance(parse_request(body, max_values=_values(msgpack.unpackb(body))), Guard)


def test_a_container_claiming_more_entries_than_allowed_is_refused_at_its_header() -> None:
    head = b"".join(msgpack.packb(part) for part in ("id", 3, "op", "guard", "args"))
    body = b"\x83" + head + b"\xdd" + (10**9).to_bytes(4, "big") + b"\x00" * 100
    problem = parse_request(body, max_values=50)
    assert isinstance(problem, BadRequest)
    assert problem.id == 3
    assert "holds more than 50 values" in problem.error


def test_error_texts_about_huge_fields_stay_short() -> None:
    problem = parse_request(msgpack.packb({"id": 3, "op": "x" * 100_000}))
    assert isinstance(problem, BadRequest)
    assert len(problem.error) < 300
    no_id = parse_request(msgpack.packb({"id": list(range(1_000)), "op": "stats"}))
    assert no_id == BadRequest(None, "request needs an integer id, got a list")


def test_unknown_op_and_wrong_types_keep_the_id() -> None:
    unknown = parse_request(msgpack.packb({"id": 3, "op": "explode"}))
    assert isinstance(unknown, BadRequest)
    assert unknown.id == 3
    assert "unknown op 'explode'" in unknown.error
    for field, value in (("agent", "a"), ("agent", True), ("call", 1), ("name", None), ("name", b"bash")):
        problem = parse_request(msgpack.packb({**GUARD, field: value}, use_bin_type=True))
        assert isinstance(problem, BadRequest), (field, value)
        assert problem.id == 7
        assert problem.error.startswith(f"guard: {field}:")
    missing = parse_request(msgpack.packb({"id": 4, "op": "result", "agent": 1, "call": "c"}))
    assert missing == BadRequest(4, "result: text: Field required")


@pytest.mark.parametrize(
    ("op", "kind"),
    [([1, 2], "list"), ({"op": "guard"}, "dict"), (None, "nil"), (7, "int"), (b"guard", "bytes")],
)
def test_an_op_that_is_not_a_string_is_refused_with_the_id(op: object, kind: str) -> None:
    problem = parse_request(msgpack.packb({"id": 12, "op": op}, use_bin_type=True))
    assert problem == BadRequest(12, f"op must be a string, got {kind}")


def test_an_unknown_op_is_quoted_short() -> None:
    problem = parse_request(msgpack.packb({"id": 3, "op": "x" * 100_000}))
    assert isinstance(problem, BadRequest)
    assert len(problem.error) < 200


_MSGPACK_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats()
    | st.text(max_size=8)
    | st.binary(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=8,
)


@settings(deadline=None)  # the first example pays for building the validators
@given(st.dictionaries(st.sampled_from(["id", "op", "agent", "call", "name", "args"]), _MSGPACK_VALUES))
def test_any_map_is_parsed_or_refused_never_raised(message: dict[str, object]) -> None:
    parsed = parse_request(msgpack.packb(message, use_bin_type=True))
    assert isinstance(parsed, (BadRequest, Request))


def test_invalid_utf8_is_replaced_rather_than_rejected() -> None:
    body = msgpack.packb({**GUARD, "name": "XX"}).replace(b"XX", b"\xff\xfe")
    request = parse_request(body)
    assert isinstance(request, Guard)
    assert request.name == "\ufffd\ufffd"


def test_replies_encode_as_length_prefixed_maps() -> None:
    header, body = encode_frame_parts(ok_reply(7, deny=None))
    assert struct.unpack(">I", header) == (len(body),)
    assert msgpack.unpackb(body) == {"id": 7, "ok": True, "deny": None}
    assert encode_frame(error_reply(None, "bad")) == frame({"id": None, "ok": False, "error": "bad"})


def test_decoder_handles_several_frames_in_one_read_and_one_frame_across_reads() -> None:
    stream = frame(GUARD) + frame({"id": 8, "op": "shutdown"})
    decoder = FrameDecoder()
    first = decoder.feed(stream[:3])
    second = decoder.feed(stream[3:-1])
    assert first == []
    assert [type(request) for request in second] == [Guard]
    assert decoder.pending == len(frame({"id": 8, "op": "shutdown"})) - 1
    assert decoder.feed(stream[-1:]) == [Shutdown(id=8, op="shutdown")]
    assert decoder.pending == 0


@given(st.lists(st.integers(min_value=1, max_value=40), max_size=30))
def test_any_split_of_the_stream_decodes_the_same(cuts: list[int]) -> None:
    messages = [{**GUARD, "id": index, "args": {"command": "x" * index * 7}} for index in range(1, 6)] + [
        {"id": 99, "op": "result", "agent": 2, "call": "c", "text": "é" * 50}
    ]
    stream = b"".join(frame(message) for message in messages)
    decoder = FrameDecoder()
    decoded = []
    position = 0
    for cut in cuts:
        decoded += decoder.feed(stream[position : position + cut])
        position += cut
    decoded += decoder.feed(stream[position:])
    assert [request.id for request in decoded] == [1, 2, 3, 4, 5, 99]
    assert isinstance(decoded[-1], Result)
    assert decoded[-1].text == "é" * 50


def test_an_oversized_frame_is_answered_with_its_id() -> None:
    decoder = FrameDecoder(max_frame_bytes=100)
    body = msgpack.packb({"id": 12, "op": "guard", "args": "z" * 1000})
    problems = decoder.feed(struct.pack(">I", len(body)) + body[:20])
    assert problems == [BadRequest(12, f"frame of {len(body)} bytes exceeds the limit of 100")]
    assert [request.id for request in decoder.feed(body[20:] + frame(GUARD))] == [7]


def test_a_too_short_length_prefix_is_answered_with_the_frames_id_and_the_next_frame_is_found() -> None:
    decoder = FrameDecoder()
    body = msgpack.packb({"id": 21, "op": "guard", "agent": 1, "call": "c", "name": "bash", "args": "x" * 50})
    short = struct.pack(">I", len(body) - 20) + body
    requests = decoder.feed(short + frame({**GUARD, "id": 22}) + frame({**GUARD, "id": 23}))
    assert [request.id for request in requests] == [21, 22, 23]
    assert isinstance(requests[0], BadRequest)
    assert isinstance(requests[1], Guard)
    assert decoder.pending == 0


def test_an_id_key_inside_the_broken_frame_does_not_lose_the_frames_after_it() -> None:
    decoder = FrameDecoder()
    inner = {"id": 5, "x": "y" * 40}
    body = msgpack.packb({"id": 21, "op": "guard", "agent": 1, "call": "c", "name": "bash", "args": inner})
    short = struct.pack(">I", 8) + body
    requests = decoder.feed(short + frame({**GUARD, "id": 22}))
    assert requests[0].id == 21
    assert requests[-1].id == 22
    assert isinstance(requests[-1], Guard)


def test_an_oversized_frame_is_answered_with_its_id_and_skipped_to_its_last_byte() -> None:
    decoder = FrameDecoder(max_frame_bytes=100)
    oversized = frame({"id": 21, "op": "guard", "agent": 1, "call": "c", "name": "bash", "args": "z" * 1000})
    length = len(oversized) - 4
    assert decoder.feed(oversized[:6]) == []  # its id is read from its head, once that is there
    problems = decoder.feed(oversized[6:300])
    assert problems == [BadRequest(21, f"frame of {length} bytes exceeds the limit of 100")]
    assert decoder.pending == len(oversized) - 300
    assert decoder.feed(oversized[300:700]) == []
    after = decoder.feed(oversized[700:] + frame(GUARD))
    assert [request.id for request in after] == [7]
    assert decoder.pending == 0


def test_an_oversized_frame_without_a_readable_id_is_answered_with_a_null_id() -> None:
    decoder = FrameDecoder(max_frame_bytes=100)
    oversized = struct.pack(">I", 1000) + b"z" * 1000
    problems = decoder.feed(oversized + frame(GUARD))
    assert problems[0] == BadRequest(None, "frame of 1000 bytes exceeds the limit of 100")
    assert [request.id for request in problems[1:]] == [7]


def test_a_result_is_superseded_by_a_later_awaited_result_of_its_agent_read_with_it() -> None:
    def result(agent: int, reply: str | None = None) -> Result:
        return Result(id=agent, agent=agent, call="c", text="", reply=cast(ReplyMode, reply))

    requests: list[Request | BadRequest] = [
        result(1),  # superseded: agent 1's result at 4
        result(2),  # not: agent 2 has no awaited result after it
        Guard(id=3, agent=1, call="g", name="bash"),
        result(1, "later"),  # superseded by the one at 6
        result(2, "errors"),  # an event brings no passes, so supersedes nothing
        BadRequest(None, "not a frame"),
        result(1),
    ]
    assert superseded(requests) == {0, 3}
    assert superseded([]) == set()
