"""What the worker imports is what the plugin's first boot installs, and no more.

``[tool.dsh-repeat-tool-breaker] worker-dependencies`` (pyproject.toml) names the packages of
``[project].dependencies`` the worker needs: the first boot installs only those before the worker
starts (node-shim/boot/package.js), the rest at the first ``npx --no rtb``. Read from the source (AST): every
module outside ``breaker/rtb`` is one the worker may import, at the top or inside a function.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "breaker"
#: A distribution whose import name differs from its own.
IMPORT_NAMES = {"pyyaml": "yaml"}


def third_party_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return {name for name in names if name != "breaker" and name not in sys.stdlib_module_names}


def distribution(requirement: str) -> str:
    found = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    assert found is not None, requirement
    return re.sub(r"[-_.]+", "-", found[0].lower())


def shim_identity() -> dict[str, list[str]]:
    """The dependency lists as the shim reads them from pyproject.toml (node-shim/boot/package.js)."""
    script = (
        "import('./node-shim/boot/package.js').then((m) => console.log(JSON.stringify(m.packageIdentity())))"
    )
    probe = subprocess.run(["node", "-e", script], cwd=ROOT, capture_output=True, text=True, check=True)
    identity: dict[str, list[str]] = json.loads(probe.stdout)
    return identity


def test_the_first_boot_installs_exactly_what_the_worker_imports() -> None:
    identity = shim_identity()
    assert set(identity["worker"]) | set(identity["later"]) == set(identity["dependencies"])
    assert not set(identity["worker"]) & set(identity["later"])
    worker = {distribution(text) for text in identity["worker"]}
    imported: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        if "rtb" not in path.relative_to(PACKAGE).parts:
            imported |= third_party_imports(path)
    assert imported == {IMPORT_NAMES.get(name, name) for name in worker}


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text))


def test_the_pinned_wheels_meet_the_worker_requirements_one_version_each() -> None:
    """``worker-pins`` (what a first boot unpacks without pip) pins every worker requirement at a
    version its lower bound allows, and each package once; what the wheels themselves require is
    checked when they are unpacked (node-shim/boot/pinned_wheels.py), and pip takes over if unmet."""
    identity = shim_identity()
    pins = dict(pin.split("==") for pin in identity["pinned"])
    assert len(pins) == len(identity["pinned"])
    pinned = {distribution(name): version for name, version in pins.items()}
    for requirement in identity["worker"]:
        form = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)>=([\d.]+)", requirement)
        assert form is not None, f"{requirement}: this check reads name>=version only"
        name = distribution(form[1])
        assert name in pinned, f"{requirement} is not pinned"
        assert _version(pinned[name]) >= _version(form[2]), f"{name}=={pinned[name]}: {requirement}"
    later = {distribution(text) for text in identity["later"]}
    assert not later & set(pinned), "only the worker's packages are pinned"
