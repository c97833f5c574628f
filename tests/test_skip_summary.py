"""The run says how many tests did not run and why; under CI, data-driven tests that did not run fail it.

Each case runs pytest on a small test file in its own folder, with this suite's conftest.py.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

Runner = Callable[..., pytest.RunResult]

CONFTEST = Path(__file__).with_name("conftest.py").read_text(encoding="utf-8")
TESTS = """
import pytest

def test_runs():
    pass

@pytest.mark.parametrize("n", range(3))
def test_reads_the_real_runs(n):
    pytest.skip("../shared/real-sessions is not there: the real-session regression check reads it")

def test_needs_a_browser():
    pytest.skip("no chromium")
"""


@pytest.fixture
def run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Runner:
    def run_with(ci: str | None, tests: str = TESTS) -> pytest.RunResult:
        pytester.makeconftest(CONFTEST)
        pytester.makepyfile(test_sample=tests)
        if ci is None:
            monkeypatch.delenv("CI", raising=False)
        else:
            monkeypatch.setenv("CI", ci)
        monkeypatch.setenv("RTB_SKIPPED_FILE", str(pytester.path / "skipped.txt"))
        return pytester.runpytest_subprocess("-p", "no:cacheprovider")

    return run_with


def test_outside_ci_the_run_passes_and_says_in_one_line_what_did_not_run(
    run: Runner, pytester: pytest.Pytester
) -> None:
    result = run(None)
    assert result.ret == pytest.ExitCode.OK
    total = (
        "did not run: 4 tests (3 need the real agent runs in ../shared beside the clone, absent here;"
        " 1 for the reasons above)"
    )
    result.stdout.fnmatch_lines(
        ["skipped 3 tests: ../shared/real-sessions is not there*", "skipped 1 test: no chromium", total]
    )
    assert (pytester.path / "skipped.txt").read_text(encoding="utf-8") == total + "\n"


@pytest.mark.parametrize("ci", ["true", "1"])
def test_under_ci_data_driven_tests_that_did_not_run_fail_the_run(run: Runner, ci: str) -> None:
    result = run(ci)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["did not run: 4 tests (*); CI: FAILED, 3 data-driven tests did not run*"])


@pytest.mark.parametrize("ci", ["false", "0", ""])
def test_ci_set_to_false_is_not_ci(run: Runner, ci: str) -> None:
    assert run(ci).ret == pytest.ExitCode.OK


def test_under_ci_other_skips_do_not_fail_the_run(run: Runner) -> None:
    tests = "import pytest\n\ndef test_needs_a_browser():\n    pytest.skip('no chromium')\n"
    result = run("true", tests)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["did not run: 1 test (1 for the reasons above)"])


def test_under_ci_a_run_with_nothing_skipped_passes(run: Runner) -> None:
    result = run("true", "def test_runs():\n    pass\n")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["did not run: 0 tests"])
