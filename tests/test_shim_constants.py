"""The one limit the shim keeps itself is the worker's own default, pinned here.

Every table and limit the shim applies comes from the worker's ``configure`` reply, except the
wait for that very reply: before the worker has validated ``startTimeoutMs`` the shim bounds its
first answer by ``BOOT_TIMEOUT_MS`` (node-shim/worker/start.js, where the boot starts the worker).
The worker's defaults table is the statement of record; this test keeps the shim's copy equal to it.
"""

from __future__ import annotations

import re
from pathlib import Path

from breaker.core.config import DEFAULTS, NUMBER_BOUNDS, default_config

ROOT = Path(__file__).resolve().parent.parent


def test_the_shims_boot_wait_is_the_default_start_timeout() -> None:
    start = (ROOT / "node-shim" / "worker" / "start.js").read_text(encoding="utf-8")
    found = re.findall(r"^const BOOT_TIMEOUT_MS = ([\d_]+);$", start, re.MULTILINE)
    assert len(found) == 1, "BOOT_TIMEOUT_MS is defined once, as a plain integer"
    assert int(found[0].replace("_", "")) == DEFAULTS["startTimeoutMs"] == default_config().startTimeoutMs


def test_the_shim_waits_for_a_start_timeout_only_within_the_workers_bounds() -> None:
    """The shim reads ``startTimeoutMs`` before the worker has validated it: it uses a value only
    within the bounds the worker's table gives it, else it waits ``BOOT_TIMEOUT_MS`` for the
    worker's answer, which names the key (a fraction, or a deadline past the 32-bit slot)."""
    start = (ROOT / "node-shim" / "worker" / "start.js").read_text(encoding="utf-8")
    found = re.findall(r"^const START_TIMEOUT_BOUNDS = \[([\d_]+), ([\d_]+)\];$", start, re.MULTILINE)
    assert len(found) == 1, "START_TIMEOUT_BOUNDS is defined once, as two plain integers"
    assert tuple(int(bound.replace("_", "")) for bound in found[0]) == NUMBER_BOUNDS["startTimeoutMs"]


def test_a_bad_configuration_at_boot_names_the_fix_rtb_check_names() -> None:
    """The boot's line and ``rtb check``'s say the same fix (``rtb check`` states it)."""
    from breaker.rtb.config.check import FIX

    start = (ROOT / "node-shim" / "worker" / "start.js").read_text(encoding="utf-8")
    found = re.search(r"^const CONFIG_FIX = ((?:'(?:[^'\\]|\\.)*'(?: \+\s*)?)+);$", start, re.MULTILINE)
    assert found is not None, "CONFIG_FIX is one string, or a sum of single-quoted strings"
    text = "".join(part.replace("\\'", "'") for part in re.findall(r"'((?:[^'\\]|\\.)*)'", found[1]))
    assert text.startswith(FIX)
