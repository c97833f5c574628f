"""Hypothesis profiles: the same examples on every CI run, new ones on a developer's.

``ci`` is derandomized: every run tries the same examples (chosen from each test's own source),
so a property failure shows on the change that brought it, never at random on a later one; it
keeps no example database. ``dev`` draws new examples each run and keeps failures in
``.hypothesis/`` to try first next time. ``npm test`` (tests/run-all.sh) passes
``--hypothesis-profile=ci``; otherwise ``HYPOTHESIS_PROFILE`` names the profile, and a ``CI``
variable selects ``ci``. Neither sets a deadline: the suite shares its cores with whatever else runs,
and a slow example is not a wrong one (a test that needs a deadline sets its own).
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """One line per reason tests were skipped, with how many: a skip must never go unexplained
    (the real-session checks need a folder of real agent runs beside the checkout)."""
    reasons: Counter[str] = Counter()
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
        reasons[reason.removeprefix("Skipped: ")] += 1
    for reason, count in reasons.most_common():
        terminalreporter.write_line(f"skipped {count} test{'s' if count != 1 else ''}: {reason}")
