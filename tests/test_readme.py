"""The README quotes the defaults tables of breaker/core/config.py; this keeps the quotes in step.

Run with UPDATE_README=1 to rewrite the quoted blocks from ``DEFAULTS`` and ``MODE_DEFAULTS``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from breaker.core.config import DEFAULTS, MODE_DEFAULTS

README = Path(__file__).resolve().parent.parent / "README.md"
BEGIN, END = "<!-- defaults:begin -->", "<!-- defaults:end -->"
MODE_BEGIN, MODE_END = "<!-- mode-defaults:begin -->", "<!-- mode-defaults:end -->"


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


def render_mode_defaults() -> str:
    """What each identity mode brings, as the keys a row would otherwise restate."""
    lines = ["```yaml"]
    for mode, overrides in MODE_DEFAULTS.items():
        lines.append(f"# identity: {mode}")
        lines.extend(f"{key}: {_scalar(value)}" for key, value in overrides.items())
    lines.append("```")
    return "\n".join(lines)


def _quoted_block(text: str, begin: str, end: str) -> str:
    start = text.index(begin) + len(begin)
    return text[start : text.index(end)].strip("\n")


def _check_quote(begin: str, end: str, expected: str) -> None:
    text = README.read_text(encoding="utf-8")
    if os.environ.get("UPDATE_README") == "1":
        start = text.index(begin) + len(begin)
        text = text[:start] + "\n" + expected + "\n" + text[text.index(end) :]
        README.write_text(text, encoding="utf-8")
    assert _quoted_block(text, begin, end) == expected


def test_readme_quotes_the_defaults_of_config_py() -> None:
    _check_quote(BEGIN, END, render_defaults())


def test_readme_quotes_what_each_identity_mode_brings() -> None:
    _check_quote(MODE_BEGIN, MODE_END, render_mode_defaults())
