"""Hostile config files and call arguments end ``rtb`` with one line and exit status 2, never a
traceback nor a read without end (issue 40, finding 6): every reader of a config (``--config``,
``--profile``, ``rtb check``) and of a call's arguments (``explain --json``) is bounded in depth
and in size."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from breaker.rtb.cli import main
from breaker.rtb.config.configfile import MAX_CONFIG_BYTES, MAX_CONFIG_VALUES
from breaker.rtb.read.jsontext import MAX_NESTING

SESSIONS = Path(__file__).parent / "fixtures" / "sessions"


def _aliases_in_another_row(levels: int) -> str:
    """A cordis patch whose other row defines YAML anchors, each ten of the one before, and whose
    breaker row names the last: ten to the ``levels`` values once read, from a few hundred bytes."""
    lines = ["- id: other", "  config:", "    a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"    a{n}: &a{n} [" + ", ".join([f"*a{n - 1}"] * 10) + "]" for n in range(1, levels)]
    return "\n".join(
        [*lines, "- id: repeat-tool-breaker", "  config:", f"    hostAliases: {{x: *a{levels - 1}}}", ""]
    )


#: Each hostile file as (name, its bytes, words the one line says).
HOSTILE_FILES = [
    ("json-100000-deep", ('{"limits": ' + "[" * 100_000 + "]" * 100_000 + "}").encode(), "nested deeper"),
    ("yaml-flow-20000-deep", ("window: 8\nlimits: " + "[" * 20_000 + "]" * 20_000).encode(), "nested deeper"),
    (
        "yaml-mappings-20000-deep",
        ("limits: " + "{a: " * 20_000 + "1" + "}" * 20_000).encode(),
        "nested deeper",
    ),
    ("yaml-block-200-deep", "".join(f"{' ' * n}a{n}:\n" for n in range(200)).encode(), "nested deeper"),
    (
        "yaml-aliases-expanding",
        _aliases_in_another_row(7).encode(),
        f"more than {MAX_CONFIG_VALUES:,} values",
    ),
    ("larger-than-the-bound", b"window: 8\n" + b"#" * MAX_CONFIG_BYTES, f"larger than {MAX_CONFIG_BYTES:,}"),
    ("json-number-of-5000-digits", b'{"window": ' + b"8" * 5000 + b"}", "holds a number of more than"),
    ("yaml-number-of-5000-digits", b"window: " + b"8" * 5000 + b"\n", "holds a number of more than"),
    ("not-utf-8", b"window: 8\nlogDenials: '\xff\xfe'\n", "not UTF-8"),
    ("yaml-syntax-error", b"window: [8\nlimits: {net: 3\n", "neither JSON nor YAML"),
]


def _one_line(status: int, text: str, expected: str) -> None:
    assert status == 2, text[:400]
    assert text.count("\n") == 1 and text.endswith("\n"), text[:400]
    assert expected in text and "Traceback" not in text
    assert len(text) < 1000


@pytest.mark.parametrize(
    ("raw", "expected"), [case[1:] for case in HOSTILE_FILES], ids=[c[0] for c in HOSTILE_FILES]
)
def test_a_hostile_config_file_ends_every_reader_with_one_line_and_status_2(
    raw: bytes, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "config.yml"
    path.write_bytes(raw)
    for argv in (
        ["explain", "--config", str(path), "ls"],
        ["replay", "--config", str(path), str(SESSIONS)],
        ["sweep", "--config", str(path), str(SESSIONS)],
    ):
        status = main(argv)
        captured = capsys.readouterr()
        assert captured.out == ""
        _one_line(status, captured.err, expected)
    status = main(["check", str(path)])
    _one_line(status, capsys.readouterr().out, expected)


def test_a_profile_folder_whose_patch_is_hostile_ends_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    profile = tmp_path / "profiles" / "work"
    profile.mkdir(parents=True)
    (profile / "cordis.patch.yml").write_text(
        "- id: repeat-tool-breaker\n  config:\n    limits: " + "[" * 20_000
    )
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    status = main(["explain", "--profile", "work", "ls"])
    _one_line(status, capsys.readouterr().err, "nested deeper")
    monkeypatch.chdir(profile)
    status = main(["replay", str(SESSIONS)])
    _one_line(status, capsys.readouterr().err, "nested deeper")


def test_a_config_at_the_bounds_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The bounds refuse only what no config comes near: a file of their size and depth is read."""
    nested: object = 1
    for _ in range(MAX_NESTING - 2):
        nested = {"a": nested}
    document = {"window": 8, "x-notes": nested}
    text = json.dumps(document)
    path = tmp_path / "config.json"
    path.write_text(text + " " * (MAX_CONFIG_BYTES - len(text)))
    assert path.stat().st_size == MAX_CONFIG_BYTES
    status = main(["check", str(path)])
    out = capsys.readouterr().out
    assert status == 1 and "unknown config key 'x-notes'" in out  # read whole, then validated


def test_dev_zero_as_a_config_is_refused_after_the_bound(tmp_path: Path) -> None:
    """``/dev/zero`` never ends: it is read up to the bound only (in a child held to 512 MB, which
    an unbounded read outgrows in a few seconds)."""

    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20))

    for argv in (["check", "/dev/zero"], ["explain", "--config", "/dev/zero", "ls"]):
        done = subprocess.run(
            [sys.executable, "-m", "breaker", *argv],
            capture_output=True,
            text=True,
            preexec_fn=limit_memory,
            check=False,
        )
        _one_line(done.returncode, done.stdout + done.stderr, "larger than")


_DEEP = "[" * 3000 + "]" * 3000


@pytest.mark.parametrize(
    "call",
    [
        '{"name": "bash", "arguments": {"command": "ls", "x": ' + _DEEP + "}}",
        '{"name": "bash", "arguments": ' + json.dumps('{"command": "ls", "x": ' + _DEEP + "}") + "}",
        _DEEP,
        '{"name": "bash", "arguments": {"command": "ls", "n": ' + "8" * 5000 + "}}",
    ],
    ids=["arguments-3000-deep", "arguments-string-3000-deep", "call-3000-deep", "number-of-5000-digits"],
)
def test_explain_json_with_arguments_nested_3000_deep_ends_with_one_line(
    call: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["explain", "--json", call])
    captured = capsys.readouterr()
    assert captured.out == ""
    _one_line(status, captured.err, "nested deeper" if "[[" in call else "holds a number of more than")


def test_the_docs_quote_the_bounds_as_the_code_has_them() -> None:
    docs = (Path(__file__).resolve().parent.parent / "docs" / "rtb.md").read_text(encoding="utf-8")
    assert f"| a config file's size | {MAX_CONFIG_BYTES:,} bytes" in docs
    assert f"| nesting of a config file or of `explain --json`'s call | {MAX_NESTING} levels |" in docs
    assert f"each YAML alias counted again | {MAX_CONFIG_VALUES:,} |" in docs
    digits = sys.get_int_max_str_digits()
    assert f"| digits of an integer (a config, a call's arguments, a log line) | {digits:,} " in docs
