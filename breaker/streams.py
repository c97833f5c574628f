"""The worker's streams: the three FIFOs it makes in the folder the shim names, or its stdio pipes.

The shim (node-shim/worker/owner.js, or its helper thread: bridge-thread.js) starts the worker with
plain stdio pipes and ``--fifos FOLDER``, a fresh private folder; the worker makes the FIFOs there
itself (``os.mkfifo``: no ``mkfifo`` process on dsh's boot path) before its other imports
(``announce``), says so with the byte ``F`` on its stdout pipe, and later opens its ends, each
``open`` returning once the shim has opened the other (it does so on that byte). Then its stdout
pipe is closed (the shim then knows its stdin FIFO has a reader), and what the shim wrote to its
stdin pipe before the switch (if anything) is read to the pipe's end, which the shim closes once
the FIFOs take over: every request comes in the order it was sent. Where the FIFOs cannot be made
an empty file ``pipes`` says so in the folder and the byte ``P`` on its stdout pipe, and the pipes
stay.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import NamedTuple

#: The byte the worker writes on its stdout pipe once its FIFOs are made (bridge-thread.js reads it).
FIFOS_MADE = b"F"
#: The byte it writes there first when it was given a folder but keeps its pipes (owner.js reads it).
PIPES_KEPT = b"P"
#: The pipe buffer asked for, where Linux allows it, on stdin (a 64 KB call then fits in one write
#: of the shim's main thread) and on the second reply stream (its reader is an event loop that may
#: be busy for a while, and a full pipe would stall the worker).
PIPE_BYTES = 1 << 20
#: The FIFOs' names in the folder, in the order they are opened: requests in, replies out, and the
#: replies the shim's event loop reads (``reply: "later"``; see breaker/protocol.py).
FIFO_NAMES = ("stdin", "stdout", "later")
#: An empty file the worker leaves in the folder when it cannot make its FIFOs there and keeps its
#: pipes: a shim thread that waits for the FIFOs without its event loop reads it (owner.js).
PIPES_MARK = "pipes"


#: The worker's command line (no argparse: it and what it imports cost the boot a few ms).
USAGE = "usage: python -m breaker.worker [--fifos FOLDER] [--later-replies FD]"


def stream_options(argv: list[str]) -> tuple[str | None, int | None]:
    """``--fifos FOLDER`` and ``--later-replies FD`` from the worker's command line; ValueError
    naming what is wrong, for anything else."""
    given: dict[str, str] = {}
    rest = list(argv)
    while rest:
        option = rest.pop(0)
        if option not in ("--fifos", "--later-replies") or option in given:
            raise ValueError(f"unexpected argument {option!r}")
        if not rest:
            raise ValueError(f"{option} needs a value")
        given[option] = rest.pop(0)
    later = given.get("--later-replies")
    if later is not None and not later.isdigit():
        raise ValueError(f"--later-replies takes a file descriptor number, got {later!r}")
    return given.get("--fifos"), None if later is None else int(later)


class Streams(NamedTuple):
    """Where requests come from (``input_fd``), what came before them on the stdin pipe
    (``first``), and where replies go (``output_fd``, and ``later_fd`` for the second stream)."""

    input_fd: int
    output_fd: int
    later_fd: int | None
    first: bytes = b""


def open_streams(folder: str | None, later_fd: int | None) -> Streams:
    """The worker's streams, the inbound and the second reply stream widened: the FIFOs in
    ``folder`` where they can be made, else the stdio pipes (``later_fd`` the second reply
    stream's fd when the shim gave one)."""
    streams = _opened(folder, later_fd)
    for fd in (streams.input_fd,) if streams.later_fd is None else (streams.input_fd, streams.later_fd):
        _widen_pipe(fd)
    return streams


#: The folders ``announce`` made the FIFOs in (True) or could not (False).
_announced: dict[str, bool] = {}


def announce(argv: list[str]) -> None:
    """Make the FIFOs in the folder ``--fifos`` names and say so on the stdout pipe (FIFOS_MADE),
    or that the pipes stay (PIPES_KEPT), once. The worker does it first, before its imports: the
    shim opens its ends meanwhile, and the opens in ``open_streams`` then return at once. A command
    line it cannot read is left to ``stream_options`` to refuse."""
    try:
        folder, _ = stream_options(argv)
    except ValueError:
        return
    if folder is None or folder in _announced:
        return
    made = _made(folder)
    if not made:
        _mark_pipes(folder)
    _announced[folder] = made
    os.write(1, FIFOS_MADE if made else PIPES_KEPT)


def _opened(folder: str | None, later_fd: int | None) -> Streams:
    """Frames get a private copy of stdout either way; fd 1 itself becomes stderr, so nothing else
    (a print, a C library) can write into the frame stream."""
    if folder is not None:
        announce(["--fifos", folder])
    if folder is not None and _announced[folder]:
        paths = [os.path.join(folder, name) for name in FIFO_NAMES]
        input_fd = os.open(paths[0], os.O_RDONLY)  # each returns once the shim has opened its end
        output_fd = os.open(paths[1], os.O_WRONLY)
        later = os.open(paths[2], os.O_WRONLY)
        os.dup2(2, 1)  # the stdout pipe ends: the shim knows the stdin FIFO is read now
        first = _to_end(0)  # what came by the pipe before the FIFOs took over
        os.dup2(input_fd, 0)
        os.close(input_fd)
        return Streams(0, output_fd, later, first)
    output_fd = os.dup(1)
    os.dup2(2, 1)
    return Streams(0, output_fd, later_fd)


def _made(folder: str) -> bool:
    """Whether the three FIFOs could be made in ``folder`` (none left behind where they could not)."""
    made: list[str] = []
    try:
        for name in FIFO_NAMES:
            path = os.path.join(folder, name)
            os.mkfifo(path, 0o600)
            made.append(path)
    except OSError:
        for path in made:
            with contextlib.suppress(OSError):
                os.unlink(path)
        return False
    return True


def _mark_pipes(folder: str) -> None:
    with contextlib.suppress(OSError):  # the folder takes nothing: the shim learns it from the first byte
        os.close(os.open(os.path.join(folder, PIPES_MARK), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))


def _to_end(fd: int) -> bytes:
    chunks: list[bytes] = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def _widen_pipe(fd: int) -> None:
    if sys.platform != "linux":
        return
    import fcntl

    with contextlib.suppress(OSError):  # not a pipe, or more than this user may ask for
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
