"""Every file of the shim or of ``breaker`` that the project's text names by its path is there: a
file moved to a part folder takes every mention of it along (CHANGELOG.md, which tells what was,
aside)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: A path from the repository's root to a module of the shim or of the Python package.
#: The kinds of file that name others: docs, code, scripts, manifests.
TEXT = {".md", ".py", ".js", ".mjs", ".sh", ".toml", ".json", ".yml"}
NAMED = re.compile(r"(?<![\w./-])((?:node-shim|breaker)/[\w./-]+\.(?:js|mjs|py))\b")


def named_paths(text: str) -> set[str]:
    """The shim and package paths ``text`` names (a glob such as ``node-shim/*.js`` is no path)."""
    return {path for path in NAMED.findall(text) if "*" not in path}


def test_every_shim_or_package_path_the_project_names_exists() -> None:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    missing = {}
    for name in listed.splitlines():
        path = ROOT / name
        if name == "CHANGELOG.md" or path.suffix not in {
            ".md",
            ".py",
            ".js",
            ".mjs",
            ".sh",
            ".toml",
            ".json",
            ".yml",
        }:
            continue
        if not path.is_file():  # listed, but deleted in the working tree
            continue
        gone = {
            named for named in named_paths(path.read_text(encoding="utf-8")) if not (ROOT / named).exists()
        }
        if gone:
            missing[name] = sorted(gone)
    assert missing == {}


def test_a_path_is_read_from_prose_code_and_markup_but_not_from_a_glob_or_a_longer_path() -> None:
    text = (
        "see node-shim/worker/transport.js), `breaker/rtb/cli.py`; '../node-shim/index.js'\n"
        "files: node-shim/*.js; other/node-shim/x.js; breaker/core/config/tables.py:112"
    )
    assert named_paths(text) == {
        "node-shim/worker/transport.js",
        "breaker/rtb/cli.py",
        "breaker/core/config/tables.py",
    }
