"""ARCHITECTURE.md's claim on module sizes holds: no module of ``breaker/`` is over ~400 lines
unless the paragraph that makes the claim names it (and so says which concept needs it)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.jsmodules import functions

ROOT = Path(__file__).resolve().parent.parent
#: ~400, with the slack "about" gives.
LIMIT = 440


def test_every_module_over_the_limit_is_named_with_its_concept() -> None:
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    start = text.index("No module of `breaker/` is over ~400 lines")
    paragraph = text[start : text.index("\n\n", start)]
    named = set(re.findall(r"`((?:core|rtb)/\w+\.py|\w+\.py)` \(~\d+:", paragraph))
    sizes = {
        path.relative_to(ROOT / "breaker").as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in (ROOT / "breaker").rglob("*.py")
    }
    assert named, "the paragraph names its exceptions as `module.py` (~lines: concept)"
    assert named <= sizes.keys(), f"named but not in breaker/: {named - sizes.keys()}"
    over = {module: lines for module, lines in sizes.items() if lines > LIMIT and module not in named}
    assert over == {}, "over ~400 lines and not named in ARCHITECTURE.md with the concept that needs it"


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


#: Functions past ~120 lines read as several concepts in one (the brief's rule); tests aside.
FUNCTION_LIMIT = 120


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
