"""Hypothesis profiles, and a plain account of the tests that did not run.

``ci`` is derandomized: every run tries the same examples (chosen from each test's own source),
so a property failure shows on the change that brought it, never at random on a later one; it
keeps no example database. ``dev`` draws new examples each run and keeps failures in
``.hypothesis/`` to try first next time. ``npm test`` (tests/run-all.sh) passes
``--hypothesis-profile=ci``; otherwise ``HYPOTHESIS_PROFILE`` names the profile, and a ``CI``
variable selects ``ci``. Neither sets a deadline: the suite shares its cores with whatever else runs,
and a slow example is not a wrong one (a test that needs a deadline sets its own).

Skips: the run ends with one line per reason and how many tests it kept from running, and one
line with the total. A data-driven test skips when the real agent runs it reads (``../shared``,
beside the clone) are absent; under ``CI`` (set and not ``0``/``false``) that fails the run, since
a CI run that did not look at the data has not checked what those tests pin. ``RTB_SKIPPED_FILE``
names a file the total line is also written to (``npm test`` prints it last).
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

#: How a skip for absent real-session data names what is missing (tests/test_corpus.py).
DATA_MISSING = "../shared"


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if in_ci() else "dev"))


def _skip_reasons(terminalreporter: Any) -> Counter[str]:
    reasons: Counter[str] = Counter()
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
        reasons[reason.removeprefix("Skipped: ")] += 1
    return reasons


def _total_line(reasons: Counter[str]) -> str:
    total = sum(reasons.values())
    data = sum(count for reason, count in reasons.items() if DATA_MISSING in reason)
    if not total:
        return "did not run: 0 tests"
    why = f"{data} need the real agent runs in {DATA_MISSING} beside the clone, absent here" if data else ""
    other = total - data
    rest = f"{other} for the reasons above" if other else ""
    return f"did not run: {total} test{'s' if total != 1 else ''} ({'; '.join(p for p in (why, rest) if p)})"


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """One line per reason tests were skipped, with how many, then one line with the total."""
    reasons = _skip_reasons(terminalreporter)
    for reason, count in reasons.most_common():
        terminalreporter.write_line(f"skipped {count} test{'s' if count != 1 else ''}: {reason}")
    total = _total_line(reasons)
    data = sum(count for reason, count in reasons.items() if DATA_MISSING in reason)
    if data and in_ci():
        total += (
            f"; CI: FAILED, {data} data-driven tests did not run (put the real agent runs in {DATA_MISSING})"
        )
    terminalreporter.write_line(total)
    summary_file = os.environ.get("RTB_SKIPPED_FILE")
    if summary_file:
        Path(summary_file).write_text(total + "\n", encoding="utf-8")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Under CI, a data-driven test that did not run fails the run (the summary says why)."""
    if not in_ci() or exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and any(DATA_MISSING in reason for reason in _skip_reasons(reporter)):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
