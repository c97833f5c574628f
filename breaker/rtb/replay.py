"""Running the live gate's ``Breaker`` offline over a recorded session.

The replay follows the live path, one call at a time: ``is_counted`` to skip excluded tools,
``precheck`` (the shim's pre-execute: the ask, and the agent made the most recent, as
``agents.OPERATIONS`` says) then ``decide`` (the guard; live, the shim commits the verdict
``precheck`` kept, which is the verdict ``decide`` gives when nothing came between), and
``record_result`` for each result and ``human_message`` for each human turn. What it does not
replay: a call the shim lets through on a pass skips the precheck (a pass is given only where the
call is surely allowed and never asked about, and the agent ends the most recent either way), and
calls of one agent in flight at once (a recording holds them one after another). There is no
second implementation of the counting rules here, so what a replay reports is what the gate does.

Pure: events and a configuration in, a report out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from breaker.core.config import BreakerConfig
from breaker.core.decision import Breaker
from breaker.core.history.results import RESULT_TEXT_CHARS
from breaker.core.judging.verdicts import Allow, Ask, Deny, Hit
from breaker.core.reading.fingerprints import SHELL_TOOLS, fingerprint_call
from breaker.core.reading.outcomes import shell_end
from breaker.rtb.sessions import (
    NOTHING_KNOWN,
    About,
    ApprovalEvent,
    CallEvent,
    Event,
    HumanTurn,
    ResultEvent,
    Session,
    StepStart,
)

#: What the recorded run did with a call, read from the result dsh logged for it.
RecordedOutcome = Literal["executed", "failed", "blocked", "approval-required", "not-dispatched", "no-result"]
#: What the breaker under the replayed configuration does with it; ``not-run`` is a call that
#: never reached the tool pipeline in the recording (so it never reached the gate either).
Verdict = Literal["allowed", "denied", "asked", "not-counted", "not-run"]

#: The start of every result the breaker's denial produced (dsh prefixes guard texts with "Error: ").
BLOCKED_PREFIX = "Error: REPEAT_TOOL_BLOCKED"
#: Fragments of the results dsh sends when an approval was not granted (no answerer, or rejected).
APPROVAL_REFUSED_MARKERS = ("requires approval", "rejected tool")
#: The markers dsh's shell tools end a result with (parseExitStatus in @deepseek-ai/dsh-shell).
#: The first line of a web_fetch result.
_FETCHED = re.compile(r"Fetched \S+ \(HTTP (\d{3})\)")
#: The error code dsh logs for a call it skipped before the pipeline (the turn was cancelled).
NOT_DISPATCHED_CODE = "ABORTED_BEFORE_DISPATCH"


@dataclass(frozen=True, slots=True)
class CallReplay:
    """One call: what was recorded, and what the replayed configuration decides.

    ``number`` counts the calls of its agent, from 1: "caught at call 5" means the agent's 5th.
    """

    number: int
    agent: str
    call_id: str
    tool: str
    recorded: RecordedOutcome
    verdict: Verdict
    hits: tuple[Hit, ...] = ()
    message: str = ""
    #: The call's arguments as logged, and when (ms since the epoch).
    arguments: object = None
    time: float | None = None
    #: Kept when the replay is asked for them: each capped fingerprint of the call with how many
    #: entries of the agent's window hold it once the call was decided, and its cap.
    counts: tuple[Hit, ...] = ()
    #: The advisories (warnAt, summarizeAt, failWarnAt) the call's result would have carried.
    notices: tuple[str, ...] = ()

    @property
    def stopped(self) -> bool:
        """The call would not have run: denied, or asked and not approved."""
        return self.verdict in ("denied", "asked")


@dataclass(frozen=True, slots=True)
class SessionReplay:
    """Every call of one session, replayed."""

    session_id: str
    calls: tuple[CallReplay, ...]
    about: About = NOTHING_KNOWN
    agents: tuple[str, ...] = ()

    @property
    def stops(self) -> tuple[CallReplay, ...]:
        return tuple(call for call in self.calls if call.stopped)

    @property
    def first_stop(self) -> CallReplay | None:
        return next((call for call in self.calls if call.stopped), None)

    @property
    def recorded_outcomes(self) -> dict[RecordedOutcome, int]:
        """How many calls the recorded run ended each way, in order of first appearance."""
        counts: dict[RecordedOutcome, int] = {}
        for call in self.calls:
            counts[call.recorded] = counts.get(call.recorded, 0) + 1
        return counts

    @property
    def differences(self) -> int:
        """Calls this configuration stops that the recorded run ran, or the other way round."""
        return sum(
            1
            for call in self.calls
            if call.recorded in ("executed", "blocked", "approval-required")
            and call.stopped != (call.recorded != "executed")
        )


def replay_session(session: Session, config: BreakerConfig, *, counts: bool = False) -> SessionReplay:
    """Replay one session with a fresh ``Breaker`` under ``config`` (``counts``: keep each call's
    window counts, for a timeline)."""
    calls = tuple(replay_events(session.events, config, counts=counts))
    return SessionReplay(session.session_id, calls, session.about, session.agents)


def replay_events(
    events: Sequence[Event], config: BreakerConfig, *, counts: bool = False
) -> list[CallReplay]:
    """Feed ``events`` to a fresh ``Breaker`` in log order; one ``CallReplay`` per call."""
    breaker = Breaker(config)
    notices: dict[tuple[str, str], list[str]] = {}
    results = _results_by_call(events)
    approved = _approved_calls(events)
    replays: list[CallReplay] = []
    calls_per_agent: dict[str, int] = {}
    replay_of: dict[tuple[str, str], CallReplay] = {}
    for event in events:
        if isinstance(event, HumanTurn):
            breaker.human_message(event.agent)
        elif isinstance(event, StepStart):
            breaker.new_step(event.agent)
        elif isinstance(event, CallEvent):
            calls_per_agent[event.agent] = number = calls_per_agent.get(event.agent, 0) + 1
            recorded = _recorded_outcome(results.get((event.agent, event.call.call_id)))
            replay = _replay_call(breaker, event, number, recorded, approved)
            if counts:
                replay = replace(replay, counts=_window_counts(breaker, event, config))
            if replay.notices:
                notices.setdefault((event.agent, event.call.call_id), []).extend(replay.notices)
            replays.append(replay)
            replay_of.setdefault((event.agent, event.call.call_id), replay)
        elif isinstance(event, ResultEvent):
            answered = replay_of.get((event.agent, event.call_id))
            if answered is not None and _tool_output_known(answered):
                text = _text_seen(answered, event)
                noticed = breaker.record_result(
                    event.agent, event.call_id, text[:RESULT_TEXT_CHARS], result_facts(answered, event, text)
                )
                if noticed:
                    key = (event.agent, event.call_id)
                    notices[key] = [notice.text for notice in noticed]
    if not notices:
        return replays
    return [_with_notices(replay, notices.get((replay.agent, replay.call_id))) for replay in replays]


def _tool_output_known(replay: CallReplay) -> bool:
    """Whether the result to feed back for a replayed call is known: the replayed denial, or the
    tool's output. A call the recording stopped (its breaker's denial, a refused approval) that
    this replay lets run has no output in the log: the tool never ran. Its result is not fed, so a
    later denial quotes what a tool returned, never an earlier denial, as "the earlier attempt"."""
    if replay.verdict in ("not-counted", "not-run"):
        return False
    return replay.verdict != "allowed" or replay.recorded not in ("blocked", "approval-required")


def _with_notices(replay: CallReplay, notices: list[str] | None) -> CallReplay:
    return replay if notices is None else replace(replay, notices=tuple(notices))


def _window_counts(breaker: Breaker, event: CallEvent, config: BreakerConfig) -> tuple[Hit, ...]:
    """Each capped fingerprint of the call, with how many entries of its agent's window hold it now."""
    counted: list[Hit] = []
    for fp in fingerprint_call(event.call, config).fingerprints:
        cap = config.limit_for(fp.kind, fp.key)
        if cap is not None:
            counted.append(Hit(fp, breaker.window_count(event.agent, fp.key), cap))
    return tuple(counted)


def _replay_call(
    breaker: Breaker,
    event: CallEvent,
    number: int,
    recorded: RecordedOutcome,
    approved: frozenset[tuple[str, str]],
) -> CallReplay:
    call = event.call
    base = CallReplay(
        number,
        event.agent,
        call.call_id,
        call.name,
        recorded,
        "not-counted",
        arguments=call.arguments,
        time=event.time,
    )
    if recorded == "not-dispatched":
        return replace(base, verdict="not-run")
    if not breaker.is_counted(call.name):
        return base
    asked = breaker.precheck(event.agent, call)
    if isinstance(asked, Ask) and (event.agent, call.call_id) not in approved:
        return replace(base, verdict="asked", hits=asked.hits, message=asked.reason)
    decided = breaker.decide(event.agent, call)
    if isinstance(decided, Deny):
        return replace(base, verdict="denied", hits=decided.hits, message=decided.message)
    assert isinstance(decided, Allow)
    if decided.notice is not None:
        return replace(base, verdict="allowed", notices=(decided.notice.text,))
    return replace(base, verdict="allowed")


def result_facts(replay: CallReplay, result: ResultEvent, text: str) -> dict[str, object]:
    """The plain facts the shim would have sent with this result, read back from dsh's rendering.

    A log keeps only the text; dsh writes a shell's exit into it (``[exit code: N]`` or
    ``[killed by signal: X]`` as the last line, nothing when it exited 0) and a fetch's status
    into its first line (``Fetched <url> (HTTP N)``). A replayed denial is an error result.
    """
    facts: dict[str, object] = {"isError": result.is_error or replay.verdict == "denied"}
    if replay.verdict == "denied":
        return facts
    if replay.tool.lower() in SHELL_TOOLS:
        code, signal = shell_end(text)
        if signal is None:
            facts["exitCode"] = code
        else:
            facts["signal"] = signal
    else:
        fetched = _FETCHED.match(text)
        if fetched is not None:
            facts["statusCode"] = int(fetched.group(1))
    return facts


def _text_seen(replay: CallReplay, result: ResultEvent) -> str:
    """The result the model would have read: the replayed denial, else the recorded text."""
    return "Error: " + replay.message if replay.verdict == "denied" else result.text


def _results_by_call(events: Iterable[Event]) -> dict[tuple[str, str], ResultEvent]:
    results: dict[tuple[str, str], ResultEvent] = {}
    for event in events:
        if isinstance(event, ResultEvent):
            results.setdefault((event.agent, event.call_id), event)
    return results


def _approved_calls(events: Iterable[Event]) -> frozenset[tuple[str, str]]:
    """Calls whose recorded approval was granted: a replayed ask of one of them is approved too.

    Every other replayed ask is taken as unanswered, which is what a headless run does with it.
    """
    return frozenset(
        (event.agent, event.call_id)
        for event in events
        if isinstance(event, ApprovalEvent) and event.approved
    )


def _recorded_outcome(result: ResultEvent | None) -> RecordedOutcome:
    if result is None:
        return "no-result"
    if result.error_code == NOT_DISPATCHED_CODE:
        return "not-dispatched"
    if not result.is_error:
        return "executed"
    if result.text.startswith(BLOCKED_PREFIX):
        return "blocked"
    if any(marker in result.text for marker in APPROVAL_REFUSED_MARKERS):
        return "approval-required"
    return "failed"
