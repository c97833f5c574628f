"""Every text the model or the operator reads: the denial, the ask reason, the notices, and
what they quote.

The denial is the model's only new information when a call is blocked, so it says which
fingerprints hit and how often, why cosmetic changes do not help, what the earlier attempt
returned, and what to do instead. Anything quoted (a result, a fingerprint, a tool name) came from
the model or a tool, so it goes through ``breaker.core.wording.redaction`` first (secrets redacted,
tool-call markup defused, invisible and control characters dropped or shown): the denial must not
leak a token, nor read to a parser as a tool call of its own, nor carry a character the reader
cannot see.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from breaker.core.config import BreakerConfig
from breaker.core.judging import Notice
from breaker.core.wording.redaction import (
    REDACTION_MARGIN,
    neutralise,
    quotable,
    quotable_inline,
    quoted_prefix,
    redact,
)

if TYPE_CHECKING:  # named in annotations only: the worker's start imports this module, not these
    from breaker.core.judging import FailureHit, Hit, Reached, Stage, Stall
    from breaker.core.reading import Failure

#: How a name or key is quoted inside a sentence: ``quotable_inline``, or an agent's ``InlineQuotes``.
Inline = Callable[[str, int], str]
#: Texts an agent's ``InlineQuotes`` keeps at most (a loop's denials quote a handful again and again).
INLINE_QUOTES_KEPT = 16

PREFIX = "REPEAT_TOOL_BLOCKED:"
NOTICE_PREFIX = "REPEAT_TOOL_NOTICE:"

#: What quoting is, re-exported: ``breaker.core.wording.redaction`` owns it.
__all__ = [
    "NOTICE_PREFIX",
    "PREFIX",
    "REDACTION_MARGIN",
    "RESPELLED",
    "ask_reason",
    "declined_ask_notice",
    "denial",
    "failure_notice",
    "format_number",
    "limit_ask_reason",
    "neutralise",
    "quotable",
    "quotable_inline",
    "quoted_prefix",
    "redact",
    "stage_notice",
    "stall_denial",
    "summarize_notice",
    "warn_notice",
]


#: Said in a denial whose call changed only what reading strips from the earlier attempt.
RESPELLED = (
    "Changing the description, timeoutMs, --max-time or the spelling of the host does not make "
    "this a new action: it is still the same action on the same resource."
)


def format_number(value: float) -> str:
    """A cap or count as a person writes it: ``5`` rather than ``5.0``, ``2.5`` as is."""
    return str(int(value)) if float(value).is_integer() else repr(value)


#: What a denial of a poll adds: how to wait instead of asking again.
WAIT = (
    "If you are waiting for something to finish or change, wait for it instead of asking again: a "
    "blocking wait (the tool's own wait or watch option, a command that returns when it is done), or "
    "a sleep before the next check."
)


def denial(
    tool: str,
    hits: Sequence[Hit],
    previous_result: str | None,
    config: BreakerConfig,
    failures: Sequence[FailureHit] = (),
    refused: bool = False,
    *,
    respelled: bool = False,
    poll: bool = False,
    inline: Inline = quotable_inline,
) -> str:
    """The text a denied call returns to the model; it starts with ``REPEAT_TOOL_BLOCKED:``.

    ``previous_result`` is already :func:`quotable` (it is prepared when it is recorded). A call
    stopped by the failure track alone gets :func:`_failure_denial`; ``refused`` says an operator
    was asked this turn to exempt what hit and did not; ``respelled``, that the call changed only
    what reading strips from the earlier one (``history.spellings``): then, and only then, it is
    told that such changes do not make a new action; ``poll``, that it asks again what the call
    before it asked: then it is told how to wait instead. ``inline`` quotes the tool's name and
    the keys (an agent's ``InlineQuotes``: the same text quoted alike, redacted once).
    """
    if not hits:
        return "\n".join([*_failure_denial(tool, failures, config, inline), *_refused_lines(refused)])
    name = inline(tool, config.previewChars)
    lines = [
        f"{PREFIX} this `{name}` call was not run: it repeats an action this agent already took "
        f"within its last {config.window} tool calls.",
        "Repeated (occurrences including this call / cap):",
        *(f"- {_hit_line(hit, config, inline)}" for hit in hits),
    ]
    if respelled:
        lines.append(RESPELLED)
    lines.extend(_quoted("The earlier attempt returned", previous_result))
    source = "what the earlier attempts returned" if previous_result is None else "that result"
    lines.append(
        f"Instead: work from {source}; if you need something different, change the resource itself "
        "(another URL, path, query or command); if something keeps blocking you, stop and tell the "
        "user what it is."
    )
    if poll:
        lines.append(WAIT)
    if hits and all(hit.fingerprint.local for hit in hits):  # only then does localHosts matter
        lines.append(_local_note(config))
    if failures:
        lines.extend(_failure_body(failures, config, inline))
    lines.extend(_refused_lines(refused))
    return "\n".join(lines)


def stall_denial(
    tool: str, stall: Stall, result: str | None, config: BreakerConfig, inline: Inline = quotable_inline
) -> str:
    """The text of a call denied for no progress (``sameResultLimit``), quoting the result."""
    name = inline(tool, config.previewChars)
    limit = format_number(config.sameResultLimit if config.sameResultLimit is not None else stall.limit)
    if stall.rule == "cycle":
        why = (
            f"it repeats an earlier call, and your last {stall.count} calls only brought back results "
            "you already had, with nothing changed in between"
        )
    elif stall.rule == "failed":
        why = (
            f"what it asks for already failed {stall.count} times with the identical error, with nothing "
            "changed in between (the same original to replace, or a lookup it keeps, whatever else changed)"
        )
    elif stall.rule == "variants":
        why = (
            f"your last {stall.count} calls of this tool failed with the identical error, whatever their "
            "arguments, with nothing changed in between"
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
    if stall.poll:
        lines.append(WAIT)
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


def declined_ask_notice(measures: frozenset[str], config: BreakerConfig) -> Notice:
    """What the model reads after a call the operator was asked about ended without running: the
    harness words that result (a refusal, or no one to ask, as a headless dsh), not why it asked.
    ``measures``: what a limit ask named; empty for the local ask."""
    if measures:
        named = ", ".join(quotable_inline(key, config.previewChars) for key in sorted(measures))
        why = f"it reached a repeat limit ({named}), which onLimit: 'ask' puts to an operator"
        stays = "Calls carrying what it reached stay blocked"
    else:
        why = "it repeated a local target, which localHosts: 'ask' puts to an operator"
        stays = "Repeats of local targets stay blocked"
    text = "\n".join(
        [
            f"{NOTICE_PREFIX} the call above was not run: {why} before blocking it, and it was not "
            "approved (the operator declined, or dsh has no one to ask, as when it runs headless). "
            f"{stays} until the next user message; asking again will not run it.",
            "Instead: work from the results you already have, or fix what keeps the target from "
            "answering as you need; a call that does not repeat it is not blocked.",
        ]
    )
    return Notice(text, "an asked call was not approved")


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


def _blocked_at(cap: float, config: BreakerConfig) -> str:
    """Where calls carrying a capped key are stopped: at its cap, or sooner by the evidence of
    their results where the configuration reads it (``failLimit``, ``sameResultLimit``)."""
    sooner = [
        word
        for word, limit in (("failing", config.failLimit), ("answering alike", config.sameResultLimit))
        if limit is not None
    ]
    when = f", or sooner while they keep {' or '.join(sooner)}" if sooner else ""
    return f"calls carrying it are blocked at {format_number(cap)}{when}"


def warn_notice(key: str, count: int, cap: float, config: BreakerConfig) -> Notice:
    """``warnAt``: a light nudge that the agent is repeating itself."""
    shown = quotable_inline(key, config.previewChars)
    text = (
        f"{NOTICE_PREFIX} you are repeating yourself: `{shown}` has come up {count} times in your "
        f"last {config.window} tool calls ({_blocked_at(cap, config)}). "
        "Consider whether this route is working, and whether another approach would get there faster."
    )
    return Notice(text, f"{shown} x{count}")


def summarize_notice(key: str, count: int, cap: float, config: BreakerConfig) -> Notice:
    """``summarizeAt``: the demand to take stock and name the approaches not tried yet."""
    shown = quotable_inline(key, config.previewChars)
    text = "\n".join(
        [
            f"{NOTICE_PREFIX} `{shown}` has now come up {count} times in your last {config.window} tool "
            f"calls ({_blocked_at(cap, config)}).",
            "Before your next tool call, stop and summarise your progress:",
            "1. What you have established, and how you know it.",
            "2. What you have tried that failed, and why it appears to have failed.",
            "3. At least two approaches you have not tried yet, and which one you will try next.",
            "Then take one of them. Do not repeat an approach you have listed as failed; if you are "
            "working in batches, make each batch larger.",
        ]
    )
    return Notice(text, f"{shown} x{count}: summarise progress")


def stage_notice(stage: Stage, config: BreakerConfig) -> Notice:
    """The advisory a call earned below its cap (``judging.notices.stage``), worded."""
    word = summarize_notice if stage.summarize else warn_notice
    return word(stage.key, stage.times, stage.cap, config)


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


def _failure_denial(
    tool: str, failures: Sequence[FailureHit], config: BreakerConfig, inline: Inline
) -> list[str]:
    """The failure track's part of a denial: what keeps failing, why, and the last failure quoted."""
    name = inline(tool, config.previewChars)
    return [
        f"{PREFIX} this `{name}` call was not run: it carries a target that failed on each of its "
        "last attempts in a row, and trying it again as it is will not make it work.",
        *_failure_body(failures, config, inline),
    ]


def _failure_body(failures: Sequence[FailureHit], config: BreakerConfig, inline: Inline) -> list[str]:
    """A failure denial after its first line: what a denial for a repeat adds when the call also
    carries a failing target."""
    latest = max(failures, key=lambda hit: hit.streak.serial).streak
    return [
        "Failing (failures in a row / failLimit):",
        *(f"- {_failure_line(hit, config, inline)}" for hit in failures),
        f"The last failure: {inline(latest.failure.describe(), config.previewChars)}. "
        "It returned (quoted, each line starts with '| '):",
        *(f"| {line}" for line in (latest.quote.splitlines() or [""])),
        "(end of quoted result)",
        "Instead: read that error and fix its cause, or check that the target exists; a different "
        "call (reading a log, grepping the code, another endpoint) is not blocked by this.",
    ]


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


def _failure_line(hit: FailureHit, config: BreakerConfig, inline: Inline = quotable_inline) -> str:
    key = inline(hit.fingerprint.key, config.previewChars)
    return f"{key} {hit.streak.count}/{format_number(hit.limit)}"


def _hit_line(hit: Hit, config: BreakerConfig, inline: Inline = quotable_inline) -> str:
    return f"{inline(hit.fingerprint.key, config.previewChars)} {hit.count}/{format_number(hit.cap)}"


class InlineQuotes:
    """``quotable_inline`` for one agent's denials, with the last ``INLINE_QUOTES_KEPT`` texts it
    quoted kept: a loop's denials name the same tool and keys each time, and redacting a key is
    most of a denial's cost. The same text and limit always quote alike, so keeping one changes
    no word of any denial."""

    __slots__ = ("_kept",)

    def __init__(self) -> None:
        self._kept: dict[tuple[str, int], str] = {}

    def __call__(self, text: str, limit: int) -> str:
        quote = self._kept.get((text, limit))
        if quote is None:
            quote = quotable_inline(text, limit)
            if len(self._kept) >= INLINE_QUOTES_KEPT:
                del self._kept[next(iter(self._kept))]
            self._kept[text, limit] = quote
        return quote


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


#: What each rule's counts are named in ``logDenials``' line (``denial_counts``).
_COUNTED_AS = {"limits": "reached", "failLimit": "failed in a row"}


def denial_counts(reached: Sequence[Reached]) -> str:
    """What a denial counted, as ``logDenials``' stderr line names it (node-shim/call/hooks.js
    prints it): the kinds whose caps it reached, those that failed ``failLimit`` times in a row
    (``reached exact 5/5, cmd 5/5; failed in a row exact 3/3``), else that it made no progress.
    Never a key's arguments: only its kind."""
    named: dict[str, list[str]] = {}
    for one in reached:
        name = _COUNTED_AS.get(one.rule)
        if name is not None:
            named.setdefault(name, []).append(f"{one.kind} {one.count}/{format_number(one.limit)}")
    lists = [f"{name} {', '.join(counts)}" for name, counts in named.items()]
    return "; ".join(lists) or "no progress: the same result again"
