"""One log file as a stream of lines, in memory that does not grow with the file.

A log is evidence, not input we control: a file can be a decompression bomb (a few hundred KB of
zstd that expands to gigabytes), hold one line of gigabytes, or stop mid-frame. The file is read
in small steps and its lines handed out one at a time, so reading costs about one line's worth of
memory whatever the file's size, and each limit below becomes a ``BadLine`` with its reason:

* a line longer than ``MAX_LINE_BYTES`` is skipped (read through, never held), the next line read;
* a compressed file that expands past ``MAX_EXPANSION`` times the compressed bytes read so far
  (once past ``EXPANSION_FLOOR``) stops there: no real log compresses that well, dsh compresses
  each flushed batch on its own;
* a compressed stream that is cut mid-frame or corrupt stops there; the lines before it stand.

dsh writes a session as a series of zstd frames, one per flushed batch; each is decoded on its own.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

#: The longest line read (a tool result of a few MB is a long line; dsh logs results whole).
MAX_LINE_BYTES = 32 * 1024 * 1024
#: How many times its compressed size a log may expand to, once past ``EXPANSION_FLOOR``.
MAX_EXPANSION = 1000
#: What any compressed log may expand to, whatever its compressed size.
EXPANSION_FLOOR = 64 * 1024 * 1024
#: Compressed bytes decoded per step: zstd expands a byte at most ~32,768 times (a block of 128
#: KiB repeating one byte takes 4), so one step makes at most 8 MiB.
_COMPRESSED_STEP = 256
#: How far back into the line before a chunk a mark is looked for (the longest mark, at least).
_MARK_REACH = 64
#: Plain bytes read per step.
_PLAIN_STEP = 1024 * 1024


@dataclass(frozen=True, slots=True)
class BadLine:
    """A line that was not read, or the point where the rest of the file could not be."""

    reason: str
    #: The file stops here: nothing after it was read.
    final: bool = False


class MissingZstandard(RuntimeError):
    """Reading a ``.zstd`` log needs ``zstandard``: a dependency, missing from an interpreter set by hand."""


def log_lines(
    stream: BinaryIO, *, compressed: bool, marks: tuple[bytes, ...] = ()
) -> Iterator[tuple[int, bytes | BadLine]]:
    """Every line of ``stream`` with its number (from 1), without its newline; a line past a
    limit, and the point where a broken stream ends, as a ``BadLine``. With ``marks``, a chunk
    holding none of them may be passed over whole (a fast first look for a few kinds of line):
    the lines handed out are then the first, and some lines holding a mark or around one."""
    lines = _Lines(marks)
    chunks = _decoded(stream) if compressed else iter(lambda: stream.read(_PLAIN_STEP), b"")
    for chunk in chunks:
        if isinstance(chunk, BadLine):  # a line cut by the break is not read
            yield lines.number + 1, chunk
            return
        yield from lines.feed(chunk)
    yield from lines.end()


class _Lines:
    """Cuts a stream of chunks into lines, holding at most ``MAX_LINE_BYTES`` of one line."""

    def __init__(self, marks: tuple[bytes, ...] = ()) -> None:
        self.number = 0
        self.parts: list[bytes] = []
        self.size = 0
        self.overlong = False
        self.marks = marks
        #: The line being read holds a mark.
        self.marked = False

    def feed(self, chunk: bytes) -> Iterator[tuple[int, bytes | BadLine]]:
        pending = bool(self.parts) or self.overlong
        if self.marks and self.number and not self.marked and not self._has_mark(chunk):
            cut = chunk.rfind(b"\n")
            if cut >= 0:  # the lines it ends hold no mark: passed over
                self.number += chunk.count(b"\n")
                self.parts, self.size, self.overlong = [], 0, False
            self._add(chunk[cut + 1 :])
            return
        whole = chunk.split(b"\n")
        rest = whole.pop()
        if whole and pending:
            self._add(whole[0])
            yield self._finish()
            whole[0] = b""
            self.number -= 1  # the blank that stands in for it below is no line
        number = self.number
        for part in whole:
            number += 1
            if not part:
                continue  # a blank line: nothing to read
            if len(part) > MAX_LINE_BYTES:
                yield number, _overlong()
            else:
                yield number, part
        self.number = number
        if whole:
            self.marked = False
        self._add(rest)
        if self.marks and not self.marked:
            self.marked = self._has_mark(rest)

    def _has_mark(self, chunk: bytes) -> bool:
        """Whether ``chunk``, with the end of the line before it, holds a mark."""
        head = self.parts[-1][-_MARK_REACH:] + chunk if self.parts else chunk
        return any(mark in head for mark in self.marks)

    def end(self) -> Iterator[tuple[int, bytes | BadLine]]:
        if self.parts or self.overlong:
            yield self._finish()

    def _add(self, part: bytes) -> None:
        if self.overlong or not part:
            return
        self.size += len(part)
        if self.size > MAX_LINE_BYTES:
            self.overlong = True
            self.parts = []
        else:
            self.parts.append(part)

    def _finish(self) -> tuple[int, bytes | BadLine]:
        self.number += 1
        line: bytes | BadLine
        if self.overlong:
            line = _overlong()
        else:
            line = self.parts[0] if len(self.parts) == 1 else b"".join(self.parts)
        self.parts, self.size, self.overlong = [], 0, False
        return self.number, line


def _overlong() -> BadLine:
    return BadLine(f"a line longer than {MAX_LINE_BYTES // (1024 * 1024)} MiB (skipped)")


def _decoded(stream: BinaryIO) -> Iterator[bytes | BadLine]:
    """The decompressed bytes of a series of zstd frames, a bounded step at a time; a
    ``BadLine`` (final) where they cannot go on."""
    zstandard = zstandard_module()
    decoder: Any = None
    read = produced = 0
    while step := stream.read(_COMPRESSED_STEP):
        read += len(step)
        while step:
            if decoder is None:
                decoder = zstandard.ZstdDecompressor().decompressobj()
            try:
                out = decoder.decompress(step)
            except zstandard.ZstdError as error:
                yield BadLine(f"compressed data is corrupt ({error})", final=True)
                return
            produced += len(out)
            if produced > max(EXPANSION_FLOOR, MAX_EXPANSION * read):
                yield BadLine(
                    f"expands more than {MAX_EXPANSION} times its compressed size "
                    "(a decompression bomb?); the rest of the file is not read",
                    final=True,
                )
                return
            if out:
                yield out
            if decoder.eof:  # one frame per flushed batch: the next starts in what is left
                step, decoder = decoder.unused_data, None
            else:
                step = b""
    if decoder is not None:
        yield BadLine("the last compressed frame is incomplete (cut mid-write?)", final=True)


def zstandard_module() -> Any:
    """The ``zstandard`` module, or ``MissingZstandard`` naming the install command."""
    try:
        return importlib.import_module("zstandard")
    except ImportError:
        raise MissingZstandard(
            "reading .zstd session logs needs the zstandard package: "
            "it is a dependency of dsh-repeat-tool-breaker; this interpreter lacks it: pip install zstandard"
        ) from None
