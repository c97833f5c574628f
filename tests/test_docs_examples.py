"""What the docs show a user, kept true: docs/rtb.md's `$ rtb …` examples are what `rtb` prints
for them; every table stands in one place only and the README stays a plugin README (size, no
internal words, no commit hashes or dates); the README's commands. tests/test_readme.py keeps the
README's quoted defaults, texts and figures in step with the code."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
from pathlib import Path

import pytest

from breaker.rtb.cli import main as rtb_main
from tests.test_readme import README, README_LIMIT, ROOT, USER_PAGES, _quoted_block

# --- docs/rtb.md: every `$ rtb …` example is what rtb prints ---------------------------------


def _rtb_examples(page: Path) -> list[tuple[str, str]]:
    """(command line, output) of each ```text block that starts with `$ rtb `."""
    examples = []
    for block in re.findall(r"```text\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S):
        first, _, rest = block.partition("\n")
        if first.startswith("$ rtb "):
            examples.append((first[2:], rest))
    return examples


def _run_rtb(command: str) -> str:
    argv = shlex.split(command)[1:]
    out = io.StringIO()
    cwd = Path.cwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            rtb_main(argv)
    finally:
        os.chdir(cwd)
    return out.getvalue()


RTB_EXAMPLES = [
    example for example in _rtb_examples(ROOT / "docs" / "rtb.md") if "tests/corpus" not in example[0]
]


def test_docs_rtb_has_examples_to_check() -> None:
    assert len(RTB_EXAMPLES) >= 3


@pytest.mark.parametrize(("command", "output"), RTB_EXAMPLES, ids=[c for c, _ in RTB_EXAMPLES])
def test_docs_rtb_example_is_what_rtb_prints(command: str, output: str) -> None:
    """The shown lines come in this order; a line `...` stands for lines left out."""
    printed = [line.rstrip() for line in _run_rtb(command).splitlines()]
    shown = [line.rstrip() for line in output.rstrip("\n").splitlines()]
    chunks: list[list[str]] = [[]]
    for line in shown:
        if line == "...":
            chunks.append([])
        else:
            chunks[-1].append(line)
    at = 0
    for n, chunk in enumerate(chunks):
        if n == 0:
            found = 0 if printed[: len(chunk)] == chunk else -1
        else:
            starts = range(at, len(printed) - len(chunk) + 1)
            found = next((i for i in starts if printed[i : i + len(chunk)] == chunk), -1)
        assert found >= 0, f"docs/rtb.md: `{command}` no longer prints:\n" + "\n".join(chunk)
        at = found + len(chunk)


# --- one copy of each table; a README a user reads ------------------------------------------

_SEPARATOR = re.compile(r"^\|[\s:|-]+\|$")


def _table_rows(page: Path) -> list[str]:
    rows = []
    for line in page.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line.startswith("|") and line.endswith("|") and not _SEPARATOR.match(line):
            rows.append(re.sub(r"\s+", " ", line))
    return rows


def test_every_table_row_stands_in_one_page_only() -> None:
    """A table lives in one page and the others link to it: no row is printed twice."""
    seen: dict[str, Path] = {}
    copies = []
    for page in USER_PAGES:
        headers = set()
        for row in _table_rows(page):
            cells = [cell.strip() for cell in row.strip("|").split("|")]
            if len(cells) < 2 or row in headers:
                continue
            if row in seen and seen[row] != page:
                copies.append(f"{page.name} and {seen[row].name}: {row[:100]}")
            seen.setdefault(row, page)
            headers.add(row)
    header_like = [c for c in copies if "| --- |" not in c]
    assert not header_like, "rows in two pages:\n" + "\n".join(header_like)


def test_readme_says_where_the_test_command_finds_the_real_agent_runs() -> None:
    """Two thirds of the tests read ../shared; the README says so where it gives the test command."""
    text = README.read_text(encoding="utf-8")
    development = text[text.index(_SHARED_NAMED_IN) :]
    development = development[: development.find("\n## ", 1)]
    assert "npm test" in development and "../shared" in development


# --- the README's commands: run verbatim by compat/readme_install.py; any dsh home --------------

#: The marked shell blocks compat/readme_install.py runs as written, in this order.
RUN_AS_WRITTEN = ("install", "try", "replay", "uninstall")
_SH_BLOCK = re.compile(r"```sh\n(.*?)```", re.S)
#: dsh's home as a command must name it: DSH_HOME when set, else ~/.dsh.
DSH_HOME = '"${DSH_HOME:-$HOME/.dsh}'


def test_the_readme_marks_the_blocks_its_install_check_runs() -> None:
    text = README.read_text(encoding="utf-8")
    for name in RUN_AS_WRITTEN:
        block = _quoted_block(text, name)
        assert block.startswith("```sh\n") and block.endswith("```"), f"{name}: not one ```sh block"
    assert "npm run install-dsh" in _quoted_block(text, "install")
    assert "npm run demo" in _quoted_block(text, "try"), "trying it is the demo, one of the two commands"
    settings = _quoted_block(text, "settings")
    assert settings.startswith("```yaml\n") and "baseURL: http://127.0.0.1:" in settings


def test_the_readme_has_two_set_up_commands_the_demo_and_the_tests() -> None:
    """Development shows exactly `npm run demo` (the main job on a built-in example, also how to
    try it without a key) and `npm test`; no other `npm run` script but the install's is named."""
    text = README.read_text(encoding="utf-8")
    development = text[text.index("## Development") :]
    commands = [line.split("#")[0].strip() for line in _SH_BLOCK.findall(development)[0].splitlines()]
    assert commands == ["npm run demo", "npm test"]
    assert set(re.findall(r"npm run ([\w-]+)", text)) == {"install-dsh", "demo"}


def test_every_command_the_readme_shows_works_with_any_dsh_home() -> None:
    """A command naming dsh's home says ``"${DSH_HOME:-$HOME/.dsh}``, never ``~/.dsh`` alone."""
    wrong = []
    for block in _SH_BLOCK.findall(README.read_text(encoding="utf-8")):
        for line in block.splitlines():
            if re.search(r"(~|\$HOME|\$\{HOME\})/\.dsh", line.replace(DSH_HOME, "")):
                wrong.append(line)
    assert not wrong, "commands that ignore DSH_HOME:\n" + "\n".join(wrong)


def test_readme_is_a_plugin_readme() -> None:
    size = len(README.read_bytes())
    assert size <= README_LIMIT, f"README.md is {size} bytes, over {README_LIMIT}"
    text = README.read_text(encoding="utf-8")
    for section in (
        "## Requirements",
        "## Install",
        "## Configure",
        "## What the model sees",
        "## Troubleshooting",
        "## Uninstall",
        "## Development",
        "## License",
    ):
        assert section in text, f"README.md has no {section!r} section"


#: Words a user cannot resolve, and records of how the project was made: they belong in git.
_INTERNAL = [
    (re.compile(r"\bthe seed\b|\bseed's\b|seed-like|\bseed README", re.I), "the seed"),
    (re.compile(r"\.\./shared"), "../shared"),
    (re.compile(r"\b20\d\d-\d\d-\d\d\b"), "a date"),
    (re.compile(r"\b\d\d:\d\d UTC\b"), "a time of day"),
    (re.compile(r"\bissue \d+\b", re.I), "an issue number"),
    (re.compile(r"\|\s*(met|\*\*missed\*\*|missed)\b[^|]*\|\s*$"), "a met/missed verdict"),
    # our own commit hashes, in backticks or parentheses (a third party's pinned source, cited as
    # `repo @ hash`, is a reference and stays)
    (re.compile(r"(?<!@ )[`(](?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,12}[`)]"), "a commit hash"),
]


#: Where the README may name ``../shared``: beside the test command, which reads the real agent runs there.
_SHARED_NAMED_IN = "## Development"


@pytest.mark.parametrize("page", USER_PAGES, ids=lambda page: page.name)
def test_user_pages_hold_no_internal_words(page: Path) -> None:
    found = []
    section = ""
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        section = line if line.startswith("## ") else section
        for pattern, what in _INTERNAL:
            if what == "../shared" and page == README and section == _SHARED_NAMED_IN:
                continue
            if pattern.search(line):
                found.append(f"{page.name}:{number}: {what}: {line.strip()[:100]}")
    assert not found, "\n".join(found)


def test_root_has_license_and_changelog() -> None:
    license_text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "MIT License" in license_text
    package = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))
    assert package["license"] == "MIT"
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "## Unreleased" in changelog
    assert f"## {package['version']}" in changelog, "CHANGELOG.md has no entry for the package version"
