"""Every text the model or the operator reads: the denial, the ask reason, the notices, and
what they quote.

The denial is the model's only new information when a call is blocked, so it says which
fingerprints hit and how often, why cosmetic changes do not help, what the earlier attempt
returned, and what to do instead. Anything quoted (a result, a fingerprint, a tool name) came from
the model or a tool, so it is redacted for secrets and stripped of tool-call markup first: the
denial must not leak a token, nor read to a parser as a tool call of its own.

Every pattern here runs in linear time: no nested unbounded quantifiers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from breaker.core.config import BreakerConfig
from breaker.core.outcomes import Failure
from breaker.core.verdicts import FailureHit, Hit, Notice, Stall

PREFIX = "REPEAT_TOOL_BLOCKED:"
NOTICE_PREFIX = "REPEAT_TOOL_NOTICE:"


#: How much more of a result than can be quoted is redacted before the cut, so that a secret
#: straddling the cut is still recognised whole.
REDACTION_MARGIN = 256

_REDACTED = "[REDACTED]"

#: A name whose value is a secret ends with one of these: ``password``, ``DB_PASSWORD``,
#: ``client_secret``, ``GITHUB_TOKEN``, ``_authToken``, ``x-api-key``, ``AccountKey``,
#: ``aws_secret_access_key``, ``SECRET_KEY``, ``Authorization``, ``Set-Cookie``; ``pass`` and
#: ``pwd`` only after a separator (``DB_PASS``, but not ``bypass`` or the shell's ``PWD``). A name
#: that only starts with one (``token_count``, ``password_file``, ``max_tokens``) is not a secret.
_KEY_KINDS = ("api", "access", "account", "private", "secret", "auth", "client", "master", "signing",
              "encryption", "storage", "shared")
_SECRET_ENDINGS = "|".join(
    [
        *(f"(?<={word})" for word in ("password", "passwd", "passphrase", "secret", "credential",
                                       "credentials", "token", "authorization", "cookie")),
        "(?<=[a-z0-9][_.\\-]pass)",
        "(?<=[a-z0-9][_.\\-]pwd)",
        "(?<=key)(?:" + "|".join(f"(?<={kind}key)|(?<={kind}[_.\\-]key)" for kind in _KEY_KINDS) + ")",
    ]
)
#: A whole name (taken possessively, so the scan is linear), then a look back at how it ends.
_SECRET_NAME = rf"(?<![A-Za-z0-9_.\-])[A-Za-z0-9_.\-]{{1,64}}+(?:{_SECRET_ENDINGS})"
#: ``=`` (not ``==``) or ``:``, spaced or not.
_ASSIGN = r"[ \t]*(?:=(?!=)|:)[ \t]*"
_URL_SCHEME = r"\b([a-z][a-z0-9+.\-]{0,15}://)"

#: Tokens recognised by their shape alone: (issuer, pattern).
_TOKEN_SHAPES = (
    ("GitHub", r"\b(?:gh[pousr]|github_pat)_[A-Za-z0-9_]{20,255}"),
    ("OpenAI, Anthropic", r"\bsk-[A-Za-z0-9_\-]{20,255}"),
    ("AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    # header.payload.signature, both JSON objects, so both start "eyJ".
    ("JWT", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*"),
    ("Slack", r"\bxox[abposre]-[A-Za-z0-9\-]{10,255}|\bxapp-\d-[A-Za-z0-9\-]{10,255}"),
    ("Stripe", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,255}|\bwhsec_[A-Za-z0-9]{20,255}"),
    ("GitLab", r"\bgl(?:pat|dt|rt|ptt|cbt|soat)-[A-Za-z0-9_\-]{20,255}"),
    ("Google API key, OAuth token", r"\bAIza[0-9A-Za-z_\-]{35}|\bya29\.[0-9A-Za-z_\-]{20,2048}"),
    ("npm", r"\bnpm_[A-Za-z0-9]{36}\b"),
)



def _redact_base64_key(match: re.Match[str]) -> str:
    """A bare 40-character key (AWS secret access keys): redacted when it mixes cases and digits,
    as random keys do and hex digests (git, sha1) do not."""
    text = match.group(0)
    kinds = (str.isupper, str.islower, str.isdigit)
    return _REDACTED if all(any(kind(char) for char in text) for kind in kinds) else text


#: Every secret format that is redacted, as (pattern, replacement), applied in order. Each entry
#: names the formats it covers; ``tests/test_messages.py`` has one case per format.
_REDACTIONS: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = (
    # A private key block (PEM, OpenSSH, PGP), up to its END line or, when the text was cut, to the end.
    (
        re.compile(
            r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----.*?"
            r"(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
        "[REDACTED PRIVATE KEY]",
    ),
    # URL userinfo with a password, which may hold "@" or "/": the last "@" before the host ends
    # it (https://user:p@ss/w@rd@host -> https://[REDACTED]@host). host:port is not a password.
    (
        re.compile(
            rf"(?i){_URL_SCHEME}[^\s/?#@:'\"\\]{{1,256}}:(?!\d{{1,5}}(?:[/?#'\"\s]|\Z))"
            r"[^\s'\"\\]{1,256}@(?=[^\s/?#@'\"\\]+(?:[/?#:'\"\s]|\Z))"
        ),
        r"\1" + _REDACTED + "@",
    ),
    # URL userinfo without a password, a token as the user (https://ghp_x@github.com/o/r).
    (re.compile(rf"(?i){_URL_SCHEME}[^\s/?#@'\"\\]{{1,256}}@"), r"\1" + _REDACTED + "@"),
    # JSON members: "password": "value", "Authorization": "Bearer ...", "SecretAccessKey": "...".
    (
        re.compile(rf"(?i)\"({_SECRET_NAME})\"(\s*:\s*)\"(?:[^\"\\]|\\.)*\""),
        r'"\1"\2"' + _REDACTED + '"',
    ),
    # Named values, in one pass: quoted (password='x', PASSWORD="x", secret: "x"; the quotes
    # stay), assignments, options, query and form values, connection strings (token=x,
    # PASSWORD = x, --password=x, &api_key=x, DB_PASS=x, SECRET_KEY=x, AccountKey=x;,
    # _authToken=x), and header lines or "name: value" secrets, to the end of the line or a quote.
    (
        re.compile(
            rf"(?i)({_SECRET_NAME})(?:({_ASSIGN})([\"'])(?:(?!\3)[^\\\r\n]|\\.){{0,1024}}\3"
            r"|([ \t]*=(?!=)[ \t]*)[^&\s'\"#;\\]+"
            r"|([ \t]*:[ \t]*)[^\r\n'\"\\]+)"
        ),
        r"\1\2\3\4\5" + _REDACTED + r"\3",
    ),
    (re.compile(r"(?i)\b(bearer)\s+[a-z0-9\-._~+/]+=*"), r"\1 " + _REDACTED),
    # curl -u user:pass, --user user:pass, --user=user:pass, --proxy-user ...: the user stays.
    (
        re.compile(
            r"(?i)(\bcurl\b[^\r\n|;&]{0,256}?[ \t](?:-u|--user|--proxy-user)(?:[ \t]+|=)"
            r"['\"]?[^\s:'\"]{1,256}:)[^\s'\"]+"
        ),
        r"\1" + _REDACTED,
    ),
    # netrc entries: machine host login user password secret (on one line or several).
    (re.compile(r"(?i)(\b(?:login|account)\s+\S{1,256}\s+password\s+)\S+"), r"\1" + _REDACTED),
    # A bare AWS secret access key (40 characters of base64 mixing cases and digits).
    (re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"), _redact_base64_key),
    # Well-known token shapes that travel without a name in front of them, in one pass.
    (re.compile("|".join(shape for _, shape in _TOKEN_SHAPES)), _REDACTED),
)

#: The "<" of tool-call-shaped tags (Hermes/Qwen XML, function-call wrappers) and the brackets of
#: special tokens (<|im_start|>, DeepSeek's fullwidth-bar tokens) are swapped for
#: look-alike angle quotes.
_TAG_OPEN = re.compile(
    r"(?i)<(?=[ \t]{0,8}/?[ \t]{0,8}(?:tool_calls?|tool_response|tool_result|tool_use|"
    r"function_calls?|function_results?|function\b|functions\.|parameter\b|invoke\b|arg_key|arg_value))"
)
_SPECIAL_OPEN = re.compile(r"<(?=[|\uff5c])")
_SPECIAL_CLOSE = re.compile(r"(?<=[|\uff5c])>")
_LEFT, _RIGHT = "\u2039", "\u203a"
_BRACKET_TOKEN = re.compile(r"\[(?=/?(?:TOOL_CALLS|TOOL_RESULTS|AVAILABLE_TOOLS)\])")


def redact(text: str) -> str:
    """``text`` with secrets (credentials, tokens, private keys, URL passwords) replaced."""
    for pattern, replacement in _REDACTIONS:
        text = pattern.sub(replacement, text)
    return text


def neutralise(text: str) -> str:
    """``text`` with tool-call markup and special tokens defused, so no parser reads a call in it."""
    text = _TAG_OPEN.sub(_LEFT, text)
    text = _SPECIAL_OPEN.sub(_LEFT, text)
    text = _SPECIAL_CLOSE.sub(_RIGHT, text)
    return _BRACKET_TOKEN.sub("(", text)


#: How a name or a key shows its control characters: what a reader or a parser takes for the
#: end of a line (str.splitlines' set) as "⏎", the other C0 controls as their Control Pictures
#: ("␛" for the escape that starts a terminal sequence), DEL as "␡", the C1 controls as "\ufffd".
_INLINE = str.maketrans(
    {
        **{code: "\ufffd" for code in range(0x80, 0xA0)},
        **{code: chr(0x2400 + code) for code in range(0x20) if code != 0x09},
        0x7F: "\u2421",
        **dict.fromkeys(map(ord, "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"), "\u23ce"),
    }
)


def quotable_inline(text: str, limit: int) -> str:
    """:func:`quotable`, kept on one line and free of control characters: a tool name or a key
    quoted inside a sentence (a heredoc in a ``cmd:`` key, a quoted ``-o`` path) cannot start a
    line that poses as the breaker's own, nor redraw the operator's terminal."""
    return quotable(text, limit).translate(_INLINE)


def quotable(text: str, limit: int, length: int | None = None) -> str:
    """``text`` made safe to quote and cut to ``limit`` characters, saying so when it was cut.

    Only a bounded prefix is examined, so a huge tool output costs no more than a short one; that
    prefix (:func:`quoted_prefix`) and the whole ``length`` give the same answer as the whole text.
    """
    length = len(text) if length is None else length
    cleaned = neutralise(redact(quoted_prefix(text, limit)))
    if length <= limit + REDACTION_MARGIN and len(cleaned) <= limit:
        return cleaned
    return f"{cleaned[:limit]}… [cut at {limit} of {length} characters]"


def quoted_prefix(text: str, limit: int) -> str:
    """The part of ``text`` that :func:`quotable` reads: what to keep of a text quoted later."""
    return text[: limit + REDACTION_MARGIN]


def format_number(value: float) -> str:
    """A cap or count as a person writes it: ``5`` rather than ``5.0``, ``2.5`` as is."""
    return str(int(value)) if float(value).is_integer() else repr(value)


def denial(
    tool: str,
    hits: Sequence[Hit],
    previous_result: str | None,
    config: BreakerConfig,
    failures: Sequence[FailureHit] = (),
    refused: bool = False,
) -> str:
    """The text a denied call returns to the model; it starts with ``REPEAT_TOOL_BLOCKED:``.

    ``previous_result`` is already :func:`quotable` (it is prepared when it is recorded). A call
    stopped by the failure track alone gets :func:`_failure_denial`; ``refused`` says an operator
    was asked this turn to exempt what hit and did not.
    """
    if not hits:
        return "\n".join([*_failure_denial(tool, failures, config), *_refused_lines(refused)])
    name = quotable_inline(tool, config.previewChars)
    lines = [
        f"{PREFIX} this `{name}` call was not run: it repeats an action this agent already took "
        f"within its last {config.window} tool calls.",
        "Repeated (occurrences including this call / cap):",
        *(f"- {_hit_line(hit, config)}" for hit in hits),
        "Changing the description, timeoutMs, --max-time or the spelling of the host does not make "
        "this a new action: it is still the same action on the same resource.",
    ]
    lines.extend(_quoted("The earlier attempt returned", previous_result))
    source = "what the earlier attempts returned" if previous_result is None else "that result"
    lines.append(
        f"Instead: work from {source}; if you need something different, change the resource itself "
        "(another URL, path, query or command); if something keeps blocking you, stop and tell the "
        "user what it is."
    )
    if any(hit.fingerprint.local for hit in hits):
        lines.append(_local_note(config))
    if failures:
        lines.extend(_failure_denial(tool, failures, config)[1:])
    lines.extend(_refused_lines(refused))
    return "\n".join(lines)


def stall_denial(tool: str, stall: Stall, result: str | None, config: BreakerConfig) -> str:
    """The text of a call denied for no progress (``sameResultLimit``), quoting the result."""
    name = quotable_inline(tool, config.previewChars)
    limit = format_number(config.sameResultLimit if config.sameResultLimit is not None else stall.limit)
    if stall.rule == "cycle":
        why = (
            f"it repeats an earlier call, and your last {stall.count} calls only brought back results "
            "you already had, with nothing changed in between"
        )
    elif stall.rule == "reworded":
        why = (
            f"your last {stall.count} calls on the same target, however worded, returned the identical "
            "result, with nothing changed in between"
        )
    else:
        why = (
            f"the same call already returned the same result {stall.count} times, with nothing changed "
            "in between"
        )
    lines = [
        f"{PREFIX} this `{name}` call was not run: {why} (sameResultLimit: {limit}). Running it again "
        "cannot bring anything new.",
        *_quoted("It returned each time", result),
        "Instead: work from that result; change what you ask for (another argument, file, command or "
        "approach); if nothing you can change would help, stop and tell the user what keeps coming back.",
    ]
    return "\n".join(lines)


def ask_reason(tool: str, hits: Sequence[Hit], config: BreakerConfig) -> str:
    """Why the operator is asked: which local target repeated, and what approving allows."""
    name = quotable_inline(tool, config.previewChars)
    repeated = "; ".join(_hit_line(hit, config) for hit in hits)
    return (
        f"Repeat Tool Breaker: this `{name}` call repeats a local target ({repeated}). "
        "Approving lets local targets (net, site, sink, family, verb) repeat for the rest of this "
        "turn; identical repeats of the same call (exact:, cmd:) stay blocked."
    )


def limit_ask_reason(
    tool: str, hits: Sequence[Hit], failures: Sequence[FailureHit], config: BreakerConfig
) -> str:
    """Why the operator is asked under ``onLimit: ask``, and what approving or declining does."""
    name = quotable_inline(tool, config.previewChars)
    reached = [_hit_line(hit, config) for hit in hits]
    reached.extend(f"{_failure_line(failure, config)} failures in a row" for failure in failures)
    return (
        f"Repeat Tool Breaker: this `{name}` call reached a limit ({'; '.join(reached)}). "
        "Approving stops counting these measures for the rest of this turn, so later calls carrying "
        "them run; declining keeps them blocked until the next user message."
    )


def warn_notice(key: str, count: int, cap: float, config: BreakerConfig) -> Notice:
    """``warnAt``: a light nudge that the agent is repeating itself."""
    shown = quotable_inline(key, config.previewChars)
    text = (
        f"{NOTICE_PREFIX} you are repeating yourself: `{shown}` has come up {count} times in your "
        f"last {config.window} tool calls (calls carrying it are blocked at {format_number(cap)}). "
        "Consider whether this route is working, and whether another approach would get there faster."
    )
    return Notice(text, f"{shown} x{count}")


def summarize_notice(key: str, count: int, cap: float, config: BreakerConfig) -> Notice:
    """``summarizeAt``: the demand to take stock and name the approaches not tried yet."""
    shown = quotable_inline(key, config.previewChars)
    text = "\n".join(
        [
            f"{NOTICE_PREFIX} `{shown}` has now come up {count} times in your last {config.window} tool "
            f"calls (calls carrying it are blocked at {format_number(cap)}).",
            "Before your next tool call, stop and summarise your progress:",
            "1. What you have established, and how you know it.",
            "2. What you have tried that failed, and why it appears to have failed.",
            "3. At least two approaches you have not tried yet, and which one you will try next.",
            "Then take one of them. Do not repeat an approach you have listed as failed; if you are "
            "working in batches, make each batch larger.",
        ]
    )
    return Notice(text, f"{shown} x{count}: summarise progress")


def failure_notice(key: str, streak: int, failure: Failure, config: BreakerConfig) -> Notice:
    """``failWarnAt``: the same target keeps failing; read the error instead of retrying."""
    shown = quotable_inline(key, config.previewChars)
    blocked = (
        f" Calls carrying it are blocked after {format_number(config.failLimit)} failures in a row."
        if config.failLimit is not None
        else ""
    )
    text = "\n".join(
        [
            f"{NOTICE_PREFIX} `{shown}` has failed {streak} times in a row; the last time "
            f"{quotable_inline(failure.describe(), config.previewChars)}.{blocked}",
            "Repeating it is unlikely to change that. Before trying it again:",
            "1. Read the error above and say what it actually says.",
            "2. If it names a target (a URL, a path, a host, a command), check that the target exists "
            "instead of adjusting the request around it.",
            "3. If it names a cause, fix the cause instead of running the same call again.",
        ]
    )
    return Notice(text, f"{shown} failed x{streak}")


def _failure_denial(tool: str, failures: Sequence[FailureHit], config: BreakerConfig) -> list[str]:
    """The failure track's part of a denial: what keeps failing, why, and the last failure quoted."""
    name = quotable_inline(tool, config.previewChars)
    latest = max(failures, key=lambda hit: hit.streak.serial).streak
    lines = [
        f"{PREFIX} this `{name}` call was not run: it carries a target that failed on each of its "
        "last attempts in a row, and trying it again as it is will not make it work.",
        "Failing (failures in a row / failLimit):",
        *(f"- {_failure_line(hit, config)}" for hit in failures),
        f"The last failure: {quotable_inline(latest.failure.describe(), config.previewChars)}. "
        "It returned (quoted, each line starts with '| '):",
        *(f"| {line}" for line in (latest.quote.splitlines() or [""])),
        "(end of quoted result)",
        "Instead: read that error and fix its cause, or check that the target exists; a different "
        "call (reading a log, grepping the code, another endpoint) is not blocked by this.",
    ]
    return lines


def _quoted(heading: str, result: str | None) -> list[str]:
    """A quoted result (already :func:`quotable`), each line marked so it cannot pose as ours."""
    if result is None:
        return ["No result of the earlier attempt was recorded."]
    return [
        f"{heading} (quoted, each line starts with '| '):",
        *(f"| {line}" for line in (result.splitlines() or [""])),
        "(end of quoted result)",
    ]


def _refused_lines(refused: bool) -> list[str]:
    if not refused:
        return []
    return [
        "An operator was asked this turn to exempt what repeated here and did not approve (or no "
        "approval channel was available), so it stays blocked until the next user message."
    ]


def _failure_line(hit: FailureHit, config: BreakerConfig) -> str:
    key = quotable_inline(hit.fingerprint.key, config.previewChars)
    return f"{key} {hit.streak.count}/{format_number(hit.limit)}"


def _hit_line(hit: Hit, config: BreakerConfig) -> str:
    return f"{quotable_inline(hit.fingerprint.key, config.previewChars)} {hit.count}/{format_number(hit.cap)}"


def _local_note(config: BreakerConfig) -> str:
    if config.localHosts == "deny":
        return (
            "The repeated target is a local address and localHosts is 'deny', so local calls are "
            "counted like any other host. An operator can set the repeat-tool-breaker option "
            "localHosts to 'ask' (ask once per turn before blocking a local repeat) or 'allow' "
            "(never count local traffic)."
        )
    return (
        "The repeated target is a local address; under localHosts: 'ask' repeating it needs an "
        "operator's approval, and none was given for it this turn. An operator can set the "
        "repeat-tool-breaker option localHosts to 'allow' (never count local traffic)."
    )
