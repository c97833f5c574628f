"""The Node shim shows its parts: its face and entry points at the top (``index.js``, ``setup.js``,
``rtb.js``), its parts in folders stacked in the order they come into play: ``shared`` (what all
use), ``boot`` (the worker's environment, found or prepared), ``worker`` (the worker's process and
its pipe), ``call`` (what each tool call does on its way). A part imports only its own folder and
the parts before it, never an entry point; each folder's README says what it does and may import.

Read from the source (tests/jsmodules.py): static, dynamic and re-exporting imports, the worker
thread's URL and JSDoc ``import()`` types all count.
"""

from __future__ import annotations

import shutil
from pathlib import Path, PurePosixPath

from tests.jsmodules import relative_imports

SHIM = Path(__file__).resolve().parent.parent / "node-shim"
#: The part folders, each importing only itself and those before it.
PARTS = ("shared", "boot", "worker", "call")
#: The plugin's face and its entry points: the dsh plugin, `npm run setup`, the `rtb` bin.
ENTRY_POINTS = frozenset({"index.js", "setup.js", "rtb.js"})


def module_problems(shim: Path) -> list[str]:
    """Every import of a module in a part folder of ``shim`` that its place may not make."""
    problems = []
    for rank, part in enumerate(PARTS):
        for path in sorted((shim / part).glob("*.js")):
            name = path.relative_to(shim).as_posix()
            for specifier in relative_imports(path.read_text(encoding="utf-8")):
                target = PurePosixPath(part, specifier)
                resolved = PurePosixPath(*_normalised(target.parts))
                folder = resolved.parts[0] if len(resolved.parts) > 1 else ""
                if folder == "":
                    problems.append(f"{name} imports {resolved}, an entry point")
                elif folder not in PARTS:
                    problems.append(f"{name} imports {resolved}, outside the parts")
                elif PARTS.index(folder) > rank:
                    problems.append(f"{name} ({part}) imports {resolved}, of {folder}, a later part")
    return sorted(problems)


def _normalised(parts: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for part in parts:
        if part == "..":
            if out:
                out.pop()
            else:
                out.append("..")
        elif part != ".":
            out.append(part)
    return out


def test_the_shim_top_holds_its_entry_points_and_two_to_five_part_folders() -> None:
    files = {path.name for path in SHIM.iterdir() if path.is_file()}
    folders = {path.name for path in SHIM.iterdir() if path.is_dir()} - {"test", "node_modules"}
    assert files == ENTRY_POINTS
    assert len(files) <= 4
    assert folders == set(PARTS)
    assert 2 <= len(PARTS) <= 5


def test_each_part_folder_opens_saying_what_it_does_and_what_it_may_import() -> None:
    for rank, part in enumerate(PARTS):
        readme = (SHIM / part / "README.md").read_text(encoding="utf-8")
        paragraph = readme.split("\n\n")[1]
        assert "imports" in paragraph, f"{part}/README.md does not say what it may import"
        for earlier in PARTS[:rank]:
            assert f"`{earlier}/`" in paragraph, (
                f"{part}/README.md does not name {earlier}/, which it may import"
            )


def test_every_part_imports_only_itself_and_the_parts_before_it() -> None:
    assert module_problems(SHIM) == []


def test_the_part_check_catches_imports_planted_against_the_order(tmp_path: Path) -> None:
    copy = tmp_path / "node-shim"
    shutil.copytree(SHIM, copy, ignore=shutil.ignore_patterns("test", "node_modules", "*.py"))
    assert module_problems(copy) == []
    planted = {
        "worker/bridge.js": "import { Journal } from '../call/journal.js';\n",
        "shared/stderr.js": "/** @param {import('../worker/bridge.js').WorkerBridge} bridge */\n",
        "call/ahead.js": "export { apply } from '../index.js';\n",
        "boot/cache.js": "const later = () => import('../call/arguments.js');\n",
    }
    for module, line in planted.items():
        path = copy / module
        path.write_text(path.read_text(encoding="utf-8") + line)
    assert module_problems(copy) == [
        "boot/cache.js (boot) imports call/arguments.js, of call, a later part",
        "call/ahead.js imports index.js, an entry point",
        "shared/stderr.js (shared) imports worker/bridge.js, of worker, a later part",
        "worker/bridge.js (worker) imports call/journal.js, of call, a later part",
    ]
