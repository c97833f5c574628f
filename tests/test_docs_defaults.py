"""Every default a page states is the one in ``breaker/core/config/tables.py``'s table (``DEFAULTS``).

The README quotes the whole table (tests/test_readme.py renders it); the other pages state a
default in passing, in a few forms, each read here and checked against the table:

* ``window (default 16 calls)``, ``(`exclude`, default `todo_write`)``, ``guardTimeoutMs`` (default
  500 ms): a key named before ``(default X`` or ``, default X`` on the same line;
* ``under `localHosts: ask` (the default)``, ```failLimit: 3`, the default``: a key and its value;
* ```state-aware` (default)``: a value, of the key named before it on the line (else of any key
  whose choices hold it);
* ``the defaults (window 16, caps 5, `failLimit: 3`)`` or ``the defaults … with window 16, …``: a
  list of what the defaults are;
* ```key` (…, off by default)``: the key is null by default;
* ``the default caps (5)``, ```exact`, … capped at 5``: the caps of ``exact``, ``cmd``, ``net``
  and ``sink``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

import pytest

from breaker.core.config import tables
from breaker.core.config.tables import DEFAULTS

ROOT = Path(__file__).resolve().parent.parent
#: The pages a user reads (the CHANGELOG records what was, and is not read here).
PAGES = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *sorted((ROOT / "docs").glob("*.md"))]
#: The caps a bare "caps N" speaks of.
CAPPED = ("exact", "cmd", "net", "sink")
#: Which keys each choice value may belong to (from the Literal types of the configuration's tables).
CHOICES: dict[str, tuple[str, ...]] = {
    "localHosts": get_args(tables.LocalHostsPolicy),
    "identity": get_args(tables.IdentityMode),
    "onLimit": get_args(tables.OnLimitPolicy),
    "onWorkerFailure": get_args(tables.WorkerFailurePolicy),
}

_KEY = "|".join(sorted(map(re.escape, DEFAULTS), key=len, reverse=True))
#: A key named on a line, in backticks or bare (``window``).
KEY_NAMED = re.compile(rf"`(?P<key>{_KEY})`|\b(?P<bare>window)\b")
#: ``(default X`` or ``, default X``: X a number, a value in backticks or a constant, up to ``;``,
#: ``)`` or a line's end (``(default: a dead safety net …)`` says why, not what).
DEFAULT_AFTER = re.compile(r"[(,]\s*default:?\s+(?P<value>(?:\d|`|null\b|true\b|false\b)[^;)|\n]*)")
#: ```key: value` (the default)``, ```key: value`, the default``, ```key: value` (default``.
PAIR_DEFAULT = re.compile(rf"`(?P<key>{_KEY}): (?P<value>[^`]+)`,? \(?(?:the )?default\b(?!s)")
#: ```value` (default)`` or ```value` (the default)``.
VALUE_DEFAULT = re.compile(r"`(?P<value>[^`:]+)` \((?:the )?default[):]")
#: ``the defaults (…)``, ``these defaults (…)``, or ``by default … (…)`` within a sentence.
DEFAULTS_LIST = re.compile(r"\b(?:(?:the|these) defaults |by default\b[^(.]{0,80})\((?P<items>[^)]*)\)")
#: ``The defaults (…) are this mode with window 16, `failLimit: 3` and …``.
DEFAULTS_WITH = re.compile(r"\b[Tt]he defaults\b(?:`[^`]*`|[^.`]){0,100}? with (?P<items>[^.;]*)")
#: ```key: value`** (…, off by default)`` or ```key` (off by default)``: the key is null by default.
OFF_BY_DEFAULT = re.compile(rf"`(?P<key>{_KEY})(?::[^`]*)?`\**\s*\([^)]*\boff by default")
#: ```exact`, `cmd`, `net` and `sink` are … capped at 5``.
CAPPED_AT = re.compile(r"`exact`[^.]{0,80}\bcapped at (?P<value>\d+)")
#: ``default caps (5)``, ``default caps of 5``, ``default caps 5``.
DEFAULT_CAPS = re.compile(r"\bdefault caps?\W{0,3}(?:of )?(?P<value>\d+)")
#: One item of a defaults list: ``window 16``, ``caps 5``, ```key: value```.
LIST_ITEM = re.compile(rf"\b(?P<word>window|caps) (?P<number>\d+)\b|`(?P<key>{_KEY}): (?P<value>[^`]+)`")


@dataclass(frozen=True)
class Claim:
    """A default a page states: where, of which keys (any one of them may hold it), and the value."""

    where: str
    keys: tuple[str, ...]
    value: str

    def holds(self) -> bool:
        return any(_same(DEFAULTS[key], self.value, key) for key in self.keys)


def _plain(value: str) -> str:
    """A stated value without markup, thousands separators and a unit that says nothing more."""
    text = value.strip().strip("`*").strip()
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    return re.sub(r"^(\d+(?:\.\d+)?)\s*(?:calls?|ms)\b.*$", r"\1", text)


def _same(default: Any, stated: str, key: str) -> bool:
    text = _plain(stated)
    seconds = re.fullmatch(r"(\d+(?:\.\d+)?)\s*s\b.*", text)
    if key.endswith("Ms") and seconds:
        text = str(int(float(seconds[1]) * 1000))
    if isinstance(default, list):
        return sorted(re.findall(r"`([^`]+)`", stated)) == sorted(default)
    if default is None:
        return text.split()[0] in ("null", "off", "none") if text else False
    if isinstance(default, bool):
        return text.split()[0] == str(default).lower() if text else False
    first = text.split()[0] if text else ""
    if isinstance(default, (int, float)):
        return first == str(default)
    return first == str(default)


def _key_before(line: str, at: int) -> str | None:
    """The key named last on ``line`` before ``at``."""
    found = [match["key"] or match["bare"] for match in KEY_NAMED.finditer(line[:at])]
    return found[-1] if found else None


def logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each line a reader reads as one: a paragraph's lines wrapped
    at the margin joined; a table row, a blank line or a fenced block's line stands alone."""
    joined: list[tuple[int, str]] = []
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        fenced ^= line.startswith("```")
        alone = fenced or not line.strip() or line.lstrip().startswith(("|", "```", "#", "* ", "- "))
        if joined and not alone and joined[-1][1].strip() and not joined[-1][1].lstrip().startswith("|"):
            joined[-1] = (joined[-1][0], f"{joined[-1][1]} {line.strip()}")
        else:
            joined.append((number, line))
    return joined


def claims_in(text: str, page: str) -> list[Claim]:
    """Every default ``text`` states, in the forms of the module docstring."""
    found: list[Claim] = []
    for number, line in logical_lines(text):
        where = f"{page}:{number}"
        for match in PAIR_DEFAULT.finditer(line):
            found.append(Claim(where, (match["key"],), match["value"]))
        for match in DEFAULT_AFTER.finditer(line):
            key = _key_before(line, match.start())
            if key is not None:
                found.append(Claim(where, (key,), match["value"]))
        for match in VALUE_DEFAULT.finditer(line):
            key = _key_before(line, match.start())
            keys = (key,) if key else tuple(k for k, allowed in CHOICES.items() if match["value"] in allowed)
            if keys:
                found.append(Claim(where, keys, match["value"]))
        for match in [*DEFAULTS_LIST.finditer(line), *DEFAULTS_WITH.finditer(line)]:
            for item in LIST_ITEM.finditer(match["items"]):
                if item["word"] == "window":
                    found.append(Claim(where, ("window",), item["number"]))
                elif item["word"] == "caps":
                    found.extend(Claim(where, (f"limits.{kind}",), item["number"]) for kind in CAPPED)
                else:
                    found.append(Claim(where, (item["key"],), item["value"]))
        for match in OFF_BY_DEFAULT.finditer(line):
            found.append(Claim(where, (match["key"],), "null"))
        for match in [*DEFAULT_CAPS.finditer(line), *CAPPED_AT.finditer(line)]:
            found.extend(Claim(where, (f"limits.{kind}",), match["value"]) for kind in CAPPED)
    return found


def _with_limits() -> None:
    """``limits.exact`` and its kind are looked up as keys of their own."""
    for kind in CAPPED:
        DEFAULTS.setdefault(f"limits.{kind}", DEFAULTS["limits"][kind])


def _wrong(claims: list[Claim]) -> list[str]:
    _with_limits()
    try:
        return [f"{c.where}: {'/'.join(c.keys)} stated as {c.value!r}" for c in claims if not c.holds()]
    finally:
        for kind in CAPPED:
            DEFAULTS.pop(f"limits.{kind}", None)


PAGE_CLAIMS = [claim for page in PAGES for claim in claims_in(page.read_text(encoding="utf-8"), page.name)]


def test_no_page_states_a_default_other_than_the_table() -> None:
    assert _wrong(PAGE_CLAIMS) == []


def test_the_pages_state_defaults_in_each_form_read_here() -> None:
    """The check reads what the pages say: it finds the defaults they state in passing."""
    keys = {key for claim in PAGE_CLAIMS for key in claim.keys}
    assert {"window", "guardTimeoutMs", "startTimeoutMs", "exclude", "localHosts", "identity"} <= keys
    assert len(PAGE_CLAIMS) >= 10


@pytest.mark.parametrize(
    "sentence",
    [
        "* State is a per-agent sliding window (default 12 calls): one agent's loop",
        "the breaker behaves as the defaults (caps 5, window 12, `localHosts: ask`, no notices).",
        "under `localHosts: deny` (the default) they are denied",
        "| `identity` | `exact` (default) \\| `state-aware` |",
        "`guardTimeoutMs` (default 250 ms) once a worker is warm",
        "`startTimeoutMs` (default 5 s) while a fresh one starts",
        "Excluded tools (`exclude`, default `todo_write`, `read`) neither count",
        "Under the default caps (4) a fresh agent gets 3 passes",
        "at most `maxAgents` agents (default 1,000; past it",
        "`failLimit: null` (the default) leaves the failure track off",
        "* **`failLimit: 3`** (the failure track, off by default): a call that failed",
        "The defaults (`DEFAULTS`) are this mode with window 12, `failLimit: 3` and more.",
        "`exact`, `cmd`, `net` and `sink` are precise, resource-scoped and capped at 4:",
    ],
)
def test_a_default_stated_otherwise_fails(sentence: str) -> None:
    """Each form, stating a value the table does not hold, is caught."""
    assert _wrong(claims_in(sentence, "page"))


@pytest.mark.parametrize(
    "sentence",
    [
        "* State is a per-agent sliding window (default 16 calls): one agent's loop",
        "the defaults (window 16, caps 5, `failLimit: 3`, `localHosts: ask`)",
        "`startTimeoutMs` (default 10 s) while a fresh one starts",
        "at most `maxAgents` agents (default 10,000; past it",
        "| `ask` (default) | the first local call",
        "* **`warnAt`** (advisory, off by default): a light notice",
        "The defaults (`DEFAULTS`) are this mode with window 16, `failLimit: 3` and more.",
    ],
)
def test_a_default_stated_as_the_table_holds_passes(sentence: str) -> None:
    claims = claims_in(sentence, "page")
    assert claims and not _wrong(claims)


def test_the_readme_names_each_key_its_defaults_block_leaves_out() -> None:
    """The block holds every key of the table; a key accepted but not in it (ignored) is named."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text[text.index("<!-- defaults:begin -->") : text.index("<!-- defaults:end -->")]
    assert all(f"\n    {key}:" in block for key in DEFAULTS)
    before = text[: text.index("<!-- defaults:begin -->")].rstrip().rsplit("\n\n", 1)[1]
    assert all(f"`{key}`" in before for key in tables.IGNORED_KEYS), before
