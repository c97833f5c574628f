"""Stage 1, reading a call: what one tool call does, read from its name and arguments alone.

The shell lexer (``shell``), URLs and hosts (``urls``), paths (``paths``), a call's paths and URLs
as they resolve (``resolved``), canonical argument values (``canonical``),
command prefixes and HTTP clients (``wrappers``, ``fetchers``), what a command line touches
(``findings``, ``commands``), and the call's fingerprints (``fingerprints``); also what a
finished call's result says about how it ended (``outcomes``). Nothing here knows an agent: the
same call always reads the same. Later stages take what they use from here.
"""

from __future__ import annotations

from breaker.core.reading.canonical import CONDENSED_CHARS, canonical_json, condensed
from breaker.core.reading.counted import counted_tools_pattern
from breaker.core.reading.fetchers import FETCHERS
from breaker.core.reading.findings import Findings
from breaker.core.reading.fingerprints import (
    COMMAND_ARGS,
    SHELL_TOOLS,
    CallFingerprints,
    Fingerprint,
    ToolCall,
    distinct,
    fingerprint_call,
    resolved_call,
)
from breaker.core.reading.outcomes import (
    FAILURE_MARKS,
    FETCHED_START,
    FILE_TOOLS,
    Failure,
    Settled,
    failure_shape,
    judge,
    result_digest,
    says_nothing,
    shell_end,
)
from breaker.core.reading.paths import normal_path, path_argument
from breaker.core.reading.readonly import FETCH_MARKERS, READ_ONLY_TOOLS, may_change, reports_state
from breaker.core.reading.shell import ShellScript, SimpleCommand, lex_shell
from breaker.core.reading.wrappers import strip_prefix

__all__ = [
    "COMMAND_ARGS",
    "CONDENSED_CHARS",
    "FAILURE_MARKS",
    "FETCHED_START",
    "FETCHERS",
    "FETCH_MARKERS",
    "FILE_TOOLS",
    "READ_ONLY_TOOLS",
    "SHELL_TOOLS",
    "CallFingerprints",
    "Failure",
    "Findings",
    "Fingerprint",
    "Settled",
    "ShellScript",
    "SimpleCommand",
    "ToolCall",
    "canonical_json",
    "condensed",
    "counted_tools_pattern",
    "distinct",
    "failure_shape",
    "fingerprint_call",
    "judge",
    "lex_shell",
    "may_change",
    "normal_path",
    "path_argument",
    "reports_state",
    "resolved_call",
    "result_digest",
    "says_nothing",
    "shell_end",
    "strip_prefix",
]
