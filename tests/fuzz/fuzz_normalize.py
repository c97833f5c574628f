"""Coverage-guided fuzzing of the normalizers (not part of the test run).

    python -m pip install atheris
    python tests/fuzz/fuzz_normalize.py -max_total_time=300 -timeout=2 [corpus-dir]

Drives the shell lexer and analysis (verbs, sinks, volatile flags), URL canonicalisation and
``fingerprint_call`` for bash and URL tools with arbitrary text. Any exception is a finding, and
so is one input taking longer than ``-timeout`` seconds (a super-linear parser).
"""

from __future__ import annotations

import sys

import atheris  # a fuzzing tool, not a dependency

with atheris.instrument_imports():
    from breaker.core.config import default_config
    from breaker.core.reading.commands import analyze_shell
    from breaker.core.reading.fingerprints import ToolCall, fingerprint_call
    from breaker.core.reading.shell import lex_shell
    from breaker.core.reading.urls import canonical_url

CONFIG = default_config()
ALIASES = CONFIG.hostAliases


def one_input(data: bytes) -> None:
    provider = atheris.FuzzedDataProvider(data)
    text = provider.ConsumeUnicodeNoSurrogates(provider.remaining_bytes())
    lex_shell(text)
    analysis = analyze_shell(text, ALIASES)
    assert all(sink for sink in analysis.sinks), "a sink is never empty"
    for scheme_optional in (False, True):
        url = canonical_url(text, ALIASES, scheme_optional=scheme_optional)
        assert url is None or url.resource.startswith(url.host) or url.resource.startswith("[")
    for call in (
        ToolCall("bash", {"command": text}),
        ToolCall("web_fetch", {"url": text}),
        ToolCall("read", {"path": text, "offset": len(text)}),
    ):
        keys = [fp.key for fp in fingerprint_call(call, CONFIG).fingerprints]
        assert keys and all(
            key.split(":", 1)[0] in {"exact", "cmd", "net", "site", "sink", "family", "verb"} for key in keys
        )


def main() -> None:
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
