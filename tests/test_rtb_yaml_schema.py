"""`rtb` reads a config file's YAML as dsh does (js-yaml 4, its JSON schema), so `rtb check`
passes what the boot takes and refuses what it refuses: PyYAML's YAML 1.1 read `yes` and `on` as
true and `1_000` as a thousand, which the boot refuses, and `2e1` or `0o20` as text, which it takes."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml  # type: ignore[import-untyped]  # (pyyaml ships no stubs)

from breaker.rtb.cli import main
from breaker.rtb.config.yamlschema import dsh_loader

PATCH_HEAD = "- id: hmr\n  disabled: false\n  config: { root: [] }\n"

# What js-yaml 4.3.2 (dsh 0.1.0-rc.8's) gives each plain scalar under its JSON schema, read there.
AS_DSH_READS = [
    ("yes", "yes"),
    ("on", "on"),
    ("Off", "Off"),
    ("1_000", "1_000"),
    ("1:30", "1:30"),
    ("2001-12-14", "2001-12-14"),
    ("1e400", "1e400"),
    ("0x", "0x"),
    ("+.nan", "+.nan"),
    ("0x10", 16),
    ("0o20", 16),
    ("020", 20),
    ("00", 0),
    ("+20", 20),
    ("0b101", 5),
    ("-0b11", -3),
    ("-0x1F", -31),
    ("2e1", 20.0),
    ("20.0", 20.0),
    ("1.", 1.0),
    (".5e1", 5.0),
    (".inf", math.inf),
    ("-.Inf", -math.inf),
    ("~", None),
    ("", None),
    ("Null", None),
    ("TRUE", True),
    ("False", False),
]


def _read(text: str) -> object:
    return yaml.load(text, Loader=dsh_loader(yaml))


@pytest.mark.parametrize(("scalar", "value"), AS_DSH_READS)
def test_a_plain_scalar_is_read_as_dsh_reads_it(scalar: str, value: object) -> None:
    read = _read(f"a: {scalar}\n")
    assert isinstance(read, dict)
    assert read["a"] == value and type(read["a"]) is type(value)


def test_nan_and_quoted_scalars() -> None:
    read = _read("a: .NaN\nb: 'yes'\nc: \"12\"\n<<: {d: 1}\n")
    assert isinstance(read, dict)
    assert math.isnan(read["a"]) and read["b"] == "yes" and read["c"] == "12"
    assert read["<<"] == {"d": 1}, "no merge key: a key like any other"


def _check(tmp_path: Path, capsys: pytest.CaptureFixture[str], config: str) -> tuple[int, str]:
    profile = tmp_path / "profiles" / "work"
    profile.mkdir(parents=True, exist_ok=True)
    (profile / "cordis.patch.yml").write_text(PATCH_HEAD + "- id: repeat-tool-breaker\n  config:\n" + config)
    status = main(["check", str(profile)])
    return status, capsys.readouterr().out


@pytest.mark.parametrize(
    ("config", "refused"),
    [
        ("    logDenials: yes\n", "logDenials must be true or false, got 'yes', a string"),
        ("    includeLocal: on\n", "includeLocal must be true or false, got 'on', a string"),
        ("    window: 1_000\n", "window must be a whole number >= 4, got '1_000', a string"),
        ("    window: 1:30\n", "window must be a whole number >= 4, got '1:30', a string"),
    ],
)
def test_check_refuses_what_the_boot_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], config: str, refused: str
) -> None:
    status, out = _check(tmp_path, capsys, config)
    assert status == 1 and refused in out, out


@pytest.mark.parametrize("window", ["2e1", "0o20", "0x10", "020"])
def test_check_takes_what_the_boot_takes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], window: str
) -> None:
    status, out = _check(tmp_path, capsys, f"    window: {window}\n")
    assert status == 0 and out.startswith("OK:"), out


def test_a_key_given_twice_is_refused_as_dsh_refuses_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = _check(tmp_path, capsys, "    window: 20\n    window: 30\n")
    assert status == 2, "a file that does not load"
    assert "the key 'window' is given twice in one mapping (line 7)" in out, out  # dsh: (7:5)
    assert out.count("\n") == 1


def test_a_key_is_text_as_dsh_reads_it() -> None:
    """js-yaml writes every key of a mapping as a JavaScript object key: text."""
    read = _read("1: a\n0x10: b\ntrue: c\nnull: d\n2.0: e\n1.5: f\n? [x, 1]\n: g\n? {y: 1}\n: h\n")
    assert read == {
        "1": "a",
        "16": "b",
        "true": "c",
        "null": "d",
        "2": "e",
        "1.5": "f",
        "x,1": "g",
        "[object Object]": "h",
    }


def test_a_numeric_key_is_named_as_the_boot_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = _check(tmp_path, capsys, "    1: 2\n")
    assert status == 1 and "unknown config key '1'" in out, out  # it said: config keys must be strings
    status, out = _check(tmp_path, capsys, "    limits: {5: 5}\n")
    assert status == 1 and "limits has an unknown key '5':" in out, out


def test_a_key_given_twice_as_a_number_and_as_text_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = _check(tmp_path, capsys, "    limits: {5: 5, '5': 6}\n")
    assert status == 2 and "the key '5' is given twice in one mapping" in out, out
