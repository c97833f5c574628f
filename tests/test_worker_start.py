"""A worker told its configuration is ``known`` (accepted before by this very code) answers it
without importing pydantic; any other configuration gets pydantic's strict check too."""

from __future__ import annotations

import subprocess
import sys

import pytest

SCRIPT = """
import sys
from breaker.worker import RequestHandler
from breaker.ops import Configure
handler = RequestHandler(defer_core=True)
reply = handler.handle(Configure(id=1, config={"identity": "state-aware"}, known=KNOWN))
print(reply.get("ok"), "pydantic" in sys.modules)
"""


@pytest.mark.parametrize(("known", "imports_pydantic"), [(True, False), (None, True)])
def test_a_known_configuration_is_answered_without_pydantic(
    known: bool | None, imports_pydantic: bool
) -> None:
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT.replace("KNOWN", repr(known))],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["True", str(imports_pydantic)]


#: Modules that answering ``configure`` must not wait for: the decision core, the verdicts, the
#: redaction rules (compiled at import) and the log, which only the requests after it use.
DECISION_CORE = (
    "breaker.core.decision",
    "breaker.core.history.analysis",
    "breaker.core.judging.verdicts",
    "breaker.core.reading.fingerprints",
    "breaker.core.wording.redaction",
    "logging",
    "traceback",
)

CORE_SCRIPT = """
import sys
from breaker.worker import RequestHandler
from breaker.ops import Configure
handler = RequestHandler(defer_core=True)
reply = handler.handle(Configure(id=1, config={}, known=True))
print(reply.get("ok"), *sorted(name for name in MODULES if name in sys.modules))
handler.start()
print(*sorted(name for name in MODULES if name in sys.modules))
"""


def test_configure_is_answered_before_the_decision_core_is_imported() -> None:
    script = CORE_SCRIPT.replace("MODULES", repr(DECISION_CORE))
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    answered, started = run.stdout.splitlines()
    assert answered == "True"
    assert started.split() == sorted(DECISION_CORE)
