"""Hostile logs: a decompression bomb, a line of gigabytes, nesting a thousand deep, lone
surrogates. Each is a named ``path:line: reason`` on stderr (exit 1) and the good session beside
it is still reported, in every format. The hostile files are made here and stay small on disk;
``rtb`` runs as a process with its address space capped, so reading in bounded memory is what is
checked, not how much this machine has."""

from __future__ import annotations

import json
import resource
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from breaker.rtb.read.jsontext import MAX_NESTING, REPLACEMENT, Unreadable, load_json
from breaker.rtb.read.logstream import MAX_EXPANSION, MAX_LINE_BYTES, BadLine, log_lines
from tests.rtb_logs import Log

ROOT = Path(__file__).resolve().parent.parent
#: The address space rtb is given: far below what any of these files would take read whole.
ADDRESS_SPACE = 1024 * 1024 * 1024
FORMATS = ("table", "markdown", "json", "html")


def _zstd_rle_frame(byte: bytes, blocks: int) -> bytes:
    """One zstd frame of ``blocks`` RLE blocks of 128 KiB of ``byte`` (4 bytes each on disk):
    32,768 blocks are a 128 KiB file that expands to 4 GiB."""
    header = struct.pack("<I", 0xFD2FB528) + bytes([0x00, 0x38])  # no content size; window 128 KiB
    block_size = 128 * 1024
    body = bytearray()
    for index in range(blocks):
        last = 1 if index == blocks - 1 else 0
        body += (last | (1 << 1) | (block_size << 3)).to_bytes(3, "little") + byte
    return header + bytes(body)


def _beside_a_good_session(tmp_path: Path, log_path: str, content: bytes) -> tuple[Path, Path]:
    """A folder with a good session and ``content`` at ``log_path`` in it: (the folder, that file)."""
    folder = tmp_path / "logs"
    _good_session(folder)
    hostile = folder / log_path
    hostile.parent.mkdir(parents=True)
    hostile.write_bytes(content)
    return folder, hostile


def _good_session(folder: Path) -> None:
    log = Log("session-900d0000-0000-4000-8000-000000000001", started_ms=1_796_000_000_000, cwd="/w")
    log.prompt("the session beside the hostile one")
    for _ in range(6):
        log.call("read", {"file_path": "/w/notes.md"}, "notes")
    log.write(folder)


def _rtb(folder: Path, output: str, tmp_path: Path) -> tuple[int, str, str]:
    """``rtb replay`` of ``folder`` in ``output`` format, in a process of ``ADDRESS_SPACE`` bytes."""
    page = tmp_path / "page.html"
    argv = ["--html", str(page)] if output == "html" else ["--format", output]

    def cap_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))

    done = subprocess.run(
        [sys.executable, "-m", "breaker", "replay", *argv, str(folder)],
        capture_output=True,
        check=False,
        cwd=ROOT,
        preexec_fn=cap_memory,
        timeout=300,
    )
    out = page.read_text(encoding="utf-8") if output == "html" and page.exists() else ""
    return done.returncode, out or done.stdout.decode("utf-8"), done.stderr.decode("utf-8")


def _assert_named_and_the_rest_reported(status: int, out: str, err: str, where: str, reason: str) -> None:
    assert "Traceback" not in err, err[-2000:]
    assert status == 1, err[-2000:]
    assert f"{where}: {reason}" in err
    assert "900d0000" in out  # the good session is reported


@pytest.mark.parametrize("output", FORMATS)
def test_a_decompression_bomb_is_a_named_problem_in_bounded_memory(output: str, tmp_path: Path) -> None:
    folder, bomb = _beside_a_good_session(
        tmp_path, "session-b0b0/session.jsonl.zstd", _zstd_rle_frame(b"x", 32_768)
    )
    assert bomb.stat().st_size < 130 * 1024

    status, out, err = _rtb(folder, output, tmp_path)

    _assert_named_and_the_rest_reported(
        status, out, err, f"{bomb}:1", f"expands more than {MAX_EXPANSION} times its compressed size"
    )


def test_a_line_longer_than_the_limit_is_skipped_and_the_next_line_read() -> None:
    import io

    import zstandard

    good = json.dumps({"type": "tool/call", "data": {"callId": "c1", "name": "read"}}).encode()
    text = b'{"a":"' + b"y" * (MAX_LINE_BYTES + 10) + b'"}\n' + good + b"\n"
    for compressed in (False, True):
        data = zstandard.ZstdCompressor().compress(text) if compressed else text
        lines = list(log_lines(io.BytesIO(data), compressed=compressed))
        assert [number for number, _ in lines] == [1, 2]
        assert isinstance(lines[0][1], BadLine) and "longer than" in lines[0][1].reason
        assert lines[1][1] == good


def _nested(depth: int) -> object:
    value: object = "bottom"
    for _ in range(depth):
        value = [value]
    return value


def _deep_text(depth: int) -> str:
    return "[" * depth + '"bottom"' + "]" * depth


#: Values no reader takes, each with what is said of them: a thousand levels deep; an integer of
#: more digits than Python converts (``sys.get_int_max_str_digits()``).
_PAST_A_LIMIT = {
    "nested-a-thousand-deep": (_deep_text(1000), f"nested deeper than {MAX_NESTING} levels"),
    "a-number-too-long": (
        "7" * (sys.get_int_max_str_digits() + 1),
        f"holds a number of more than {sys.get_int_max_str_digits():,} digits",
    ),
}


@pytest.mark.parametrize("past", sorted(_PAST_A_LIMIT))
@pytest.mark.parametrize("output", FORMATS)
def test_arguments_and_events_past_a_limit_are_named_problems(output: str, past: str, tmp_path: Path) -> None:
    value, reason = _PAST_A_LIMIT[past]
    call = {"callId": "c1", "name": "bash", "arguments": '{"command":' + value + "}"}
    lines = [
        json.dumps({"type": "session", "id": "session-dee9"}),
        json.dumps({"type": "tool/call", "data": call}),
        '{"type":"tool/call","data":{"callId":"c2","name":"bash","arguments":{"command":' + value + "}}}",
        json.dumps({"type": "tool/call", "data": {"callId": "c3", "name": "read", "arguments": "{}"}}),
    ]
    content = ("\n".join(lines) + "\n").encode()
    folder, hostile = _beside_a_good_session(tmp_path, "session-dee9/session.jsonl", content)

    status, out, err = _rtb(folder, output, tmp_path)

    _assert_named_and_the_rest_reported(status, out, err, f"{hostile}:2", f"tool/call c1: arguments {reason}")
    assert f"{hostile}:3: an event {reason}" in err


def test_nesting_just_inside_the_limit_is_read_and_past_it_is_not() -> None:
    assert load_json(json.dumps(_nested(MAX_NESTING))) == _nested(MAX_NESTING)
    with pytest.raises(Unreadable):
        load_json(json.dumps(_nested(MAX_NESTING + 1)))
    with pytest.raises(Unreadable):
        load_json(json.dumps({"k": _nested(MAX_NESTING)}))


@pytest.mark.parametrize("output", FORMATS)
def test_lone_surrogates_are_read_as_the_replacement_character(output: str, tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    _good_session(folder)
    log = Log("session-5a11-0000", started_ms=1_796_000_000_000, cwd="/w/\ud800")
    log.prompt("prompt \ud800 end")
    for _ in range(6):
        log.call("bash", {"command": "echo \udc00x", "description": "d"}, "out \udfff")
    path = log.write(folder)
    assert "\\udc00" in path.read_text(encoding="utf-8")  # json.dumps wrote the escape

    status, out, err = _rtb(folder, output, tmp_path)

    assert "Traceback" not in err, err[-2000:]
    assert status == 0, err[-2000:]
    assert "900d0000" in out and "5a11" in out
    if output == "json":
        commands = {call["command"] for s in json.loads(out)["sessions"] for call in s["verdicts"]}
        assert f"echo {REPLACEMENT}x" in commands


def test_a_lone_surrogate_in_a_key_is_replaced_too() -> None:
    assert load_json('{"\\ud800k": ["\\udfff", "\\ud83d\\ude00"]}') == {
        f"{REPLACEMENT}k": [REPLACEMENT, "\U0001f600"]
    }


def test_the_docs_quote_the_limits_as_the_code_has_them() -> None:
    from breaker.rtb.read.logstream import EXPANSION_FLOOR
    from breaker.rtb.read.sessions import PROBLEMS_LISTED

    docs = (ROOT / "docs" / "rtb.md").read_text(encoding="utf-8")
    mib = 1024 * 1024
    assert f"| a line | {MAX_LINE_BYTES // mib} MiB |" in docs
    assert (
        f"| {MAX_EXPANSION} times the compressed bytes read, once past {EXPANSION_FLOOR // mib} MiB |" in docs
    )
    assert f"| {MAX_NESTING} levels |" in docs
    assert f"| unreadable lines named per file | {PROBLEMS_LISTED} |" in docs
    assert f"capped at {ADDRESS_SPACE // (1024 * mib)} GiB of address space" in docs
