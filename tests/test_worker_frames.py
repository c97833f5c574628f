"""The real worker process over its pipe, fed frames that are wrong or too large: each costs its own
reply (with the id it starts with, where it has one) and the worker keeps serving; the memory a
frame costs it is a small multiple of the frame. tests/test_worker.py holds the rest."""

from __future__ import annotations

import struct
import tracemalloc
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest

from breaker.protocol import MAX_FRAME_BYTES, MAX_FRAME_VALUES, parse_request
from breaker.worker import RequestHandler
from tests.worker_pipe import bash, configured, frame

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    """The worker is what is under test; one event loop for the test side is enough."""
    return "asyncio"


async def test_malformed_frames_get_error_replies_and_the_worker_keeps_serving() -> None:
    async with configured() as pipe:
        await pipe.write(struct.pack(">I", 3) + b"\xc1\xc1\xc1")
        assert (await pipe.reply())["id"] is None
        await pipe.write(frame([1, 2, 3]))
        assert (await pipe.reply()) == {"id": None, "ok": False, "error": "frame must hold a map, got list"}
        await pipe.write(frame({"id": 50, "op": "explode"}))
        unknown = await pipe.reply()
        assert unknown["id"] == 50
        assert "unknown op" in unknown["error"]
        await pipe.write(frame({"id": 51, "op": "guard", "agent": "one", "call": "c", "name": "bash"}))
        assert (await pipe.reply())["error"] == "guard: agent: Input should be a valid integer"
        assert (await pipe.call("guard", **bash(1, "c", "ls")))["ok"] is True


async def test_a_request_with_a_list_or_map_op_is_refused_and_its_neighbours_in_the_chunk_answered() -> None:
    async with configured() as pipe:
        chunk = b"".join(
            frame(message)
            for message in (
                {"id": 60, "op": "guard", **bash(1, "c1", "ls")},
                {"id": 61, "op": ["guard"], **bash(1, "c2", "ls")},
                {"id": 62, "op": "guard", **bash(1, "c3", "pwd")},
                {"id": 63, "op": {"guard": 1}, **bash(1, "c4", "ls")},
                {"id": 64, "op": "stats"},
            )
        )
        await pipe.write(chunk)
        replies = [await pipe.reply() for _ in range(5)]
        assert [(reply["id"], reply["ok"]) for reply in replies] == [
            (60, True),
            (61, False),
            (62, True),
            (63, False),
            (64, True),
        ]
        assert replies[1]["error"] == "op must be a string, got list"
        assert replies[3]["error"] == "op must be a string, got dict"
        assert (await pipe.call("guard", **bash(1, "c5", "ls")))["ok"] is True


async def test_an_argument_over_the_frame_limit_is_refused_with_its_id_and_the_next_call_answered() -> None:
    async with configured() as pipe:
        await pipe.write(frame({"id": 70, "op": "guard", **bash(1, "c1", "x" * MAX_FRAME_BYTES)}))
        refused = await pipe.reply()
        assert refused["id"] == 70
        assert "exceeds the limit" in refused["error"]
        assert (await pipe.call("guard", **bash(1, "c2", "ls")))["ok"] is True


@pytest.mark.parametrize("empty", [[], {}], ids=["empty-arrays", "empty-maps"])
async def test_a_megabyte_of_empty_containers_is_refused_with_its_id_and_the_next_call_answered(
    empty: object,
) -> None:
    async with configured() as pipe:
        await pipe.write(
            frame(
                {
                    "id": 71,
                    "op": "guard",
                    "agent": 1,
                    "call": "c",
                    "name": "bash",
                    "args": [empty] * (1 << 20),
                }
            )
        )
        refused = await pipe.reply()
        assert refused["id"] == 71
        assert f"holds more than {MAX_FRAME_VALUES} values" in refused["error"]
        assert (await pipe.call("guard", **bash(1, "c2", "ls")))["ok"] is True


def _peak_bytes_to_handle(arguments: object) -> tuple[int, int, dict[str, Any]]:
    """(frame size, peak bytes allocated while decoding and deciding it, the reply), in process."""
    handler = RequestHandler()
    handler.handle(parse_request(msgpack.packb({"id": 1, "op": "configure"})))
    body = msgpack.packb({"id": 2, "op": "guard", **bash(1, "c", "ls"), "args": arguments})
    tracemalloc.start()
    try:
        reply = handler.handle(parse_request(body))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return len(body), peak, reply


#: What a frame may cost the worker: its bytes a few times over (decoded text, its canonical
#: form) plus a fixed allowance per value it may hold (decoded, the costliest take ~180 bytes).
def _memory_bound(frame_bytes: int) -> int:
    return 4 * frame_bytes + 256 * MAX_FRAME_VALUES


@pytest.mark.parametrize(
    ("arguments", "answered"),
    [
        ([[]] * (1 << 20), False),
        ([{}] * (1 << 20), False),
        ([[]] * (MAX_FRAME_VALUES - 20), True),
        ([{}] * (MAX_FRAME_VALUES - 20), True),
        ([{"a": {"b": []}}] * (MAX_FRAME_VALUES // 6 - 4), True),
        ("x" * (4 << 20), True),
    ],
    ids=[
        "1MB-of-empty-arrays",
        "1MB-of-empty-maps",
        "empty-arrays-at-the-limit",
        "empty-maps-at-the-limit",
        "nested-maps-at-the-limit",
        "a-4MB-string",
    ],
)
def test_worker_memory_per_frame_is_a_small_multiple_of_the_frame(arguments: object, answered: bool) -> None:
    frame_bytes, peak, reply = _peak_bytes_to_handle(arguments)
    assert reply["id"] == 2
    assert reply["ok"] is answered
    shown = f"{peak / 2**20:.1f} MB for a {frame_bytes / 2**20:.2f} MB frame"
    assert peak <= _memory_bound(frame_bytes), shown


async def test_an_oversized_frame_is_answered_with_the_id_it_starts_with() -> None:
    async with configured() as pipe:
        start = msgpack.packb({"id": 77, "op": "guard"})[:5]
        await pipe.write(struct.pack(">I", MAX_FRAME_BYTES + 1) + start)
        refused = await pipe.reply()
        assert refused["id"] == 77
        assert "exceeds the limit" in refused["error"]


async def test_a_too_short_length_prefix_costs_its_own_call_only() -> None:
    async with configured() as pipe:
        body = msgpack.packb({"id": 40, "op": "guard", **bash(1, "c", "echo " + "x" * 60)})
        await pipe.write(struct.pack(">I", len(body) - 30) + body)
        assert (await pipe.reply())["id"] == 40
        assert (await pipe.call("guard", **bash(1, "d", "ls")))["deny"] is None
        assert (await pipe.call("stats"))["ok"] is True


async def test_an_op_of_the_wrong_type_costs_one_reply_and_keeps_the_others_of_its_read() -> None:
    async with configured() as pipe:
        odd_ops = frame({"id": 60, "op": ["guard"]}) + frame({"id": 61, "op": {"x": 1}})
        await pipe.write(odd_ops + frame({"id": 62, "op": "stats"}))
        replies = [await pipe.reply() for _ in range(3)]
        assert [(reply["id"], reply["ok"]) for reply in replies] == [(60, False), (61, False), (62, True)]
        assert (await pipe.call("stats"))["ok"] is True
