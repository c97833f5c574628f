"""Linear-time shapes: the normalizers on long, repetitive and pathological input.

No clock is read here. A parser with catastrophic backtracking shows up as hypothesis' per-example
deadline being exceeded (set generously: linear work on these sizes takes milliseconds, quadratic
work takes minutes); the assertions are about structure: every repeated unit is found, and the
canonical text grows at most linearly with the input.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from breaker.core.config import default_config
from breaker.core.reading.commands import analyze_shell
from breaker.core.reading.findings import MAX_URLS
from breaker.core.reading.fingerprints import ToolCall, fingerprint_call
from breaker.core.reading.shell import lex_shell
from breaker.core.reading.urls import canonical_url

CONFIG = default_config()
ALIASES = CONFIG.hostAliases
OPERATORS = [";", "&&", "||", "|", "\n", " \\\n&&"]

#: Units that stress quoting, nesting, substitution, heredocs and URL scanning when repeated.
PATHOLOGICAL_UNITS = [
    "$(",
    ")",
    "'",
    '"',
    "\\",
    "`",
    "${",
    "<<EOF\n",
    "http://",
    "a.",
    "[::",
    "%",
    "=",
    "-o ",
    ">",
    "&&",
    "|",
    "\\\n",
    "'\"",
    "$((",
    "<(",
    "#",
    "?a=1&",
    "@",
    ":8080",
    " -H 'x: y'",
]


@settings(max_examples=60, deadline=2000)
@given(st.lists(st.sampled_from(PATHOLOGICAL_UNITS), min_size=1, max_size=6), st.integers(1, 3000))
def test_repeated_pathological_units_are_analysed_and_never_grow(units: list[str], repeats: int) -> None:
    text = "".join(units) * repeats
    lex_shell(text)
    analysis = analyze_shell(text, ALIASES)
    assert len(analysis.command) <= 4 * len(text) + 64  # operators get spaces around them
    assert len(analysis.sinks) <= text.count(">") + text.count("-o") + text.count("tee")
    canonical_url(text, ALIASES)
    canonical_url(text, ALIASES, scheme_optional=True)
    fingerprint_call(ToolCall("bash", {"command": text}), CONFIG)


@settings(max_examples=40, deadline=2000)
@given(st.integers(1, 400), st.lists(st.sampled_from(OPERATORS), min_size=1, max_size=4))
def test_every_command_of_a_long_chain_yields_its_url_and_sink(count: int, operators: list[str]) -> None:
    """Up to MAX_URLS URLs are kept (the bound on what one call can fingerprint); every sink is."""
    commands = [f"curl -s -o /tmp/out{n}.html https://h{n}.example.org/p{n}" for n in range(count)]
    text = commands[0]
    for index, command in enumerate(commands[1:]):
        text += f" {operators[index % len(operators)]} {command}"
    analysis = analyze_shell(text, ALIASES)
    expected_hosts = [f"h{index}.example.org" for index in range(min(count, MAX_URLS))]
    assert [url.host for url in analysis.urls] == expected_hosts
    assert list(analysis.sinks) == [f"/tmp/out{index}.html" for index in range(count)]
    assert analysis.verbs == ("curl",)
    assert analysis.fetches


@settings(max_examples=40, deadline=2000)
@given(st.integers(1, 2000))
def test_nested_substitutions_and_quotes_keep_their_urls(depth: int) -> None:
    text = "echo " + "$(" * depth + "curl https://deep.example.org/x" + ")" * depth
    assert [url.host for url in analyze_shell(text, ALIASES).urls] == ["deep.example.org"]
    quoted = "ssh box " + "'" + '"' * depth + "wget -O /tmp/f https://q.example.org/" + '"' * depth + "'"
    assert "q.example.org" in {url.host for url in analyze_shell(quoted, ALIASES).urls}


@settings(max_examples=30, deadline=2000)
@given(st.integers(1, 5000), st.sampled_from(["a", "a.", "1.", "-", "%41", "xn--", "[", ":"]))
def test_long_hosts_and_paths_canonicalise_or_are_refused(length: int, unit: str) -> None:
    for url in (f"https://{unit * length}/", f"https://example.org/{unit * length}?b=2&a=1"):
        canonical = canonical_url(url, ALIASES)
        assert canonical is None or len(canonical.resource) <= len(url) + 16
