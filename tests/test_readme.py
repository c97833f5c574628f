"""The README and docs/ say what the code does; this keeps them in step.

* The README quotes the defaults of ``breaker/core/config/tables.py`` (``DEFAULTS``, ``PRESETS``)
  and the texts the model sees (a denial; an ask and a notice in docs/), produced here by the
  real core.
* Each figure the README quotes is the one docs/ measured.
* docs/rtb.md's examples, one copy of each table and the README's commands are
  tests/test_docs_examples.py's.

Run with UPDATE_README=1 to rewrite the README's quoted blocks from the code.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from breaker.core.config import DEFAULTS, PRESETS, load_config
from breaker.core.decision import Breaker
from breaker.core.judging.verdicts import Ask, Deny
from breaker.core.reading.fingerprints import ToolCall

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
#: The pages a user reads: the README, docs/ and the architecture map.
USER_PAGES = [README, ROOT / "ARCHITECTURE.md", *DOCS]
#: A README a dsh user reads in five minutes: evidence and design live in docs/.
README_LIMIT = 12 * 1024


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        plain = value.replace("-", "").replace("_", "").replace(".", "").isalnum()
        return value if plain and not value[0].isdigit() else json.dumps(value)
    return json.dumps(value)


def _key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").replace(".", "").isalnum() else f"'{key}'"


def render_defaults() -> str:
    """The defaults as the ``config:`` block a patch would carry."""
    lines = ["```yaml", "- id: repeat-tool-breaker", "  config:"]
    for key, value in DEFAULTS.items():
        if isinstance(value, dict):
            lines.append(f"    {key}:")
            for inner, item in value.items():
                rendered = (
                    "[" + ", ".join(_scalar(v) for v in item) + "]"
                    if isinstance(item, list)
                    else _scalar(item)
                )
                lines.append(f"      {_key(inner)}: {rendered}")
        elif isinstance(value, list):
            lines.append(f"    {key}: [" + ", ".join(_scalar(v) for v in value) + "]")
        else:
            lines.append(f"    {key}: {_scalar(value)}")
    lines.append("```")
    return "\n".join(lines)


def render_presets() -> str:
    """Each preset, as the keys it sets over the defaults."""
    lines = ["```yaml"]
    for name, values in PRESETS.items():
        lines.append(f"# preset: {name}")
        lines.extend(f"{key}: {_scalar(value)}" for key, value in values.items())
    lines.append("```")
    return "\n".join(lines)


def _text_block(text: str) -> str:
    return f"```text\n{text}\n```"


#: What the fetch of loop C returned each time in the README's example.
TIMED_OUT = "curl: (28) Operation timed out after 30001 milliseconds with 0 bytes received\n[exit code: 28]"


def render_denial() -> str:
    """Loop C of the README: the same portal under two host spellings and two timeouts."""
    return denial_of_loop_c()[1]


def denial_of_loop_c() -> tuple[int, str]:
    """The call of loop C that is denied under the defaults, and the denial the model gets."""
    breaker = Breaker(load_config(None))
    hosts = ("open-data.canada.ca", "open.canada.ca")
    for n in range(5):
        command = f"curl -sS --max-time {(60, 30)[n % 2]} -o /tmp/portal.html https://{hosts[n % 2]}/"
        arguments = {"command": command, "description": f"Fetch the portal, try {n + 1}"}
        call = ToolCall("bash", arguments, f"c{n}")
        verdict = breaker.decide("agent", call)
        if isinstance(verdict, Deny):
            return n + 1, _text_block(verdict.message)
        breaker.record_result("agent", call.call_id, TIMED_OUT, {"exitCode": 28})
    raise AssertionError("the fifth call of loop C was not denied")


def _first_denied(loop: str, calls: list[tuple[str, dict[str, Any], str]]) -> int:
    """Which of ``calls`` (a tool, its arguments and what it returns) the defaults deny first."""
    breaker = Breaker(load_config(None))
    for n, (tool, arguments, result) in enumerate(calls):
        call = ToolCall(tool, arguments, f"c{n}")
        if isinstance(breaker.decide("agent", call), Deny):
            return n + 1
        breaker.record_result("agent", call.call_id, result, {"exitCode": 0} if tool == "bash" else None)
    raise AssertionError(f"no call of {loop} was denied")


def stop_of_loop_b() -> int:
    """The call of loop B (``echo hello-repeat``, a new description each time) the defaults deny."""
    descriptions = ("1st", "2nd", "3rd", "4th", "5th")
    calls = [
        ("bash", {"command": "echo hello-repeat", "description": d}, "hello-repeat") for d in descriptions
    ]
    return _first_denied("loop B", calls)


def stop_of_a_read() -> int:
    """The call of loop A the defaults deny when it is a read answering alike each time."""
    return _first_denied("loop A", [("read", {"file_path": "src/app.py"}, "1: def main():")] * 5)


def _local_ask(breaker: Breaker) -> tuple[ToolCall, Ask]:
    """Five different commands against one local URL: only the local target repeats; the fifth
    call and the ask it gets."""
    tails = ("", " | head -c 100", " | wc -c", " | grep -c ok", " | tail -c 10")
    for n, tail in enumerate(tails):
        call = ToolCall("bash", {"command": f"curl -s http://127.0.0.1:8000/health{tail}"}, f"c{n}")
        check = breaker.preflight("agent", call)
        if isinstance(check, Ask):
            return call, check
        breaker.decide("agent", call)
        breaker.record_result("agent", call.call_id, "ok")
    raise AssertionError("the fifth local call was not asked about")


def render_ask() -> str:
    """The ask the operator gets for five different commands against one local URL."""
    return _text_block(_local_ask(Breaker(load_config(None)))[1].reason)


def render_declined_ask() -> str:
    """What the model reads after headless dsh's refusal of that ask (no approval channel)."""
    breaker = Breaker(load_config(None))
    call = _local_ask(breaker)[0]
    refusal = 'Error: tool "bash" requires approval, but no approval channel is available'
    (notice,) = breaker.record_result("agent", call.call_id, refusal)
    return _text_block(notice.text)


def render_notice() -> str:
    """``warnAt: 3``: the third identical read earns a notice."""
    breaker = Breaker(load_config({"warnAt": 3}))
    for n in range(3):
        call = ToolCall("read", {"path": "src/app.py", "offset": 0, "limit": 40}, f"c{n}")
        breaker.decide("agent", call)
        notices = breaker.record_result("agent", call.call_id, "def main(): ...")
        if notices:
            return _text_block(notices[0].text)
    raise AssertionError("warnAt: 3 gave no notice on the third read")


# --- figures: each quoted from one place, which a test keeps the README in step with ---------

DECISION_QUALITY = ROOT / "docs" / "decision-quality.md"
BENCHMARKS = ROOT / "docs" / "benchmarks.md"


def _markdown_table(text: str, header_starts: str) -> list[dict[str, str]]:
    """The rows of the first table whose header row starts with ``header_starts``, keyed by header."""
    lines = text.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith(header_starts))

    def cells(line: str) -> list[str]:
        return [cell.strip() for cell in line.strip().strip("|").split("|")]

    header = cells(lines[start])
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(dict(zip(header, cells(line), strict=True)))
    return rows


def quality_row(system: str) -> dict[str, str]:
    """A row of docs/decision-quality.md's quality table (written by tests/corpus/compare.py)."""
    text = DECISION_QUALITY.read_text(encoding="utf-8")
    rows = _markdown_table(text[text.index("<!-- quality-table -->") :], "| system |")
    return next(row for row in rows if row["system"].startswith(f"this project, {system}"))


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" and {items[-1]}"


def render_quality() -> str:
    """What the README says of the decision quality, every figure a cell of the quality table (one
    figure per folder of real agent runs the table has a column for)."""
    defaults, seed = quality_row("defaults"), quality_row("preset seed")
    sources = [
        c.split(":")[0] for c in defaults if c.startswith("real sessions") and c.endswith("loops caught")
    ]

    def sessions(source: str) -> str:
        loops = int(defaults[f"{source}: loops caught"].split("/")[1])
        return str(loops + int(defaults[f"{source}: ordinary runs stopped"].split(" of ")[1]))

    def caught(row: dict[str, str]) -> str:
        return _and([row[f"{source}: loops caught"] for source in sources])

    def stopped(row: dict[str, str], counts: bool = False) -> str:
        cells = [row[f"{source}: ordinary runs stopped"] for source in sources]
        return _and([cell.split(" of ")[0] for cell in cells] if counts else cells)

    count = {1: "one set", 2: "two sets", 3: "three sets", 4: "four sets"}.get(
        len(sources), f"{len(sources)} sets"
    )
    return (
        f"in {count} of real agent runs ({_and([sessions(source) for source in sources])} sessions) the "
        f"defaults caught {caught(defaults)} labelled loops and stopped {stopped(defaults)} ordinary "
        f"runs (`preset: seed`: {caught(seed)}; {stopped(seed, counts=True)} stopped; "
        "[docs/decision-quality.md](docs/decision-quality.md))."
    )


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def boot_cost(table: str = "| dsh one-shot") -> str:
    """The paired difference a dsh boot costs with the plugin (docs/benchmarks.md, bench/boot.py),
    in the first table whose heading starts with ``table``."""
    rows = _markdown_table(BENCHMARKS.read_text(encoding="utf-8"), table)
    row = next(row for row in rows if row[next(iter(row))].startswith("no tool call"))
    return row["paired difference, median"]


def readme_figures() -> dict[str, str]:
    """Every figure the README's prose states, as the phrase it must read, from its one source:
    the defaults (``breaker/core/config/tables.py``) or a table in docs/ that a measurement writes."""
    exact = DEFAULTS["limits"]["exact"]
    window = DEFAULTS["window"]
    return {
        "the window": f"within its last {window} calls",
        "the cap": f"a {_ordinal(exact)} identical call (the {_ordinal(exact - 1)} repeat) is not run",
        "the cap in the loop table": f"stopped at the {_ordinal(exact)} call by",
        "the cap of a fingerprint": f"would reach its {_ordinal(exact)} occurrence",
        "the denial shown": f"The {_ordinal(denial_of_loop_c()[0])} call of loop C",
        "loop B's stop": f"is a decoy); the {_ordinal(stop_of_loop_b())}:",
        "loop A's read": f"the {_ordinal(stop_of_a_read())} for a read answering alike",
        "the boot cost": f"a dsh boot ~{boot_cost()}",
        "the boot cost on a slower host": f"~{boot_cost('| dsh one-shot on a slower host')} on a slower host",
    }


def _prose(text: str) -> str:
    """The README without code (blocks and spans) and comments, white space folded."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"`[^`]*`", " ", text)
    return re.sub(r"\s+", " ", text)


#: A figure in prose: a quantity with a unit, a fraction, an ordinal, a spelled-out ordinal.
_FIGURE = re.compile(
    r"\b\d+(?:\.\d+)?\s?(?:s|ms|µs|[kKMG]B)\b|\b\d+/\d+\b|\b\d+(?:st|nd|rd|th)\b"
    r"|\b(?:third|fourth|fifth|sixth)\b|\b\d+ of \d+\b",
    re.I,
)


def test_the_readme_stays_short_enough_to_read_in_five_minutes() -> None:
    size = len(README.read_bytes())
    assert size <= README_LIMIT, f"README.md is {size} bytes; move detail to docs/ (at most {README_LIMIT})"


@pytest.mark.parametrize("name", list(readme_figures()))
def test_readme_figure_is_its_source(name: str) -> None:
    phrase = readme_figures()[name]
    assert phrase in re.sub(r"\s+", " ", README.read_text(encoding="utf-8")), (
        f"README: {name} drifted from its source; it must read: {phrase!r}"
    )


def test_readme_states_no_figure_without_a_source() -> None:
    """A figure outside the phrases above and the quoted blocks has no source a test keeps it in
    step with: quote it from one (``readme_figures``), or drop it."""
    prose = _prose(README.read_text(encoding="utf-8"))
    for phrase in readme_figures().values():
        prose = prose.replace(phrase, " ")
    quality = _prose(render_quality())
    prose = prose.replace(quality, " ")
    assert not _FIGURE.findall(prose), f"figures with no source: {_FIGURE.findall(prose)}"


QUOTES = {
    "quality": render_quality,
    "defaults": render_defaults,
    "presets": render_presets,
    "model-denial": render_denial,
    "model-ask": render_ask,
    "declined-ask": render_declined_ask,
    "model-notice": render_notice,
}


def _quoted_block(text: str, name: str) -> str:
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    start = text.index(begin) + len(begin)
    return text[start : text.index(end)].strip("\n")


#: Quoted blocks that stand in a page of docs/, beside what they show, not in the README.
QUOTED_IN = {
    "model-ask": ROOT / "docs" / "configuration.md",
    "declined-ask": ROOT / "docs" / "configuration.md",
    "model-notice": ROOT / "docs" / "escalation.md",
}


@pytest.mark.parametrize("name", list(QUOTES))
def test_readme_quotes_the_code(name: str) -> None:
    expected = QUOTES[name]()
    page = QUOTED_IN.get(name, README)
    text = page.read_text(encoding="utf-8")
    if os.environ.get("UPDATE_README") == "1":
        begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
        start = text.index(begin) + len(begin)
        text = text[:start] + "\n" + expected + "\n" + text[text.index(end) :]
        page.write_text(text, encoding="utf-8")
    assert _quoted_block(text, name) == expected, f"{page.name} block {name!r} drifted from the code"


def test_the_denial_shown_is_what_the_model_would_get_for_loop_c() -> None:
    """The example is a real loop C: both host spellings, and the timeouts, count as one."""
    denial = render_denial()
    assert "net:open.canada.ca/ " in denial and "open-data" not in denial and "[exit code: 28]" in denial
