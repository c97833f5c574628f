"""The re-exports of ``breaker`` and of each stage of the core are loaded on first use: each name
listed loads from its home, type checkers are shown the same names from the same homes, and
importing a package imports none of them."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from breaker.reexports import homes_of, loader

PACKAGES = (
    "breaker",
    "breaker.core.config",
    "breaker.core.reading",
    "breaker.core.history",
    "breaker.core.judging",
    "breaker.core.deciding",
)


def type_checked_homes(package: str) -> dict[str, str]:
    """``{name: home}`` of the ``from home import name as name`` lines under ``TYPE_CHECKING`` in
    ``package``'s ``__init__``, its own submodules left out."""
    path = Path(importlib.import_module(package).__file__ or "")
    homes: dict[str, str] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for line in node.body:
                if isinstance(line, ast.ImportFrom) and line.module != package:
                    homes.update({alias.name: str(line.module) for alias in line.names})
    return homes


@pytest.mark.parametrize("package", PACKAGES)
def test_type_checkers_see_the_names_from_the_homes_they_load_from(package: str) -> None:
    module = importlib.import_module(package)
    assert type_checked_homes(package) == module._HOMES
    assert set(module._HOMES) <= set(module.__all__)


@pytest.mark.parametrize("package", PACKAGES)
def test_every_name_a_package_exports_is_its_homes(package: str) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        home = module._HOMES.get(name)
        expected = (
            importlib.import_module(f"{package}.{name}")
            if home is None
            else getattr(importlib.import_module(home), name)
        )
        assert getattr(module, name) is expected


def test_importing_a_stage_imports_none_of_its_modules() -> None:
    stages = ", ".join([*(package for package in PACKAGES if package != "breaker"), "breaker.core.wording"])
    script = (
        f"import sys, {stages}\n"
        "print(sorted(m for m in sys.modules if m.count('.') > 2 and m.startswith('breaker.core.')))\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]"


def test_a_name_listed_under_two_homes_is_refused() -> None:
    with pytest.raises(ValueError, match="'x' is re-exported from both a and b"):
        homes_of({"a": ("x",), "b": ("y", "x")})


def test_a_name_not_listed_is_missing_and_a_listed_one_is_kept() -> None:
    package: dict[str, object] = {"__name__": "somewhere"}
    load = loader(package, {"sqrt": "math"})
    with pytest.raises(AttributeError, match="module 'somewhere' has no attribute 'cos'"):
        load("cos")
    assert load("sqrt")(9.0) == 3.0
    assert "sqrt" in package
