"""Every Python benchmark of ``bench/`` starts: its imports resolve and ``--help`` ends well (the
usage, or for one that takes no options, its short run on the corpora).

``npm run bench`` runs them only where a pinned dsh is installed, and no type check reads them, so
an import a refactor of ``compat/`` moved away (``bash``, now ``compat/scenarios.py``) broke
``bench/boot.py`` and ``bench/whole_turn.py`` unseen until a benchmark was run.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted((ROOT / "bench").glob("*.py"))


def test_there_are_python_benchmarks_to_start() -> None:
    assert {"boot.py", "whole_turn.py", "worker_time.py"} <= {script.name for script in SCRIPTS}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda script: script.name)
def test_a_python_benchmark_starts(script: Path) -> None:
    command = [sys.executable, str(script), "--help"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip()
