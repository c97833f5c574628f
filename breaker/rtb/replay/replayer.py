"""Running the live gate's ``Breaker`` offline over a recorded session.

The replay follows the live path, one call at a time, a session's agents interleaved as dsh
logged their events (``sessions.interleaved``: the order in which the worker forgets its idlest
agent past ``maxAgents`` is then the live one, by the one rule of ``agents.OPERATIONS``; a guard,
which the log does not hold, moves no agent after its preflight): ``is_counted`` to skip excluded tools,
``precheck`` (the shim's pre-execute: the ask, and the agent made the most recent, as
``agents.OPERATIONS`` says) then ``commit`` (the guard: the verdict ``precheck`` kept takes
effect, as the shim's guard commits it live; ``decide`` for an approved ask), and
``record_result`` for each result and ``human_message`` for each human turn. What it does not
replay: a call the shim lets through on a pass skips the precheck (a pass is given only where the
call is surely allowed and never asked about, and the agent ends the most recent either way), and
calls of one agent in flight at once (a recording holds them one after another). There is no
second implementation of the counting rules here, so what a replay reports is what the gate does.

Pure: events and a configuration in, a report out.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from breaker.core.config import BreakerConfig
from breaker.core.decision import Breaker
from breaker.core.history.caps import cap_of
from breaker.core.history.results import RESULT_TEXT_CHARS
from breaker.core.judging.verdicts import Ask, Deny, Hit, Reached
from breaker.core.reading.fingerprints import (
    ToolCall,
    distinct,
)
from breaker.core.reading.outcomes import shell_end
from breaker.core.reading.shell import SHELL_TOOLS
from breaker.rtb.read.sessions import (
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


@dataclass(slots=True)
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
    counts: tuple[Reached, ...] = ()
    #: A stopped call's limits reached, each with its own count (its verdict's ``reached``).
    reached: tuple[Reached, ...] = ()
    #: The advisories (warnAt, summarizeAt, failWarnAt) the call's result would have carried.
    notices: tuple[str, ...] = ()

    @property
    def stopped(self) -> bool:
        """The call would not have run: denied, or asked and not approved."""
        return self.verdict in ("denied", "asked")

    @property
    def measured(self) -> tuple[Reached, ...]:
        """The counts every view shows for the call: a stopped call's limits reached (the same
        whether or not window counts were kept), else its window counts (when they were)."""
        return self.reached if self.stopped else self.counts


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
    approved, not_dispatched = lookahead(events)
    replayer = Replayer(config, approved=approved, not_dispatched=not_dispatched, counts=counts)
    replays = [call for event in events for call in replayer.feed(event)]
    return replays + replayer.finish()


def lookahead(events: Iterable[Event]) -> tuple[frozenset[tuple[str, str]], frozenset[tuple[str, str]]]:
    """What deciding a call needs from later in its log: (the calls whose recorded approval was
    granted, the calls dsh never dispatched), as (agent, call id).

    A replayed ask of an approved call is approved too; every other replayed ask is taken as
    unanswered, which is what a headless run does with it.
    """
    approved: set[tuple[str, str]] = set()
    not_dispatched: set[tuple[str, str]] = set()
    for event in events:
        if isinstance(event, ApprovalEvent) and event.approved:
            approved.add((event.agent, event.call_id))
        elif isinstance(event, ResultEvent) and event.error_code == NOT_DISPATCHED_CODE:
            not_dispatched.add((event.agent, event.call_id))
    return frozenset(approved), frozenset(not_dispatched)


#: Calls held back waiting for their result before the oldest is handed out without one.
MAX_WAITING = 10_000
#: What ``Replayer.feed`` hands out when no call is complete.
_NONE: tuple[CallReplay, ...] = ()


class _Entry:
    """A call waiting for its result: its replay so far, and whether it is complete."""

    __slots__ = ("done", "replay")

    def __init__(self, replay: CallReplay) -> None:
        self.replay = replay
        self.done = False


class Replayer:
    """One session replayed one event at a time: ``feed`` each event in log order and get back
    the calls it completed (in call order: a call is complete once its result is in); ``finish``
    hands out the rest. Memory holds the calls waiting for a result, not the session."""

    def __init__(
        self,
        config: BreakerConfig,
        *,
        approved: Container[tuple[str, str]] = frozenset(),
        not_dispatched: Container[tuple[str, str]] = frozenset(),
        counts: bool = False,
    ) -> None:
        self.config = config
        self.approved = approved
        self.not_dispatched = not_dispatched
        self.counts = counts
        self.breaker = Breaker(config)
        self._numbers: dict[str, int] = {}
        self._queue: deque[_Entry] = deque()
        self._awaiting: dict[tuple[str, str], _Entry | list[_Entry]] = {}

    def feed(self, event: Event) -> Sequence[CallReplay]:
        if isinstance(event, CallEvent):
            self._call(event)
        elif isinstance(event, ResultEvent):
            self._result(event)
            return self._complete()
        elif isinstance(event, StepStart):
            self.breaker.new_step(event.agent)
        elif isinstance(event, HumanTurn):
            self.breaker.human_message(event.agent)
        return self._complete() if self._queue and self._queue[0].done else _NONE

    def finish(self) -> list[CallReplay]:
        out = [entry.replay for entry in self._queue]
        self._queue.clear()
        self._awaiting.clear()
        return out

    def _call(self, event: CallEvent) -> None:
        agent, call = event.agent, event.call
        self._numbers[agent] = number = self._numbers.get(agent, 0) + 1
        key = (agent, call.call_id)
        replay = CallReplay(number, agent, call.call_id, call.name, "no-result", "not-counted")
        replay.arguments, replay.time = call.arguments, event.time
        self._decide(replay, call, key)
        if self.counts and replay.verdict != "not-run":
            replay.counts = self._window_counts(event)
        entry = _Entry(replay)
        self._queue.append(entry)
        earlier = self._awaiting.get(key)
        if earlier is None:
            self._awaiting[key] = entry
        else:  # a harness may reuse a call id: its results go to its calls in order
            self._awaiting[key] = [*earlier, entry] if isinstance(earlier, list) else [earlier, entry]
        if len(self._queue) > MAX_WAITING:
            self._queue[0].done = True  # its result is too far on: handed out without one

    def _decide(self, replay: CallReplay, call: ToolCall, key: tuple[str, str]) -> None:
        """The replayed configuration's verdict on ``call``, into ``replay``."""
        breaker, agent = self.breaker, replay.agent
        if key in self.not_dispatched:
            replay.verdict = "not-run"
        elif breaker.is_counted(call.name):
            asked = breaker.precheck(agent, call)
            if isinstance(asked, Ask) and key not in self.approved:
                replay.verdict, replay.hits, replay.message = "asked", asked.hits, asked.reason
                replay.reached = asked.reached
                return
            # As live: the verdict the precheck kept takes effect (``commit``), the call read and
            # judged once; an approved ask, or a call whose ask is pending, goes to the guard.
            decided = None if isinstance(asked, Ask) else breaker.commit(agent, call.call_id)
            if decided is None:
                decided = breaker.decide(agent, call)
            if isinstance(decided, Deny):
                replay.verdict, replay.hits, replay.message = "denied", decided.hits, decided.message
                replay.reached = decided.reached
            else:
                replay.verdict = "allowed"
                if decided.notice is not None:
                    replay.notices = (decided.notice.text,)

    def _result(self, event: ResultEvent) -> None:
        key = (event.agent, event.call_id)
        awaiting = self._awaiting.pop(key, None)
        if awaiting is None:
            return  # a result of no call this replay saw
        if isinstance(awaiting, list):  # several calls under one id: the oldest's
            entry, *later = awaiting
            if later:
                self._awaiting[key] = later if len(later) > 1 else later[0]
        else:
            entry = awaiting
        replay = entry.replay
        replay.recorded = _recorded_outcome(event)
        entry.done = True
        if not _tool_output_known(replay):
            return
        text = _text_seen(replay, event)
        facts = result_facts(replay, event, text)
        noticed = self.breaker.record_result(event.agent, event.call_id, text[:RESULT_TEXT_CHARS], facts)
        if noticed:
            replay.notices = tuple(notice.text for notice in noticed)

    def _complete(self) -> Sequence[CallReplay]:
        queue = self._queue
        if not queue or not queue[0].done:
            return _NONE
        out = []
        while queue and queue[0].done:
            out.append(queue.popleft().replay)
        return out

    def _window_counts(self, event: CallEvent) -> tuple[Reached, ...]:
        """Each capped fingerprint of the call as the window keys it, with how many entries of its
        agent's window hold it now."""
        config, breaker = self.config, self.breaker
        counted: list[Reached] = []
        for fp in distinct(breaker.keyed(event.agent, event.call)):
            cap = cap_of(fp, config)
            if cap is not None:
                counted.append(Reached("limits", fp.key, breaker.window_count(event.agent, fp.key), cap))
        return tuple(counted)


def _tool_output_known(replay: CallReplay) -> bool:
    """Whether the result to feed back for a replayed call is known: the replayed denial, or the
    tool's output. A call the recording stopped (its breaker's denial, a refused approval) that
    this replay lets run has no output in the log: the tool never ran. Its result is not fed, so a
    later denial quotes what a tool returned, never an earlier denial, as "the earlier attempt"."""
    if replay.verdict in ("not-counted", "not-run"):
        return False
    return replay.verdict != "allowed" or replay.recorded not in ("blocked", "approval-required")


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


def _recorded_outcome(result: ResultEvent) -> RecordedOutcome:
    if result.error_code == NOT_DISPATCHED_CODE:
        return "not-dispatched"
    if not result.is_error:
        return "executed"
    if result.text.startswith(BLOCKED_PREFIX):
        return "blocked"
    if any(marker in result.text for marker in APPROVAL_REFUSED_MARKERS):
        return "approval-required"
    return "failed"
