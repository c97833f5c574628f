"""Every text that tells a user to run `rtb` through npx says `npx --no rtb`: `rtb` is this
package's `bin`, not a package of ours on the npm registry, so a bare `npx rtb` run outside the
profile would offer to fetch and run a stranger's package of that name. `--no` (npm 7+) refuses to
install, so only the local bin runs. The README, docs/ (CHANGELOG.md keeps its history as written),
the shim's messages and the Python package's and the compat scripts' texts are read.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: npx or npm exec, its options, then `rtb`, within one line and one code span.
RUN_RTB = re.compile(r"\b(?:npx|npm exec)\b([^`\n|]*?)(?<![\w-])rtb\b")
#: The option `--no` among them, on its own (in a command line or a Python list of arguments).
NO = re.compile(r"(?<![\w-])--no(?![\w-])")


def _without_no(text: str) -> list[str]:
    """The npx runs of `rtb` in ``text`` whose options do not include `--no`."""
    return [found[0] for found in RUN_RTB.finditer(text) if not NO.search(found[1])]


def _user_texts() -> list[Path]:
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    shim = sorted(path for path in (ROOT / "node-shim").rglob("*.js") if "test" not in path.parts)
    python = sorted([*(ROOT / "breaker").rglob("*.py"), *(ROOT / "compat").glob("*.py")])
    return [*docs, *shim, *python]


def test_a_bare_npx_rtb_is_found_and_npx_no_rtb_is_not() -> None:
    said = "run `npx rtb check` or `npm exec rtb -- replay`; `npx --no rtb check`, `npx tsc`"
    assert _without_no(said) == ["npx rtb", "npm exec rtb"]
    prefixed = 'npx --no --prefix "${DSH_HOME:-$HOME/.dsh}/profiles/<name>" rtb replay'
    assert _without_no(prefixed) == []
    assert _without_no('["npx", "--no", "rtb"] and ["npx", "--no-color", "rtb"]') == [
        'npx", "--no-color", "rtb'
    ]


def test_no_user_facing_text_says_npx_rtb_without_no() -> None:
    texts = _user_texts()
    assert ROOT / "README.md" in texts and ROOT / "node-shim" / "worker" / "start.js" in texts
    assert not any(path.name == "CHANGELOG.md" for path in texts)
    bare = {
        f"{path.relative_to(ROOT)}: {run}"
        for path in texts
        for run in _without_no(path.read_text(encoding="utf-8"))
    }
    assert not bare, "say `npx --no rtb` (npm 7+: never fetch a package named rtb):\n" + "\n".join(
        sorted(bare)
    )
