"""The package claims Python >= 3.10 (pyproject's requires-python, the README): its regular
expressions use nothing 3.10's ``re`` lacks. Possessive quantifiers (``*+``, ``{1,64}+``) and
atomic groups (``(?>…)``) came in 3.11; on 3.10 compiling one raises ``multiple repeat``, and the
redaction module (every denial's wording) failed to import there."""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Iterator

import breaker

#: A quantifier followed by "+" (possessive), or an atomic group, outside a character class and
#: not escaped: read token by token, so ``[*+]`` and ``\\*+`` are not taken for one.
_TOKEN = re.compile(r"\\.|\[(?:\\.|[^\]\\])*\]|\(\?>|[*+?}]\+|.", re.S)


def _newer_syntax(pattern: str) -> list[str]:
    tokens = _TOKEN.findall(pattern)
    return [token for token in tokens if token == "(?>" or token in ("*+", "++", "?+", "}+")]


def _patterns(value: object, depth: int = 0) -> Iterator[re.Pattern[str]]:
    if isinstance(value, re.Pattern):
        yield value
    elif depth < 3 and isinstance(value, (tuple, list, frozenset, set)):
        for item in value:
            yield from _patterns(item, depth + 1)
    elif depth < 3 and isinstance(value, dict):
        for item in value.values():
            yield from _patterns(item, depth + 1)


def _every_pattern() -> Iterator[tuple[str, re.Pattern[str]]]:
    for info in pkgutil.walk_packages(breaker.__path__, "breaker."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            for pattern in _patterns(value):
                yield f"{info.name}.{name}", pattern


def test_the_check_finds_what_python_3_10_refuses() -> None:
    assert _newer_syntax(r"a{1,64}+b") == ["}+"]
    assert _newer_syntax(r"(?:x|y)*+") == ["*+"]
    assert _newer_syntax(r"(?>ab)") == ["(?>"]
    assert _newer_syntax(r"[*+]\*+\++(?:a)+[a-z]+") == []


def test_no_pattern_of_the_package_needs_python_3_11() -> None:
    found = [(where, _newer_syntax(pattern.pattern)) for where, pattern in _every_pattern()]
    assert len(found) > 40, "the walk finds the package's patterns"
    assert [(where, tokens) for where, tokens in found if tokens] == []
