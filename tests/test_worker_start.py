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
