"""Which tools take part at all: ``include`` and ``exclude`` (``*`` wildcards) as one pattern.

A regex valid in Python and JavaScript alike: the worker matches each call's tool name with it,
and the Node shim compiles the same source from the configure reply, so it skips the round trip
for excluded tools without a second copy of the matching rules.
"""

from __future__ import annotations

from breaker.core.config import BreakerConfig


def counted_tools_pattern(config: BreakerConfig) -> str:
    """The regex that fully matches the counted tool names of ``config``."""
    excluded = "|".join(_wildcard_regex(pattern) for pattern in config.exclude)
    included = "|".join(_wildcard_regex(pattern) for pattern in config.include) or "[\\s\\S]*"
    guard = f"(?!(?:{excluded})$)" if excluded else ""
    return f"^{guard}(?:{included})$"


def _wildcard_regex(pattern: str) -> str:
    """``*`` matches any run of characters; ASCII punctuation is escaped as ``\\xHH``.

    Letters, digits and non-ASCII characters stand for themselves: none is special in either
    regex dialect, and a literal astral character matches in both (as two UTF-16 code units in
    JavaScript, as one code point in Python).
    """
    return "".join(_wildcard_char(char) for char in pattern)


def _wildcard_char(char: str) -> str:
    if char == "*":
        return "[\\s\\S]*"
    return f"\\x{ord(char):02x}" if char.isascii() and not char.isalnum() else char
