"""The worker's streams (breaker/streams.py): the FIFOs it makes itself in the folder the shim
names, taking over from its stdio pipes with every request in the order sent; its pipes kept where
the FIFOs cannot be made; and its command line checked without argparse."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import msgpack  # type: ignore[import-untyped]  # no stubs published
import pytest

from breaker.streams import FIFO_NAMES, FIFOS_MADE, PIPES_KEPT, PIPES_MARK, stream_options

ROOT = Path(__file__).resolve().parent.parent


def frame(request: dict[str, object]) -> bytes:
    body: bytes = msgpack.packb(request)
    return len(body).to_bytes(4, "big") + body


def replies(data: bytes) -> list[dict[str, object]]:
    """The whole reply frames at the start of ``data``."""
    found = []
    while len(data) >= 4 and len(data) >= 4 + (size := int.from_bytes(data[:4], "big")):
        found.append(msgpack.unpackb(data[4 : 4 + size]))
        data = data[4 + size :]
    return found


def read_replies(fd: int, count: int) -> list[dict[str, object]]:
    data = b""
    while len(replies(data)) < count:
        chunk = os.read(fd, 1 << 16)
        assert chunk, "the stream ended before every reply came"
        data += chunk
    return replies(data)


def start(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "breaker.worker", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


CONFIGURE = {"id": 1, "op": "configure", "config": None}
STATS = {"id": 2, "op": "stats"}
SHUTDOWN = {"id": 3, "op": "shutdown"}


def test_the_worker_makes_its_fifos_and_every_request_comes_in_the_order_sent(tmp_path: Path) -> None:
    worker = start("--fifos", str(tmp_path))
    assert worker.stdin is not None and worker.stdout is not None
    worker.stdin.write(frame(CONFIGURE))  # sent before the FIFOs take over, as the shim's boot does
    worker.stdin.flush()
    assert worker.stdout.read(1) == FIFOS_MADE
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(FIFO_NAMES)
    stdin, stdout, later = (str(tmp_path / name) for name in FIFO_NAMES)
    # the helper thread's order: readers that do not wait, then the ends the worker waits for
    keeper = os.open(stdin, os.O_RDONLY | os.O_NONBLOCK)
    drainer = os.open(stdout, os.O_RDONLY | os.O_NONBLOCK)
    requests = os.open(stdin, os.O_WRONLY)
    later_reader = os.open(later, os.O_RDONLY | os.O_NONBLOCK)
    os.write(requests, frame(STATS))  # the first through the FIFO: answered after the pipe's
    worker.stdin.close()
    assert worker.stdout.read() == b"", "the stdout pipe ends once the worker has its FIFOs"
    os.close(keeper)
    os.set_blocking(drainer, True)
    assert [reply["id"] for reply in read_replies(drainer, 2)] == [1, 2]
    os.write(requests, frame(SHUTDOWN))
    os.close(requests)
    assert worker.wait(timeout=30) == 0
    os.close(drainer)
    os.close(later_reader)


def test_where_the_fifos_cannot_be_made_the_worker_keeps_its_pipes_and_says_so(
    tmp_path: Path,
) -> None:
    (tmp_path / FIFO_NAMES[1]).write_text("in the way")  # the second cannot be made
    worker = start("--fifos", str(tmp_path))
    out, err = worker.communicate(frame(CONFIGURE) + frame(STATS), timeout=30)
    assert worker.returncode == 0, err
    assert out[:1] == PIPES_KEPT, "it says so first"
    assert [reply["id"] for reply in replies(out[1:])] == [1, 2]
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted([FIFO_NAMES[1], PIPES_MARK]), (
        "no FIFO left behind"
    )
    assert (tmp_path / PIPES_MARK).stat().st_size == 0


def test_the_shim_names_the_fifos_the_pipes_mark_and_the_first_bytes_as_the_worker_does() -> None:
    shim = (ROOT / "node-shim" / "worker" / "fifo-folder.js").read_text()
    names = ", ".join(f"'{name}'" for name in FIFO_NAMES)
    assert f"export const FIFO_NAMES = [{names}];" in shim
    assert f"export const PIPES_MARK = '{PIPES_MARK}';" in shim
    for name, byte in (("FIFOS_MADE", FIFOS_MADE), ("PIPES_KEPT", PIPES_KEPT)):
        assert f"export const {name} = {byte[0]:#x}; // '{byte.decode()}'" in shim, name


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["--verbose"], "unexpected argument '--verbose'"),
        (["--fifos"], "--fifos needs a value"),
        (["--fifos", "a", "--fifos", "b"], "unexpected argument '--fifos'"),
        (["--later-replies", "three"], "--later-replies takes a file descriptor number, got 'three'"),
    ],
)
def test_a_command_line_the_worker_does_not_know_is_refused_by_name(argv: list[str], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        stream_options(argv)
    run = subprocess.run(
        [sys.executable, "-m", "breaker.worker", *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
        timeout=30,
    )
    assert run.returncode == 2
    assert run.stderr.splitlines() == [
        "usage: python -m breaker.worker [--fifos FOLDER] [--later-replies FD]",
        f"python -m breaker.worker: error: {error}",
    ]


def test_the_worker_options_are_read_as_given() -> None:
    assert stream_options([]) == (None, None)
    assert stream_options(["--later-replies", "3", "--fifos", "/run/x"]) == ("/run/x", 3)
