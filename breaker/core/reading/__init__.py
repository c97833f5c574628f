"""Stage 1, reading a call: what one tool call does, read from its name and arguments alone.

The shell lexer (``shell``), URLs and hosts (``urls``), paths (``paths``), a call's paths and URLs
as they resolve (``resolved``), canonical argument values (``canonical``), command prefixes and
HTTP clients (``wrappers``, ``fetchers``), what a command line touches (``findings``,
``commands``), and the call's fingerprints (``fingerprints``); what names say (``names``) and
which calls could share a key (``groups``); also what a finished call's result says about how it
ended (``outcomes``). Nothing here knows an agent: the same call always reads the same. Later
stages take what they use from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from breaker.reexports import homes_of, loader

if TYPE_CHECKING:  # the names, for type checkers; at run time __getattr__ imports each on first use
    from breaker.core.reading.canonical import CONDENSED_CHARS as CONDENSED_CHARS
    from breaker.core.reading.canonical import canonical_json as canonical_json
    from breaker.core.reading.canonical import condensed as condensed
    from breaker.core.reading.counted import counted_tools_pattern as counted_tools_pattern
    from breaker.core.reading.fetchers import FETCHERS as FETCHERS
    from breaker.core.reading.findings import Findings as Findings
    from breaker.core.reading.findings import is_file as is_file
    from breaker.core.reading.fingerprints import CallFingerprints as CallFingerprints
    from breaker.core.reading.fingerprints import Fingerprint as Fingerprint
    from breaker.core.reading.fingerprints import ToolCall as ToolCall
    from breaker.core.reading.fingerprints import distinct as distinct
    from breaker.core.reading.fingerprints import fingerprint_call as fingerprint_call
    from breaker.core.reading.fingerprints import resolved_call as resolved_call
    from breaker.core.reading.outcomes import FAILURE_MARKS as FAILURE_MARKS
    from breaker.core.reading.outcomes import FETCHED_START as FETCHED_START
    from breaker.core.reading.outcomes import FILE_TOOLS as FILE_TOOLS
    from breaker.core.reading.outcomes import Failure as Failure
    from breaker.core.reading.outcomes import Settled as Settled
    from breaker.core.reading.outcomes import failure_shape as failure_shape
    from breaker.core.reading.outcomes import judge as judge
    from breaker.core.reading.outcomes import result_digest as result_digest
    from breaker.core.reading.outcomes import says_nothing as says_nothing
    from breaker.core.reading.outcomes import shell_end as shell_end
    from breaker.core.reading.outcomes import succeeded as succeeded
    from breaker.core.reading.paths import normal_path as normal_path
    from breaker.core.reading.paths import path_argument as path_argument
    from breaker.core.reading.readonly import FETCH_MARKERS as FETCH_MARKERS
    from breaker.core.reading.readonly import READ_ONLY_TOOLS as READ_ONLY_TOOLS
    from breaker.core.reading.readonly import lists_items as lists_items
    from breaker.core.reading.readonly import may_change as may_change
    from breaker.core.reading.readonly import may_run as may_run
    from breaker.core.reading.readonly import redirects_into_a_file as redirects_into_a_file
    from breaker.core.reading.readonly import reports_state as reports_state
    from breaker.core.reading.readonly import runs_code as runs_code
    from breaker.core.reading.readonly import shell_text as shell_text
    from breaker.core.reading.shell import COMMAND_ARGS as COMMAND_ARGS
    from breaker.core.reading.shell import SHELL_TOOLS as SHELL_TOOLS
    from breaker.core.reading.shell import ShellScript as ShellScript
    from breaker.core.reading.shell import SimpleCommand as SimpleCommand
    from breaker.core.reading.shell import lex_shell as lex_shell
    from breaker.core.reading.wrappers import strip_prefix as strip_prefix

#: Each name re-exported, by its home module (the stage's submodules are imported as usual).
_HOMES = homes_of(
    {
        "breaker.core.reading.canonical": (
            "CONDENSED_CHARS",
            "canonical_json",
            "condensed",
        ),
        "breaker.core.reading.counted": ("counted_tools_pattern",),
        "breaker.core.reading.fetchers": ("FETCHERS",),
        "breaker.core.reading.findings": ("Findings", "is_file"),
        "breaker.core.reading.fingerprints": (
            "CallFingerprints",
            "Fingerprint",
            "ToolCall",
            "distinct",
            "fingerprint_call",
            "resolved_call",
        ),
        "breaker.core.reading.outcomes": (
            "FAILURE_MARKS",
            "FETCHED_START",
            "FILE_TOOLS",
            "Failure",
            "Settled",
            "failure_shape",
            "judge",
            "result_digest",
            "says_nothing",
            "shell_end",
            "succeeded",
        ),
        "breaker.core.reading.paths": (
            "normal_path",
            "path_argument",
        ),
        "breaker.core.reading.readonly": (
            "FETCH_MARKERS",
            "READ_ONLY_TOOLS",
            "lists_items",
            "may_change",
            "may_run",
            "redirects_into_a_file",
            "reports_state",
            "runs_code",
            "shell_text",
        ),
        "breaker.core.reading.shell": (
            "COMMAND_ARGS",
            "SHELL_TOOLS",
            "ShellScript",
            "SimpleCommand",
            "lex_shell",
        ),
        "breaker.core.reading.wrappers": ("strip_prefix",),
    }
)

__all__ = sorted(_HOMES)
__getattr__ = loader(globals(), _HOMES)
