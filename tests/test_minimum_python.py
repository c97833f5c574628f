"""The oldest Python the worker supports is stated once in each place that needs it, and they agree.

``requires-python`` in pyproject.toml is the statement of record; the shim checks an interpreter
against ``MINIMUM_PYTHON`` (node-shim/boot/package.js) before it starts the worker, mypy checks the
code as that version (``python_version``) and ruff writes for it (``target-version``).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def test_the_shim_mypy_and_ruff_take_requires_python_as_the_oldest_python() -> None:
    required = re.search(r'^requires-python = ">=(\d+)\.(\d+)"$', PYPROJECT, re.MULTILINE)
    assert required is not None, "requires-python is stated as >=MAJOR.MINOR"
    major, minor = required.groups()
    environment = (ROOT / "node-shim" / "boot" / "package.js").read_text(encoding="utf-8")
    assert re.search(rf"^export const MINIMUM_PYTHON = \[{major}, {minor}\];$", environment, re.MULTILINE)
    assert re.search(rf'^python_version = "{major}\.{minor}"$', PYPROJECT, re.MULTILINE)
    assert re.search(rf'^target-version = "py{major}{minor}"$', PYPROJECT, re.MULTILINE)
