"""``rtb``'s parts stay in the order a replay runs: ``read`` the logs, ``replay`` them, ``show`` the
report; ``config`` (which configuration, and ``rtb check``) stands beside them on ``read``.

Each part imports the core and only the parts its ``__init__`` names; none imports the command
line above them (``cli``, ``inputs``, ``replayrun``), which may import any. Read from the source
(AST) with ``tests/test_layers.py``'s import reader, so an import is caught wherever it sits.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

from tests.test_layers import PACKAGE, imports_of

RTB = PACKAGE / "rtb"
#: Each part and the parts it may import (besides itself and the core), in the order a replay runs.
PARTS: dict[str, frozenset[str]] = {
    "read": frozenset(),
    "config": frozenset({"read"}),
    "replay": frozenset({"read"}),
    "show": frozenset({"read", "replay"}),
}
#: The command line and what it drives, above every part.
TOP = frozenset({"__init__.py", "cli.py", "inputs.py", "replayrun.py"})


def rtb_modules(rtb: Path) -> dict[str, Path]:
    """Every module of the rtb package at ``rtb``, by its dotted name."""
    names = {}
    for path in sorted(rtb.rglob("*.py")):
        parts = ("breaker", "rtb", *path.relative_to(rtb).with_suffix("").parts)
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def part_of(module: str) -> str | None:
    """The part ``module`` belongs to, "" for the modules at rtb's top, None outside rtb."""
    parts = module.split(".")
    if parts[:2] != ["breaker", "rtb"]:
        return None
    return parts[2] if len(parts) > 2 and parts[2] in PARTS else ""


def part_problems(rtb: Path) -> list[str]:
    """Every import of a module under ``rtb`` that its part may not make."""
    modules = rtb_modules(rtb)
    problems = []
    for module, path in modules.items():
        own = part_of(module)
        if not own:
            continue
        for imported in sorted(imports_of(ast.parse(path.read_text(encoding="utf-8")))):
            theirs = part_of(imported)
            if theirs is None or theirs == own:
                continue
            if theirs == "":
                problems.append(f"{module} ({own}) imports {imported}, the command line above the parts")
            elif theirs not in PARTS[own]:
                problems.append(f"{module} ({own}) imports {imported}, of {theirs}")
    return problems


def test_rtb_is_the_command_line_over_two_to_five_part_folders() -> None:
    entries = {path.name for path in RTB.iterdir() if path.name != "__pycache__"}
    assert entries == TOP | PARTS.keys()
    assert len(TOP) <= 4
    assert 2 <= len(PARTS) <= 5
    assert all((RTB / part / "__init__.py").is_file() for part in PARTS)


def test_each_part_opens_saying_what_it_does_and_what_it_may_import() -> None:
    for part, allowed in PARTS.items():
        doc = ast.get_docstring(ast.parse((RTB / part / "__init__.py").read_text(encoding="utf-8")))
        assert doc is not None, part
        assert "imports" in doc, f"{part}/__init__.py does not say what it may import"
        for other in allowed:
            assert f"``{other}``" in doc, f"{part}/__init__.py does not name {other}, which it may import"


def test_every_rtb_part_imports_only_the_parts_before_it() -> None:
    assert part_problems(RTB) == []


def test_the_part_check_catches_an_import_planted_against_the_order(tmp_path: Path) -> None:
    copy = tmp_path / "rtb"
    shutil.copytree(RTB, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert part_problems(copy) == []
    planted = {
        "read/events.py": "from breaker.rtb.show import shown\n",
        "replay/sweep.py": "def late() -> None:\n    import breaker.rtb.cli\n",
        "config/whichconfig.py": "from breaker.rtb.replay.replayer import Replayer\n",
    }
    for module, line in planted.items():
        path = copy / module
        path.write_text(path.read_text(encoding="utf-8") + "\n\n" + line)
    assert part_problems(copy) == [
        "breaker.rtb.config.whichconfig (config) imports breaker.rtb.replay.replayer, of replay",
        "breaker.rtb.read.events (read) imports breaker.rtb.show.shown, of show",
        "breaker.rtb.replay.sweep (replay) imports breaker.rtb.cli, the command line above the parts",
    ]
