"""Every number of the configuration is bounded to what the shim can hold (issue 40, finding 5):
``NUMBER_BOUNDS`` in breaker/core/config/tables.py is the one table, ``load_config`` checks it (so does
``rtb check``, and the boot, in one line), and whatever the worker then sends the shim (its
settings, the passes of every guard) can be packed, held and waited for."""

from __future__ import annotations

import re
import typing
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest

from breaker.core.config import DEFAULTS, NUMBER_BOUNDS, BreakerConfig, ConfigError, load_config
from breaker.core.decision import Breaker
from breaker.core.reading.fingerprints import ToolCall
from breaker.rtb.cli import main

ROOT = Path(__file__).resolve().parent.parent
#: What a JavaScript timer holds (a longer delay fires at once, with a warning) and what the shim's
#: 32-bit slots hold.
INT32_MAX = 2**31 - 1


def _raw(key: str, value: object) -> dict[str, Any]:
    """A config setting ``key`` (a ``limits`` row sets its ``exact`` entry) to ``value``."""
    return {"limits": {"exact": value}} if key == "limits" else {key: value}


def test_every_number_of_the_configuration_has_its_bounds() -> None:
    hints = typing.get_type_hints(BreakerConfig)
    numbers = {
        key
        for key in DEFAULTS
        if any(kind in (int, float) for kind in (*typing.get_args(hints[key]), hints[key])) or key == "limits"
    }
    assert numbers == set(NUMBER_BOUNDS)


@pytest.mark.parametrize("key", sorted(NUMBER_BOUNDS))
def test_each_number_is_accepted_at_its_bounds_and_refused_past_them_naming_its_key(key: str) -> None:
    least, most = NUMBER_BOUNDS[key]
    assert most <= INT32_MAX
    for value in (least, most):
        load_config(_raw(key, value))
    name = "limits.exact" if key == "limits" else key
    with pytest.raises(ConfigError, match=rf"^{re.escape(name)} must be .*{most:,}.*got {most + 1}"):
        load_config(_raw(key, most + 1))


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("startTimeoutMs", 3_000_000_000),
        ("startTimeoutMs", 0.5),
        ("guardTimeoutMs", 10_000_000_000),
        ("window", 1e30),
        ("maxAgents", 2**64),
        ("resultPreviewChars", 2**40),
        ("limits", 1e300),
        ("sameResultLimit", 1e300),
        ("warnAt", 2**31),
    ],
)
def test_the_reviews_numbers_are_refused(key: str, value: float) -> None:
    with pytest.raises(ConfigError):
        load_config(_raw(key, value))


def test_what_the_worker_sends_the_shim_at_the_bounds_packs_and_fits() -> None:
    """Every number at its most: the settings and the passes of a guard pack in msgpack and fit
    the 32-bit integers the shim holds them in."""
    raw: dict[str, object] = {key: NUMBER_BOUNDS[key][1] for key in NUMBER_BOUNDS if key != "limits"}
    raw["limits"] = dict.fromkeys(("exact", "cmd", "net", "sink"), NUMBER_BOUNDS["limits"][1])
    config = load_config(raw)
    assert (
        msgpack.unpackb(msgpack.packb(config.values()))["startTimeoutMs"]
        == NUMBER_BOUNDS["startTimeoutMs"][1]
    )
    breaker = Breaker(config)
    breaker.decide(1, ToolCall("bash", {"command": "ls"}, "c1"))
    passes = breaker.passes(1)
    assert isinstance(passes, int) and 0 <= passes <= INT32_MAX
    msgpack.packb({"passes": passes})
    timeouts = (config.guardTimeoutMs, config.startTimeoutMs)
    assert all(timeout <= 24 * 3600 * 1000 for timeout in timeouts), "a deadline fits the 32-bit slot"


def test_rtb_check_refuses_a_start_timeout_past_the_bound_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    patch = tmp_path / "cordis.patch.yml"
    patch.write_text("- id: repeat-tool-breaker\n  config:\n    startTimeoutMs: 3000000000\n")
    assert main(["check", str(patch)]) == 1
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "startTimeoutMs must be" in out and "3000000000" in out


def test_the_docs_quote_every_bound() -> None:
    docs = " ".join((ROOT / "docs" / "configuration.md").read_text(encoding="utf-8").split())
    for key, (least, most) in NUMBER_BOUNDS.items():
        assert f"| `{key}` | {least} | {most:,} |" in docs, key
