"""The verdict on one tool call of one agent: allow, deny, or ask the operator first.

``Breaker`` holds each agent's window, failure streaks and turn state and nothing else; every
method is a pure state transition (no clock, no I/O), so a recorded sequence of calls always
replays to the same verdicts. The rules are the seed README's "Counting rules" and "Local
addresses", plus the opt-in escalation of docs/escalation.md: advisory notices below the caps
(``warnAt``, ``summarizeAt``), the failure track (``failWarnAt``, ``failLimit``) and asking at
any cap (``onLimit: ask``).

A notice is decided when the call is allowed (only then is its count known) and handed out with
the call's result (only then can dsh append it), so ``record_result`` returns it.

``decide`` is a plan (the verdict and what it commits, read from the state) applied to the
state. ``precheck`` makes the plan ahead of the guard and keeps it; ``commit`` applies it. Every
change to what a verdict reads (a commit, a result, a human turn, an ask, an approval) drops the
agent's kept plans, so a kept plan applied is exactly what ``decide`` would have done then.
"""

from __future__ import annotations

import math
import re
from array import array
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from breaker.core import messages
from breaker.core.config import BreakerConfig
from breaker.core.fingerprints import CallFingerprints, Fingerprint, ToolCall, fingerprint_call
from breaker.core.identity import Workspace
from breaker.core.outcomes import Failure, Settled, judge
from breaker.core.evidence import CALL_KINDS, Evidence, call_keys, sooner, target_of
from breaker.core.streaks import Streaks
from breaker.core.verdicts import Allow, Ask, Deny, FailureHit, Hit, Notice, Stall
from breaker.core.window import Window, digest, split

AgentId = int | str

#: How many recent short calls keep their fingerprints (shared by all agents), how many arguments
#: such a call may have, and how long its text arguments may be in all.
ANALYSED_CALLS = 256
ANALYSED_ARGS = 16
ANALYSED_CHARS = 4096
Fingerprinter = Callable[[ToolCall, BreakerConfig], CallFingerprints]
#: ``passes`` when no fingerprint is capped at all: nothing can ever be denied.
UNLIMITED_PASSES = 1 << 30


ALLOW = Allow()

#: Which fingerprint a notice names when several cross at once: the most actionable first. A
#: target tells the model what to change; ``exact:`` only quotes the call back (unknown kinds last).
_NAMING_ORDER = ("host", "net", "sink", "site", "family", "verb", "cmd", "exact")


@dataclass(slots=True)
class _Turn:
    """What happened about asks since the last human message."""

    # The local ask (localHosts: ask): made once per turn.
    asked: bool = False
    approved: bool = False
    refused: bool = False
    # Asks not answered yet: call id -> the measures an onLimit ask names (empty: the local ask).
    pending: dict[str, frozenset[str]] = field(default_factory=dict)
    # onLimit: ask: every measure named in an ask this turn (never asked twice), and those approved.
    # Frozen and replaced when they grow: most turns never ask, and the shared empty set costs
    # nothing per agent.
    asked_measures: frozenset[str] = frozenset()
    exempt: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class _Running:
    """An allowed call awaiting its result: what to judge it by, and the notice owed to it."""

    tool: str
    capped: tuple[Fingerprint, ...]  # its capped fingerprints, when the failure track is on
    notice: Notice | None


@dataclass(slots=True)
class _Agent:
    """One agent's state: its window, the quotable results of its allowed calls, its turn."""

    window: Window
    # Only call ids of allowed calls still in the window; None until the result arrives. A result
    # is kept raw (what quoting it reads, and its length): a denial quotes one now and then, and
    # only then is it redacted and neutralised.
    results: dict[str, tuple[str, int] | None] = field(default_factory=dict)
    # Call ids whose latest call was denied: their next result is the denial, never kept. (A
    # harness may reuse one id for many calls; the allowed call's result under it stays quotable.)
    denied: set[str] = field(default_factory=set)
    turn: _Turn = field(default_factory=_Turn)
    streaks: Streaks = field(default_factory=Streaks)
    running: dict[str, _Running] = field(default_factory=dict)
    # What the agent changed (identity: state-aware only, else None); a human turn does not undo it.
    workspace: Workspace | None = None
    # The last preflighted call and its raw fingerprints, for the guard of that call, which
    # follows it in dsh's pipeline: a call is fingerprinted once, not twice.
    preflighted: tuple[ToolCall, tuple[Fingerprint, ...]] | None = None
    # What results say about progress since the last change (sameResultLimit only, else None).
    progress: Evidence | None = None
    # Call id -> the plan its precheck made since the last change a verdict reads (None: none).
    kept: dict[str, _Plan] | None = None
    # Per window entry, oldest first: the highest count any capped key it committed reached then.
    # No capped key in the window counts more than their maximum (see ``passes``).
    peaks: array[int] = field(default_factory=lambda: array("I"))


@dataclass(frozen=True, slots=True)
class _Plan:
    """What deciding a call does to the state: its verdict and the keys it commits."""

    call: ToolCall
    verdict: Allow | Deny
    fingerprints: tuple[Fingerprint, ...]  # those that count; an allowed call commits them all
    raw: tuple[Fingerprint, ...]  # before the workspace rewrote them (identity: state-aware)
    commits: tuple[str, ...]  # the keys a denial commits (what stopped it)
    peak: int  # the highest count a capped key of the call reaches once committed (0: none capped)
    target: str = ""  # what the call works on, for the evidence of results (sameResultLimit only)


#: What ``passes`` reads for an agent not seen yet (never changed).
_FRESH = _Agent(Window(1))


class Breaker:
    """Per-agent windows and the verdict on each call; see the module docstring."""

    def __init__(self, config: BreakerConfig, fingerprinter: Fingerprinter = fingerprint_call) -> None:
        self.config = config
        self._fingerprint = fingerprinter
        self._counted = re.compile(config.counted_tools_pattern())
        self._agents: dict[AgentId, _Agent] = {}
        # Fingerprints of recent short calls by their arguments, least recently used first: a
        # loop repeats its arguments by definition, and its repeats then cost no analysis.
        self._analysed: dict[tuple[object, ...], tuple[Fingerprint, ...]] = {}
        # For ``passes``: the lowest cap (None: nothing capped).
        self._tightest_cap = min((cap for cap in config.limits.values() if cap is not None), default=None)

    def is_counted(self, tool_name: str) -> bool:
        """Whether ``tool_name`` takes part at all (``include``/``exclude``, ``*`` wildcards)."""
        return self._counted.match(tool_name) is not None

    def preflight(self, agent: AgentId, call: ToolCall) -> Allow | Ask:
        """Before the guard: ask the operator when this call would be denied and asking is allowed.

        Repeats of local targets alone follow ``localHosts: ask`` (one ask per turn); any other
        denial is asked about under ``onLimit: ask``, once per measure per turn. Never commits.
        ``Allow`` here only means "no question"; the guard still decides.
        """
        config = self.config
        if "ask" not in (config.localHosts, config.onLimit) or not call.call_id:
            return ALLOW
        state = self._agents.get(agent)
        if state is None or not self.is_counted(call.name):
            return ALLOW
        turn = state.turn
        if config.onLimit != "ask" and (turn.asked or turn.approved or turn.refused):
            return ALLOW  # the one local ask of this turn is spent
        fingerprints = self._fingerprints(state, call, self._raw_fingerprints(state, call, True))
        hits, _ = self._hits(state, fingerprints)
        failures = self._failure_hits(state, fingerprints)
        if not hits and not failures:
            return ALLOW
        if config.localHosts == "ask" and not failures and all(hit.fingerprint.local for hit in hits):
            if turn.asked or turn.approved or turn.refused:
                return ALLOW
            turn.asked = True
            turn.pending[call.call_id] = frozenset()
            _changed(state)
            return Ask(messages.ask_reason(call.name, hits, config), hits)
        measures = frozenset(_keys(hits, failures))
        if config.onLimit != "ask" or not measures.isdisjoint(turn.asked_measures):
            return ALLOW
        turn.asked_measures |= measures
        turn.pending[call.call_id] = measures
        _changed(state)
        return Ask(messages.limit_ask_reason(call.name, hits, failures, config), hits, failures)

    def decide(self, agent: AgentId, call: ToolCall) -> Allow | Deny:
        """The guard: allow (committing every fingerprint) or deny (committing only the hits)."""
        if not self.is_counted(call.name):
            return ALLOW
        state = self._active(agent)
        turn = state.turn
        asked = turn.pending.pop(call.call_id, None) if call.call_id else None
        if asked is not None:
            # The operator approved: the asked call reached the guard.
            if asked:
                turn.exempt |= asked
            else:
                turn.approved = True
            _changed(state)
        return self._apply(state, self._plan(state, call))
    def precheck(self, agent: AgentId, call: ToolCall) -> Allow | Deny | Ask | None:
        """Before the guard: ``preflight``'s ask, else the verdict ``decide`` would give now,
        kept for ``commit`` (None: nothing kept, the call's ask is pending). Never commits."""
        if not self.is_counted(call.name):
            return ALLOW  # decide changes nothing for it
        state = self._active(agent)
        check = self.preflight(agent, call)
        if isinstance(check, Ask):
            return check
        if not call.call_id or call.call_id in state.turn.pending:
            return None
        plan = self._plan(state, call)
        if state.kept is None:
            state.kept = {}
        elif len(state.kept) >= self.config.window:  # calls that never reached the guard
            del state.kept[next(iter(state.kept))]
        state.kept[call.call_id] = plan
        return plan.verdict

    def commit(self, agent: AgentId, call_id: str) -> Allow | Deny | None:
        """The guard used the verdict ``precheck`` gave for ``call_id``: it takes effect now.

        None when no plan is kept for it (the state changed since, or this breaker never saw the
        precheck); then nothing changes.
        """
        state = self._agents.get(agent)
        plan = state.kept.pop(call_id, None) if state is not None and state.kept else None
        if plan is None:
            return None
        return self._apply(self._active(agent), plan)


    def record_result(
        self, agent: AgentId, call_id: str, text: str, outcome: Mapping[str, object] | None = None
    ) -> tuple[Notice, ...]:
        """A tool result arrived: keep it for quoting, judge it, or read it as a declined ask.

        Only results of allowed calls still in the window are kept, cut to what a denial can
        quote; the result of a denied call (the denial itself) is never kept nor judged.
        ``outcome`` holds the plain facts of the result (see ``outcomes.judge``). Returns the
        notices owed to the call: a failure notice first, then the repetition notice.
        """
        state = self._agents.get(agent)
        if state is None or not call_id:
            return ()
        _changed(state)
        if state.turn.pending.pop(call_id, None) == frozenset():
            # The asked call ended without reaching the guard: the local ask was declined. (A
            # declined onLimit ask needs nothing more: its measures are never asked again.)
            state.turn.refused = True
            return ()
        if call_id in state.denied:
            state.denied.discard(call_id)
            return ()
        if state.workspace is not None:
            state.workspace.settle(call_id, text)
        if state.progress is not None:
            tool = state.progress.tool_of(call_id)
            judged = judge(tool, outcome, text)
            failure = judged.reason if isinstance(judged, Failure) else None
            state.progress.returned(call_id, text, sooner(failure, tool, text))
        if call_id in state.results:
            state.results[call_id] = (messages.quoted_prefix(text, self.config.resultPreviewChars), len(text))
        running = state.running.pop(call_id, None)
        if running is None:
            return ()
        notices: list[Notice] = []
        if running.capped:
            judged = judge(running.tool, outcome, text)
            if isinstance(judged, Failure):
                quote = messages.quotable(text, self.config.resultPreviewChars)
                warning = self._failure_notice(state, running.capped, judged, quote)
                if warning is not None:
                    notices.append(warning)
            elif judged is Settled.SUCCEEDED:
                state.streaks.end(fp.key for fp in running.capped)
        if running.notice is not None:
            notices.append(running.notice)
        return tuple(notices)

    def human_message(self, agent: AgentId) -> None:
        """A real user turn: a fresh window, no results to quote, no streaks, a fresh ask state."""
        state = self._agents.get(agent)
        if state is not None:
            _changed(state)
            state.window.clear()
            del state.peaks[:]
            state.results.clear()
            state.denied.clear()
            state.turn = _Turn()
            state.streaks.clear()
            state.running.clear()
            state.progress = None

    def passes(self, agent: AgentId) -> int:
        """How many more calls of ``agent``, whatever they are, the guard surely allows and the
        preflight never asks about, whatever results or human turns come between.

        The shim lets that many calls through without waiting for an answer (node-shim/ahead.js)
        and sends them after; they are decided here in order all the same (a notice they earn
        still comes with their result). Why it holds: each rule stops a call once a count reaches
        its limit, and no call adds more than one to any count: to a capped key in the window
        (none counts more than the agent's highest peak), to a failure streak or to the run of
        identical results (a result still awaited counts as if it added one).
        """
        state = self._agents.get(agent) or _FRESH
        passes: float = UNLIMITED_PASSES
        if self._tightest_cap is not None:
            passes = self._tightest_cap - 1 - max(state.peaks, default=0)
        fail_limit = self.config.failLimit
        if fail_limit is not None:
            passes = min(passes, fail_limit - state.streaks.longest() - len(state.running))
        same_limit, evidence = self.config.sameResultLimit, state.progress
        if same_limit is not None:
            passes = min(passes, max(1, same_limit - 2) if evidence is None else evidence.passes(same_limit))
        return max(0, math.ceil(passes))

    def forget(self, agent: AgentId) -> None:
        """The agent is gone: drop everything held for it."""
        self._agents.pop(agent, None)

    def stats(self) -> dict[str, int]:
        """Plain counts for the worker's ``stats`` op: agents tracked and window entries held."""
        return {
            "agents": len(self._agents),
            "entries": sum(len(state.window) for state in self._agents.values()),
        }

    def _active(self, agent: AgentId) -> _Agent:
        """The agent's state, now the most recently active; past ``maxAgents`` the idlest goes."""
        state = self._agents.pop(agent, None)
        if state is None:
            state = _Agent(Window(self.config.window))
            if len(self._agents) >= self.config.maxAgents:
                del self._agents[next(iter(self._agents))]
        self._agents[agent] = state
        return state

    def _plan(self, state: _Agent, call: ToolCall) -> _Plan:
        """What ``decide`` does with ``call`` in ``state``, without doing it."""
        raw = self._raw_fingerprints(state, call, False)
        fingerprints = self._fingerprints(state, call, raw)
        hits, peak = self._hits(state, fingerprints)
        failures = self._failure_hits(state, fingerprints)
        target = target_of(call, raw) if self.config.sameResultLimit is not None else ""
        if not hits and not failures:
            stall = self._stall(state, call, fingerprints, target)
            if stall is not None:
                # Like any denial it commits only what stopped it: the call.
                previous = self._quotable_result(state.results.get(stall.quote))
                message = messages.stall_denial(call.name, stall, previous, self.config)
                stopped = tuple(fp.key for fp in fingerprints if fp.kind in CALL_KINDS)
                return _Plan(call, Deny(message, (), stall=stall), fingerprints, raw, stopped, peak, target)
            notice = self._stage_notice(state, fingerprints)
            verdict = ALLOW if notice is None else Allow(notice)
            return _Plan(call, verdict, fingerprints, raw, (), peak, target)
        hit_keys = tuple(_keys(hits, failures))
        refused = not state.turn.asked_measures.isdisjoint(hit_keys)
        previous = self._previous_result(state, hits)
        message = messages.denial(call.name, hits, previous, self.config, failures, refused)
        return _Plan(call, Deny(message, hits, failures), fingerprints, raw, hit_keys, peak, target)

    def _apply(self, state: _Agent, plan: _Plan) -> Allow | Deny:
        """Commit what ``plan`` decided: every fingerprint of an allowed call, only what stopped a
        denied one."""
        _changed(state)
        call, verdict = plan.call, plan.verdict
        if isinstance(verdict, Deny):
            if call.call_id:
                state.denied.add(call.call_id)
            self._commit(state, call.call_id, plan.commits, plan.peak)
            return verdict
        self._commit(state, call.call_id, (fp.key for fp in plan.fingerprints), plan.peak)
        if state.progress is not None:
            progress_keys = call_keys(plan.fingerprints)
            state.progress.ran(call.call_id, call.name, progress_keys, plan.target, _state_of(state))
        if call.call_id:
            state.denied.discard(call.call_id)
            state.results[call.call_id] = None
            self._await_result(state, call, plan.fingerprints, verdict.notice)
            if state.workspace is not None:
                state.workspace.identify(call, plan.raw)  # the call identified last is the one expected
                state.workspace.expect(call.call_id)
        return verdict

    def _fingerprints(
        self, state: _Agent, call: ToolCall, raw: tuple[Fingerprint, ...]
    ) -> tuple[Fingerprint, ...]:
        """The fingerprints that count: local targets drop out under ``allow`` or an approval,
        and measures the operator exempted drop out for the rest of the turn."""
        fingerprints = raw
        if self.config.identity == "state-aware":
            if state.workspace is None:
                state.workspace = Workspace()
            fingerprints = state.workspace.identify(call, fingerprints)
        if self.config.localHosts == "allow" or state.turn.approved:
            fingerprints = tuple(fp for fp in fingerprints if not fp.local)
        exempt = state.turn.exempt
        if exempt:
            fingerprints = tuple(fp for fp in fingerprints if fp.key not in exempt)
        return fingerprints

    def _raw_fingerprints(self, state: _Agent, call: ToolCall, keep: bool) -> tuple[Fingerprint, ...]:
        """``fingerprint_call``'s answer, reusing the preflight's for the same call (equal name,
        arguments and call id); ``keep`` holds this one for the guard that follows."""
        kept, state.preflighted = state.preflighted, None
        if kept is not None and kept[0] == call:
            return kept[1]
        key = _analysis_key(call)
        fingerprints = self._analysed.pop(key, None) if key is not None else None
        if fingerprints is None:
            fingerprints = self._fingerprint(call, self.config).fingerprints
        if key is not None:
            self._analysed[key] = fingerprints
            if len(self._analysed) > ANALYSED_CALLS:
                del self._analysed[next(iter(self._analysed))]
        if keep:
            state.preflighted = (call, fingerprints)
        return fingerprints

    def _hits(self, state: _Agent, fingerprints: Iterable[Fingerprint]) -> tuple[tuple[Hit, ...], int]:
        """The capped fingerprints this call would take to their cap (prior count >= cap - 1),
        and the highest count any of its capped fingerprints would reach (its plan's ``peak``)."""
        hits: list[Hit] = []
        peak = 0
        limits = self.config.limits  # limit_for inlined: this runs for every fingerprint of every call
        window = state.window
        for fp in fingerprints:
            key = fp.key
            cap = limits[key] if key in limits else limits.get(fp.kind)
            if cap is None:
                continue
            prior = window.count(key)
            if prior >= peak:
                peak = prior + 1
            if prior >= cap - 1:
                hits.append(Hit(fp, prior + 1, cap))
        return tuple(hits), peak

    def _failure_hits(self, state: _Agent, fingerprints: Iterable[Fingerprint]) -> tuple[FailureHit, ...]:
        """The fingerprints whose calls already failed ``failLimit`` times in a row."""
        limit = self.config.failLimit
        if limit is None or not state.streaks:
            return ()
        found: list[FailureHit] = []
        for fp in fingerprints:
            streak = state.streaks.get(fp.key)
            if streak is not None and streak.count >= limit:
                found.append(FailureHit(fp, streak, limit))
        return tuple(found)

    def _stall(self, state: _Agent, call: ToolCall, fingerprints: Iterable[Fingerprint], target: str) -> Stall | None:
        """No progress (``sameResultLimit``, breaker/core/evidence.py): the call repeats one whose
        result already came back the same, or the agent keeps getting answers it already had."""
        limit = self.config.sameResultLimit
        if limit is None:
            return None
        if state.progress is None:
            state.progress = Evidence(self.config.window)
        return state.progress.stall(call_keys(fingerprints), target, _state_of(state), limit)

    def _stage_notice(self, state: _Agent, fingerprints: Iterable[Fingerprint]) -> Notice | None:
        """The advisory this allowed call earns: a capped fingerprint at exactly ``summarizeAt``
        (the stronger) or ``warnAt``, the most actionable one named when several cross at once."""
        warn_at, summarize_at = self.config.warnAt, self.config.summarizeAt
        if warn_at is None and summarize_at is None:
            return None
        best: tuple[int, int, Fingerprint, int, float] | None = None  # (stage, -rank, fp, count, cap)
        for fp in fingerprints:
            cap = self.config.limit_for(fp.kind, fp.key)
            if cap is None:
                continue
            count = state.window.count(fp.key) + 1
            stage = 2 if count == summarize_at else 1 if count == warn_at else 0
            if stage and (best is None or (stage, -_naming_rank(fp)) > best[:2]):
                best = (stage, -_naming_rank(fp), fp, count, cap)
        if best is None:
            return None
        stage, _, fp, count, cap = best
        notice = messages.summarize_notice if stage == 2 else messages.warn_notice
        return notice(fp.key, count, cap, self.config)

    def _await_result(
        self, state: _Agent, call: ToolCall, fingerprints: Iterable[Fingerprint], notice: Notice | None
    ) -> None:
        """Remember what the result of an allowed call is needed for (nothing, by default)."""
        capped: tuple[Fingerprint, ...] = ()
        if self.config.tracks_failures:
            capped = tuple(fp for fp in fingerprints if self.config.limit_for(fp.kind, fp.key) is not None)
        if not capped and notice is None:
            return
        state.running[call.call_id] = _Running(call.name, capped, notice)
        if len(state.running) > self.config.window:  # a result that never came
            del state.running[next(iter(state.running))]

    def _failure_notice(
        self, state: _Agent, capped: tuple[Fingerprint, ...], failure: Failure, quote: str
    ) -> Notice | None:
        """Grow the streaks of a failed call; a notice when one reaches exactly ``failWarnAt``."""
        counts = state.streaks.fail((fp.key for fp in capped), failure, quote)
        warn_at = self.config.failWarnAt
        crossed = [fp for fp in capped if counts[fp.key] == warn_at]
        if not crossed:
            return None
        named = min(crossed, key=_naming_rank)
        return messages.failure_notice(named.key, counts[named.key], failure, self.config)

    def _commit(self, state: _Agent, call_id: str, keys: Iterable[str], peak: int) -> None:
        window = state.window
        evicted = window.append(call_id, keys)
        state.peaks.append(peak)
        if evicted is None:
            return
        state.peaks.pop(0)
        evicted_id, evicted_digests = evicted
        if not window.holds_call(evicted_id):
            state.results.pop(evicted_id, None)
            state.denied.discard(evicted_id)
        if state.streaks:
            # A streak lives while its fingerprint is in the window.
            left = split(evicted_digests)
            state.streaks.end([key for key in state.streaks if digest(key) in left and not window.count(key)])

    def _previous_result(self, state: _Agent, hits: tuple[Hit, ...]) -> str | None:
        """The result of the latest allowed call sharing a hit, else the agent's latest result,
        made quotable."""
        latest: tuple[str, int] | None = None
        for call_id, shares_a_hit in state.window.newest_first(hit.fingerprint.key for hit in hits):
            result = state.results.get(call_id)
            if result is None:
                continue
            if shares_a_hit:
                latest = result
                break
            if latest is None:
                latest = result
        return self._quotable_result(latest)

    def _quotable_result(self, kept: tuple[str, int] | None) -> str | None:
        """A result as kept (its quoted prefix and length), made safe to quote."""
        if kept is None:
            return None
        prefix, length = kept
        return messages.quotable(prefix, self.config.resultPreviewChars, length)


def _analysis_key(call: ToolCall) -> tuple[object, ...] | None:
    """What the fingerprints of ``call`` depend on, as a key, for flat arguments (at most
    ANALYSED_ARGS of them, their text at most ANALYSED_CHARS characters: bigger ones would cost
    more to key than most analyses); None else. Values keep their type, so ``1``, ``1.0`` and
    ``true`` never share a key."""
    arguments = call.arguments
    if not isinstance(arguments, dict) or len(arguments) > ANALYSED_ARGS:
        return None
    key: list[object] = [call.name]
    size = 0
    for name, value in arguments.items():
        if isinstance(value, str):
            size += len(value)
            if size > ANALYSED_CHARS:
                return None
        elif value is not None and not isinstance(value, (bool, int, float)):
            return None
        key.extend((name, type(value), value))
    return tuple(key)


def _state_of(state: _Agent) -> int:
    """The agent's workspace state (0: unchanged, or not tracked)."""
    return 0 if state.workspace is None else state.workspace.state


def _changed(state: _Agent) -> None:
    """Something a verdict reads changed: plans made ahead no longer hold."""
    state.kept = None


def _naming_rank(fp: Fingerprint) -> int:
    return _NAMING_ORDER.index(fp.kind) if fp.kind in _NAMING_ORDER else len(_NAMING_ORDER)


def _keys(hits: tuple[Hit, ...], failures: tuple[FailureHit, ...]) -> list[str]:
    """The fingerprint keys a denial stops on: the repeats, then the failing targets."""
    return [hit.fingerprint.key for hit in hits] + [failure.fingerprint.key for failure in failures]
