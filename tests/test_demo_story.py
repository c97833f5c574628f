"""`npm run demo` in the user's profile runs under its configuration: a loop that configuration lets
run is told as such, with how to see the defaults' stops, not as the demo failing."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

COMPAT = Path(__file__).resolve().parent.parent / "compat"
sys.path.insert(0, str(COMPAT))

zstandard = pytest.importorskip("zstandard", reason="compat/run.py reads session logs with zstandard")
import demo  # noqa: E402
from dsh_run import Attempt, Outcome  # noqa: E402

LOOP_A = demo.LOOPS[0]


def _outcome(denied_from: int | None) -> Outcome:
    """Loop A's five calls, denied from call ``denied_from`` on (None: all ran)."""
    attempts = [
        Attempt(
            f"call_{n}",
            "bash",
            {"command": "echo tick >> /w/counter.txt", "description": "tick"},
            None if denied_from is not None and n >= denied_from else False,
            "Error: REPEAT_TOOL_BLOCKED: this `bash` call was not run: it repeats an action."
            if denied_from is not None and n >= denied_from
            else "",
        )
        for n in range(1, 6)
    ]
    return cast(Outcome, SimpleNamespace(attempts=attempts, work=Path("/w")))


def test_a_loop_the_profiles_configuration_lets_run_is_told_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert not demo.tell_loop(_outcome(None), *LOOP_A, under="./cordis.patch.yml (profile folder)")
    out = capsys.readouterr().out
    assert "No call of this loop was denied under ./cordis.patch.yml (profile folder)." in out
    assert "the demo failed here" not in out
    assert not demo.tell_loop(_outcome(None), *LOOP_A, under=None)
    assert "No call of this loop was denied: the demo failed here." in capsys.readouterr().out
    assert demo.tell_loop(_outcome(5), *LOOP_A, under=None)


def test_the_configuration_a_profile_sets_is_named(tmp_path: Path) -> None:
    profile = tmp_path / "profiles" / "headless"
    profile.mkdir(parents=True)
    (profile / "cordis.patch.yml").write_text("- id: hmr\n  disabled: false\n")
    assert demo.configured_by(profile) is None
    (profile / "cordis.patch.yml").write_text("- id: repeat-tool-breaker\n  config:\n    window: 20\n")
    assert demo.configured_by(profile) == f"{profile / 'cordis.patch.yml'} (profile folder)"
