"""The frame codec between the shim and the worker (pure: no I/O).

A frame is a 4-byte big-endian unsigned length ``N`` followed by ``N`` bytes holding one
msgpack map. Strings are UTF-8: the shim replaces lone UTF-16 surrogates with U+FFFD before
encoding, and the worker decodes invalid UTF-8 with replacement too, so text never breaks a
frame. The shim writes ``id`` as the first key of every map, which lets the worker answer a
frame it cannot read with that frame's id and find the next frame after a broken one:

* a frame longer than ``MAX_FRAME_BYTES`` is skipped without being buffered and answered
  with an error carrying its id (read from its first ``ID_PEEK_BYTES``), so one hostile
  argument cannot exhaust memory or desynchronise the stream;
* a frame whose body is not msgpack (a length prefix shorter or longer than the body) is
  answered with an error carrying its id, and when its declared end is not the start of a
  frame, the stream is searched for the next one (a length, then a map whose first key is
  ``id``);
* decoded, a msgpack value can cost far more than its bytes (an empty array is one byte on
  the wire and ~180 bytes once decoded and fingerprinted), so a frame is counted before it
  is decoded and refused, unbuilt and with its id, when it holds more than
  ``MAX_FRAME_VALUES`` values (containers, keys and scalars each count one): a frame costs
  the worker its own bytes a few times over plus at most that many values, whatever its
  shape.

See ``breaker.protocol``'s docstring for the whole protocol; ``breaker.ops`` reads a decoded map
into a request.
"""

from __future__ import annotations

import struct

import msgpack  # type: ignore[import-untyped]  # no stubs published

from breaker.ops import BadRequest, Reply, Request, read_request

#: Big enough for any real tool call (a 10 MB write), small enough to bound the worker's memory.
MAX_FRAME_BYTES = 64 * 1024 * 1024

#: No real request holds this many values (a tool call's arguments hold tens to hundreds), and
#: this many decoded and fingerprinted cost the worker ~10 MB and ~0.1 s at worst.
MAX_FRAME_VALUES = 50_000

#: How much of a refused frame's head its id is read from: a map header, ``id`` and a 64-bit
#: integer fit.
ID_PEEK_BYTES = 32

_HEADER = struct.Struct(">I")
HEADER_BYTES = _HEADER.size
_ID_KEY = b"\xa2id"
#: The map heads a frame can start with (fixmap, map16, map32) by the bytes they take.
_MAP_HEADS = {1: range(0x80, 0x90), 3: range(0xDE, 0xDF), 5: range(0xDF, 0xE0)}


def parse_request(body: bytes | memoryview, max_values: int = MAX_FRAME_VALUES) -> Request | BadRequest:
    """One frame body → a validated request, or the reason it is not one."""
    if len(body) > max_values and holds_more_values_than(body, max_values):  # a value is >= 1 byte
        return BadRequest(peek_id(body), f"frame of {len(body)} bytes holds more than {max_values} values")
    try:
        # unpackb's own limits follow the frame's length: no container can claim more entries
        # than the frame has bytes, so none is allocated beyond what the count above allowed.
        message = msgpack.unpackb(body, raw=False, unicode_errors="replace", strict_map_key=False)
    except Exception as error:  # msgpack raises several unrelated types for bad input
        error_text = f"frame is not valid msgpack: {type(error).__name__}: {str(error)[:200]}"
        return BadRequest(peek_id(body), error_text, unreadable=True)
    return read_request(message)


def peek_id(body: bytes | memoryview) -> int | None:
    """The id of a frame from its first bytes (the shim writes it first), or None."""
    return _peek_id(body)[1]


def _peek_id(body: bytes | memoryview) -> tuple[bool, int | None]:
    """(whether the head was enough to tell, the id): not yet when it ends before the id does."""
    unpacker = msgpack.Unpacker(raw=False, unicode_errors="replace", max_buffer_size=ID_PEEK_BYTES)
    unpacker.feed(bytes(body[:ID_PEEK_BYTES]))
    try:
        if unpacker.read_map_header() < 1 or unpacker.unpack() != "id":
            return True, None
        request_id = unpacker.unpack()
    except msgpack.OutOfData:
        return len(body) >= ID_PEEK_BYTES, None
    except Exception:  # not a map, not msgpack: no id to be had
        return True, None
    return True, request_id if isinstance(request_id, int) and not isinstance(request_id, bool) else None


#: msgpack's first byte of a value → how to step over it: (_FIXED, total size), (_SIZED, width of
#: the length, bytes after the length before the data), (_SHORT_CONTAINER, entries),
#: (_CONTAINER, width of the count, values per entry), or (_INVALID, 0).
_FIXED, _SIZED, _SHORT_CONTAINER, _CONTAINER, _INVALID = range(5)


def _value_steps() -> tuple[tuple[int, int, int], ...]:
    steps: list[tuple[int, int, int]] = []
    sized = {
        0xC4: (1, 0),
        0xC5: (2, 0),
        0xC6: (4, 0),
        0xC7: (1, 1),
        0xC8: (2, 1),
        0xC9: (4, 1),
        0xD9: (1, 0),
        0xDA: (2, 0),
        0xDB: (4, 0),
    }  # bin, ext (one type byte), str
    fixed = {
        0xC0: 1,
        0xC2: 1,
        0xC3: 1,
        0xCA: 5,
        0xCB: 9,
        0xCC: 2,
        0xCD: 3,
        0xCE: 5,
        0xCF: 9,
        0xD0: 2,
        0xD1: 3,
        0xD2: 5,
        0xD3: 9,
        0xD4: 3,
        0xD5: 4,
        0xD6: 6,
        0xD7: 10,
        0xD8: 18,
    }
    containers = {0xDC: (2, 1), 0xDD: (4, 1), 0xDE: (2, 2), 0xDF: (4, 2)}  # array16/32, map16/32
    for byte in range(256):
        if byte <= 0x7F or byte >= 0xE0:  # positive and negative fixint
            steps.append((_FIXED, 1, 0))
        elif byte <= 0x8F:  # fixmap: a key and a value per entry
            steps.append((_SHORT_CONTAINER, 2 * (byte & 0x0F), 0))
        elif byte <= 0x9F:  # fixarray
            steps.append((_SHORT_CONTAINER, byte & 0x0F, 0))
        elif byte <= 0xBF:  # fixstr
            steps.append((_FIXED, 1 + (byte & 0x1F), 0))
        elif byte in fixed:
            steps.append((_FIXED, fixed[byte], 0))
        elif byte in sized:
            steps.append((_SIZED, *sized[byte]))
        elif byte in containers:
            steps.append((_CONTAINER, *containers[byte]))
        else:  # 0xC1, never used
            steps.append((_INVALID, 0, 0))
    return tuple(steps)


_VALUE_STEPS = _value_steps()


def holds_more_values_than(body: bytes | memoryview, limit: int) -> bool:
    """Whether the msgpack value in ``body`` holds more than ``limit`` values, nothing decoded.

    Each container adds its entries to the count as soon as its header is read, so a walk never
    goes past ``limit`` values whatever the frame claims. A malformed frame ends the walk with
    the count so far: the decoder then fails at the same byte, having built no more.
    """
    size = len(body)
    position = 0
    unread = 1
    seen = 1
    while unread and position < size:
        kind, first, second = _VALUE_STEPS[body[position]]
        unread -= 1
        if kind == _FIXED:
            position += first
            continue
        if kind == _SIZED:
            length = int.from_bytes(body[position + 1 : position + 1 + first], "big")
            position += 1 + first + second + length
            continue
        if kind == _SHORT_CONTAINER:
            entries = first
            position += 1
        elif kind == _CONTAINER:
            entries = int.from_bytes(body[position + 1 : position + 1 + first], "big") * second
            position += 1 + first
        else:
            return False
        unread += entries
        seen += entries
        if seen > limit:
            return True
    return False


_packer = msgpack.Packer(use_bin_type=True)


def encode_frame_parts(message: Reply) -> tuple[bytes, bytes]:
    """The header and the body of one frame, kept apart so a writer can send them without joining."""
    body: bytes = _packer.pack(message)
    return _HEADER.pack(len(body)), body


class FrameDecoder:
    """Incremental: feed whatever a read returned, get every request it completed."""

    def __init__(
        self, max_frame_bytes: int = MAX_FRAME_BYTES, max_frame_values: int = MAX_FRAME_VALUES
    ) -> None:
        self._max_frame_bytes = max_frame_bytes
        self._max_frame_values = max_frame_values
        self._buffer = bytearray()
        self._skipping = 0  # bytes of an oversized frame still to discard
        self._searching = False  # out of step: looking for the start of the next frame

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
        # One view for every frame of this read: a view per frame costs as much as checking one.
        with memoryview(buffer) as view:
            start = self._decode(view, decoded)
        del buffer[:start]
        return decoded

    def _decode(self, view: memoryview, decoded: list[Request | BadRequest]) -> int:
        """Append every frame ``view`` completes to ``decoded``; the bytes consumed."""
        size = len(view)
        start = 0
        while True:
            if self._searching:
                found = self._next_frame(start)
                if found is None:  # keep what could be the beginning of one
                    return max(start, size - HEADER_BYTES - 5 - len(_ID_KEY))
                start = found
                self._searching = False
            if size - start < HEADER_BYTES:
                return start
            (length,) = _HEADER.unpack_from(view, start)
            body = start + HEADER_BYTES
            end = body + length
            if length > self._max_frame_bytes:
                told, request_id = _peek_id(view[body : min(end, size)])
                if not told:
                    return start  # its id is in the bytes still to come
                self._skipping = max(0, end - size)
                start = min(size, end)
                problem = f"frame of {length} bytes exceeds the limit of {self._max_frame_bytes}"
                decoded.append(BadRequest(request_id, problem))
                continue
            if end > size:
                return start
            request = parse_request(view[body:end], self._max_frame_values)
            decoded.append(request)
            if isinstance(request, BadRequest) and request.unreadable and self._starts_frame(end) is False:
                self._searching = True  # the length was wrong: the next frame starts elsewhere
                start += 1
            else:
                start = end

    def _starts_frame(self, position: int) -> bool | None:
        """Whether a frame as the shim writes it starts at ``position``: a length within the limit,
        then a map whose first key is ``id`` (None: too few bytes to tell)."""
        buffer = self._buffer
        if len(buffer) - position < HEADER_BYTES + 1:
            return None
        (length,) = _HEADER.unpack_from(buffer, position)
        if length > self._max_frame_bytes:
            return False
        head = buffer[position + HEADER_BYTES]
        for size, heads in _MAP_HEADS.items():
            if head in heads:
                key = position + HEADER_BYTES + size
                if len(buffer) < key + len(_ID_KEY):
                    return None
                return buffer[key : key + len(_ID_KEY)] == _ID_KEY
        return False

    def _next_frame(self, start: int) -> int | None:
        """The first position from ``start`` where a frame starts, found by its ``id`` key."""
        buffer = self._buffer
        search = start
        while (key := buffer.find(_ID_KEY, search)) != -1:
            for size in _MAP_HEADS:
                position = key - size - HEADER_BYTES
                if position >= start and self._starts_frame(position):
                    return position
            search = key + 1
        return None
