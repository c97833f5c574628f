"""The three layers stay apart: the pure core, the worker's I/O shell, and the offline tool ``rtb``;
inside the core, the stages a call passes through import only the stages before them.

Read from the source (AST), so an import is caught wherever it sits: at the top, inside a
function, or under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "breaker"

#: Modules that reach outside the process, read a clock, start threads or talk the wire format:
#: the worker shell's business, never the core's.
IO_MODULES = frozenset(
    {
        "anyio",
        "asyncio",
        "concurrent",
        "contextlib",
        "datetime",
        "io",
        "logging",
        "msgpack",
        "multiprocessing",
        "os",
        "pathlib",
        "random",
        "secrets",
        "select",
        "selectors",
        "shutil",
        "signal",
        "socket",
        "subprocess",
        "sys",
        "tempfile",
        "threading",
        "time",
        "uuid",
    }
)
#: What the core may use of an I/O module: ``sys.intern`` shares equal strings, and does no I/O.
ALLOWED_IO_NAMES = {"sys": frozenset({"intern"})}
SHELL_MODULES = frozenset(
    {
        "breaker.worker",
        "breaker.protocol",
        "breaker.frames",
        "breaker.ops",
        "breaker.audit",
        "breaker.lifeline",
    }
)


#: The core's stage folders in the order a call passes them: read, remembered, judged, worded,
#: decided. A module imports from its own stage or an earlier one; ``config`` (below every stage,
#: a package of its own) imports none, and the façade ``decision`` (above them all) any.
STAGES = ("reading", "history", "judging", "wording", "deciding")
CORE = PACKAGE / "core"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports_of(tree: ast.Module) -> set[str]:
    """Every module ``tree`` imports; ``from package import module`` counts as the module."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None and not node.level:
            submodules = {f"{node.module}.{alias.name}" for alias in node.names} & MODULES.keys()
            found.update(submodules or {node.module})
    return found


def names_used_from(tree: ast.Module, module: str) -> set[str]:
    """What ``tree`` takes from ``module``: ``from module import x`` and ``module.x`` both give x."""
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == module and not node.level:
            used.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == module:
            used.add(node.attr)
    return used


def layer_problems(name: str, source: str) -> list[str]:
    """Why module ``name`` with text ``source`` breaks its layer's rules (empty when it does not)."""
    tree = ast.parse(source)
    problems = []
    for imported in sorted(imports_of(tree)):
        top = imported.partition(".")[0]
        if name.startswith("breaker.core"):
            if imported in SHELL_MODULES or imported.startswith("breaker.rtb"):
                problems.append(f"{name} (core) imports {imported}")
            elif top in IO_MODULES:
                allowed = ALLOWED_IO_NAMES.get(top)
                if allowed is None or imported != top or names_used_from(tree, top) - allowed:
                    problems.append(f"{name} (core) imports {imported}, which does I/O")
        elif name in SHELL_MODULES and imported.startswith("breaker.rtb"):
            problems.append(f"{name} (worker shell) imports {imported}")
    return problems


def import_graph() -> dict[str, set[str]]:
    return {
        name: imports_of(ast.parse(path.read_text(encoding="utf-8"))) & MODULES.keys()
        for name, path in MODULES.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each import cycle met in a depth-first walk, as the modules along it (first repeated last)."""
    found: list[list[str]] = []
    finished: set[str] = set()
    for start in sorted(graph):
        if start in finished:
            continue
        path = [start]
        branches = [iter(sorted(graph[start]))]
        while branches:
            following = next(branches[-1], None)
            if following is None:
                branches.pop()
                finished.add(path.pop())
            elif following in path:
                found.append([*path[path.index(following) :], following])
            elif following not in finished:
                path.append(following)
                branches.append(iter(sorted(graph[following])))
    return found


def stage_of(module: str) -> int | None:
    """Where ``module`` sits in the core: -1 for ``config`` and its modules, a stage's index,
    ``len(STAGES)`` for the façade and the core package; None outside the core."""
    parts = module.split(".")
    if parts[:2] != ["breaker", "core"]:
        return None
    if parts[2:3] == ["config"]:
        return -1
    return STAGES.index(parts[2]) if len(parts) > 2 and parts[2] in STAGES else len(STAGES)


def stage_problems(graph: dict[str, set[str]]) -> list[str]:
    """Every import in ``graph`` (module -> modules it imports) from a later stage of the core."""
    problems = []
    for module, imported in sorted(graph.items()):
        own = stage_of(module)
        if own is None:
            continue
        for other in sorted(imported):
            theirs = stage_of(other)
            if theirs is not None and theirs > own:
                problems.append(f"{module} imports {other}, a later stage")
    return problems


def test_the_core_is_its_stage_folders_config_and_the_facade() -> None:
    entries = {path.name for path in CORE.iterdir() if path.name != "__pycache__"}
    assert entries == {"__init__.py", "config", "decision.py", *STAGES}
    assert all((CORE / stage).is_dir() for stage in ("config", *STAGES))
    assert len(STAGES) <= 6


def test_every_core_module_imports_only_its_own_stage_or_earlier_ones() -> None:
    assert stage_problems(import_graph()) == []


def test_the_stage_check_rejects_an_import_from_a_later_stage() -> None:
    graph = {
        "breaker.core.reading.urls": {"breaker.core.config"},
        "breaker.core.history.window": {"breaker.core.reading.urls", "breaker.core.wording"},
        "breaker.core.judging.verdicts": {"breaker.core.history"},
        "breaker.core.config": {"breaker.core.reading.urls"},
        "breaker.core.config.checks": {"breaker.core.config.tables", "breaker.core.history"},
        "breaker.core.configured": {"breaker.core.config.tables", "breaker.core.deciding"},
        "breaker.core.deciding.rules": {"breaker.core.decision", "breaker.core.wording.messages"},
        "breaker.core.decision": {"breaker.core.deciding", "breaker.core.reading"},
        "breaker.rtb.cli": {"breaker.core.decision"},
    }
    assert stage_problems(graph) == [
        "breaker.core.config imports breaker.core.reading.urls, a later stage",
        "breaker.core.config.checks imports breaker.core.history, a later stage",
        "breaker.core.deciding.rules imports breaker.core.decision, a later stage",
        "breaker.core.history.window imports breaker.core.wording, a later stage",
    ]


def test_the_core_imports_neither_the_shell_nor_rtb_nor_any_io() -> None:
    problems = [
        problem
        for name, path in MODULES.items()
        for problem in layer_problems(name, path.read_text(encoding="utf-8"))
    ]
    assert problems == []


def test_no_module_imports_another_that_imports_it_back() -> None:
    assert cycles(import_graph()) == []


def test_the_layer_check_rejects_io_and_outer_layers_in_the_core() -> None:
    for source in (
        "import os\n",
        "import time\n",
        "from threading import Thread\n",
        "import sys\nsys.stdout.write('x')\n",
        "from sys import stdout\n",
        "import msgpack\n",
        "from breaker import worker\n",
        "from breaker.protocol import Request\n",
        "from breaker.rtb.read.sessions import Session\n",
        "def late() -> None:\n    import anyio\n",
    ):
        assert layer_problems("breaker.core.history.window", source), source
    assert layer_problems("breaker.worker", "from breaker.rtb import cli\n")


def test_the_layer_check_lets_the_core_intern_strings_and_outer_layers_do_io() -> None:
    assert layer_problems("breaker.core.reading.fingerprints", "import sys\nsys.intern('x')\n") == []
    assert layer_problems("breaker.rtb.cli", "import os\nimport sys\n") == []
    assert layer_problems("breaker.worker", "import anyio\nfrom breaker.core import decision\n") == []


def test_the_cycle_check_finds_mutual_and_longer_cycles() -> None:
    assert cycles({"a": {"b"}, "b": {"a"}}) == [["a", "b", "a"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []
