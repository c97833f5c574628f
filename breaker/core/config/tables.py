"""The configuration's tables, each the one copy: every key with its default (``DEFAULTS``), the
presets over them (``PRESETS``), the bounds of every number (``NUMBER_BOUNDS``), the choices of
each key that takes one (its ``Literal`` type), and which keys merge, are refused or are ignored.

Every other module (and the README, and docs/configuration.md) reads them here.
"""

from __future__ import annotations

from typing import Any, Literal

LocalHostsPolicy = Literal["ask", "deny", "allow"]
IdentityMode = Literal["exact", "state-aware"]
#: A named set of settings over DEFAULTS (``PRESETS``); null: the defaults.
PresetName = Literal["seed"]
OnLimitPolicy = Literal["ask", "deny"]
HostPolicy = Literal["none", "public", "all"]
WorkerFailurePolicy = Literal["allow", "deny"]

#: The fingerprint kinds a ``limits`` key may name, alone (``net``) or as a prefix of one full
#: fingerprint (``verb:curl``).
FINGERPRINT_KINDS = ("exact", "cmd", "net", "host", "site", "sink", "family", "verb")

#: The families of calls a ``family:`` fingerprint names (``family:http-fetch``: a call of any
#: HTTP client); a ``limits`` key naming another is refused, as it could never match a call.
HTTP_FETCH = "family:http-fetch"
FAMILIES = (HTTP_FETCH,)

#: What stands between the head of a fingerprint key too long to keep whole and the digest of the
#: whole (``breaker.core.reading.canonical.bounded_key``): a ``limits`` key holding it is taken as
#: such a key, copied from a denial, and not read as JSON.
SHORTENED_KEY_MARK = "…#"

DEFAULTS: dict[str, Any] = {
    # A named set of settings the other keys start from (PRESETS); null: these defaults.
    "preset": None,
    "window": 16,
    "localHosts": "ask",
    # What makes two calls the same action: the same call in the same workspace state
    # (docs/decision-quality.md); "exact" counts every call verbatim, as the seed did.
    "identity": "state-aware",
    "previewChars": 400,
    "resultPreviewChars": 800,
    "exclude": ["todo_write"],
    "include": [],
    "ignoreArgs": {
        "*": [
            "description",
            "timeoutMs",
            "run_in_background",
            "justification",
            "reason",
            "title",
            "comment",
        ],
        "bash": ["description", "timeoutMs", "run_in_background", "justification"],
    },
    "hostAliases": {"open-data.canada.ca": "open.canada.ca"},
    "limits": {
        "exact": 5,
        "cmd": 5,
        "net": 5,
        "sink": 5,
        "host": None,
        "site": None,
        "family:http-fetch": None,
        "verb:curl": None,
        "verb:wget": None,
    },
    # The escalation of the reference plugin (0.5.x), under its key names and all off here:
    # what a reached cap does, the advisory stages below the caps, the failure track, and
    # whether local hosts take part in host:. See docs/escalation.md.
    "onLimit": "deny",
    "warnAt": None,
    "summarizeAt": None,
    "failWarnAt": None,
    "failLimit": 3,
    # No progress: after this many identical results, the same call again is denied (the rules
    # of docs/decision-quality.md).
    "sameResultLimit": 4,
    "includeLocal": False,
    # A backstop against a harness that never reports its agents gone: past this many agents,
    # the one idle the longest is forgotten.
    "maxAgents": 10000,
    # Read by the Node shim (validated here so that the shim holds no logic of its own).
    "python": None,
    "onWorkerFailure": "allow",
    "guardTimeoutMs": 500,
    "startTimeoutMs": 10000,
    # One line on dsh's stderr per denied call (tool, the kinds that hit, the agent), for an
    # operator of a headless dsh; off: the session log and `rtb replay` show every denial.
    "logDenials": False,
}

#: Named sets of settings over DEFAULTS; keys set beside a preset override it. ``seed`` is the seed
#: README's defaults table exactly: every call counted verbatim in a window of 12, no failure
#: track, no reading of results (docs/configuration.md).
PRESETS: dict[str, dict[str, Any]] = {
    "seed": {"window": 12, "identity": "exact", "failLimit": None, "sameResultLimit": None},
}

#: Each number of the configuration (``limits``: each cap in it), the least and the most it may
#: be: the one table ``load_config`` checks (so do ``rtb check`` and the boot). The most is what
#: the shim holds: a count, a cap or a stage a 32-bit integer (a guard's passes come to no more); a
#: timeout a day (a JavaScript timer fires at once past 2**31-1 ms, and a deadline is held in a
#: 32-bit slot as ms since its worker started: node-shim/worker/transport.js).
#: docs/configuration.md quotes it.
_MOST = 2**31 - 1
NUMBER_BOUNDS: dict[str, tuple[int, int]] = {
    "window": (4, _MOST),
    "previewChars": (1, _MOST),
    "resultPreviewChars": (1, _MOST),
    "limits": (2, _MOST),
    "warnAt": (1, _MOST),
    "summarizeAt": (1, _MOST),
    "failWarnAt": (1, _MOST),
    "failLimit": (2, _MOST),
    "sameResultLimit": (2, _MOST),
    "maxAgents": (1, _MOST),
    "guardTimeoutMs": (1, 86_400_000),
    "startTimeoutMs": (1, 86_400_000),
}

#: Keys that ``ignoreArgs``, ``hostAliases`` and ``limits`` merge one level deep over DEFAULTS.
MERGED_KEYS = ("ignoreArgs", "hostAliases", "limits")

#: Keys of the unrelated npm plugin of the same name, with where their job is done here. They
#: raise instead of being ignored, so a profile written for it cannot silently lose its tuning.
REMOVED_KEYS: dict[str, str] = {
    "denyAfter": "use limits (for example limits: {exact: 5, cmd: 5, net: 5, sink: 5})",
    "warnAfter": "use warnAt (advisory notices, off by default) or the notices of "
    "@deepseek-ai/dsh-repeat-tool-reminder",
    "registerAdvisory": "advisory notices come from @deepseek-ai/dsh-repeat-tool-reminder",
    "maxSamePath": "file actions are identified by exact: (position-aware); there is no path-only limit",
    "readTools": "file actions are identified by exact:; there is no read-tool list",
    "matchReadBySubstring": "file actions are identified by exact:; remove the key",
}

#: Keys still accepted for old profiles but without effect.
IGNORED_KEYS = ("pathAliases",)
