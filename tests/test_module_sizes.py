"""ARCHITECTURE.md's claim on module sizes holds: no module of ``breaker/`` is over ~400 lines
and no function of it over ~120 (a concept that outgrows one module becomes a package of them);
the shim's files and functions keep the same bounds."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.jsmodules import functions

ROOT = Path(__file__).resolve().parent.parent
#: ~400, with the slack "about" gives.
LIMIT = 440
#: Functions past ~120 lines read as several concepts in one (the brief's rule); tests aside.
FUNCTION_LIMIT = 120


def _claim() -> str:
    """The paragraph of ARCHITECTURE.md that states the bounds."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    start = text.index("No module of `breaker/` is over ~400 lines")
    return text[start : text.index("\n\n", start)]


def test_architecture_states_the_bounds_this_test_holds() -> None:
    paragraph = " ".join(_claim().split())
    assert f"any module over {LIMIT} lines and any function over {FUNCTION_LIMIT} lines" in paragraph


def test_no_module_of_breaker_is_over_the_limit() -> None:
    sizes = {
        path.relative_to(ROOT / "breaker").as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in (ROOT / "breaker").rglob("*.py")
    }
    assert sizes, "breaker/ has its modules"
    assert {module: lines for module, lines in sizes.items() if lines > LIMIT} == {}


def python_function_sizes(source: str) -> dict[str, int]:
    """``{"line name": lines}`` of every function and method of ``source``, from its decorators to
    its last line (a nested one counted in its outer one too)."""
    sizes = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
            sizes[f"{first} {node.name}"] = (node.end_lineno or node.lineno) - first + 1
    return sizes


def test_no_function_of_breaker_is_past_120_lines() -> None:
    long = {
        f"{path.relative_to(ROOT / 'breaker').as_posix()}:{where}": lines
        for path in sorted((ROOT / "breaker").rglob("*.py"))
        for where, lines in python_function_sizes(path.read_text(encoding="utf-8")).items()
        if lines > FUNCTION_LIMIT
    }
    assert long == {}


def test_the_python_function_measure_counts_decorators_bodies_and_nested_functions() -> None:
    source = "\n".join(
        [
            "@cache",  # 1
            "def outer(a):",
            "    def inner(b):",  # 3
            "        return b",
            "    return inner(a)",  # 5
            "class Box:",
            "    async def method(self):",  # 7
            "        pass",
        ]
    )
    assert python_function_sizes(source) == {"1 outer": 5, "3 inner": 2, "7 method": 2}


def test_no_file_of_the_node_shim_is_past_450_lines() -> None:
    """The shim's modules and their tests: one concept each, none past 450 lines."""
    shim = ROOT / "node-shim"
    sizes = {
        path.relative_to(shim).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in [*shim.rglob("*.js"), *shim.rglob("*.py")]
        if "node_modules" not in path.parts
    }
    assert sizes, "node-shim/ has its modules"
    assert {name: lines for name, lines in sizes.items() if lines > 450} == {}


def test_no_function_of_the_node_shim_is_past_120_lines() -> None:
    """Every function of the shim's modules (its tests aside), nested ones counted in their outer
    one: a hook, the boot or the wiring of ``apply`` is each its own named part."""
    shim = ROOT / "node-shim"
    long = {
        f"{path.relative_to(shim).as_posix()}:{function.first} {function.name}": function.lines
        for path in sorted(shim.rglob("*.js"))
        if not {"test", "node_modules"} & set(path.relative_to(shim).parts)
        for function in functions(path.read_text(encoding="utf-8"))
        if function.lines > FUNCTION_LIMIT
    }
    assert long == {}


def test_the_function_scanner_measures_each_kind_of_function_past_strings_regexes_and_templates() -> None:
    source = "\n".join(
        [
            "export function outer(a) {",  # 1
            "  const s = '}'; const t = `${a ? '{' : `}`}`; const r = /[}{]\\/}/g;",
            "  const inner = (b) => {",  # 3
            "    return b / 2; // }",
            "  };",  # 5
            "  /* } */",
            "  return inner(a);",
            "}",  # 8
            "class Box {",
            "  method(x) {",  # 10
            "    if (x) { return { k: x }; }",
            "  }",  # 12
            "}",
        ]
    )
    found = [(function.name, function.first, function.lines) for function in functions(source)]
    assert sorted(found) == [("inner", 3, 3), ("method", 10, 3), ("outer", 1, 8)]


#: ~450 for the rest of the tree, with the slack "about" gives.
REST_LIMIT = 460


def test_no_file_of_the_tests_compat_or_bench_is_past_460_lines() -> None:
    """The tests, the compat boots and the benchmarks keep the brief's ~450 lines a file too: a
    test module past it is split by the behaviours it pins (tests/test_acceptance.py and
    tests/test_acceptance_local.py, the seed's list case by case)."""
    sizes = {
        path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for folder in ("tests", "compat", "bench")
        for path in (ROOT / folder).rglob("*")
        if path.suffix in (".py", ".mjs", ".js", ".sh") and "node_modules" not in path.parts
    }
    assert len(sizes) > 100
    assert {name: lines for name, lines in sizes.items() if lines > REST_LIMIT} == {}
