"""The rules applied to one agent's state: the question a preflight asks, the plan a guard applies.

The seed README's counting rules and local addresses, plus the opt-in measures of
docs/escalation.md: advisory notices below the caps, the failure track, asking at any cap
(``onLimit: ask``) and no progress (``sameResultLimit``). Each reads the parts of ``AgentState``
that hold its concept; this module only combines their answers into one verdict.
"""

from __future__ import annotations

from collections.abc import Iterable

from breaker.core import messages
from breaker.core.agent import AgentState
from breaker.core.config import BreakerConfig
from breaker.core.fingerprints import Fingerprint, ToolCall
from breaker.core.notices import stage_notice
from breaker.core.plans import Plan
from breaker.core.progress import CALL_KINDS, SameResults
from breaker.core.verdicts import Allow, Ask, Deny, FailureHit, Hit, Stall

ALLOW = Allow()


def question(
    state: AgentState, call: ToolCall, raw: tuple[Fingerprint, ...], config: BreakerConfig
) -> Ask | None:
    """The ask the preflight of ``call`` makes, if any, recorded as pending (never commits).

    Repeats of local targets alone follow ``localHosts: ask`` (one ask per turn); any other
    denial is asked about under ``onLimit: ask``, once per measure per turn.
    """
    fingerprints = state.counted(call, raw, config)
    hits, _ = state.repeats.hits(fingerprints, config.limits)
    failures = state.failures.hits(fingerprints, config.failLimit)
    if not hits and not failures:
        return None
    asks = state.asks
    if config.localHosts == "ask" and not failures and all(hit.fingerprint.local for hit in hits):
        if asks.local_spent:
            return None
        asks.ask_local(call.call_id)
        state.changed()
        return Ask(messages.ask_reason(call.name, hits, config), hits)
    measures = frozenset(denial_keys(hits, failures))
    if config.onLimit != "ask" or not measures.isdisjoint(asks.asked_measures):
        return None
    asks.ask_measures(call.call_id, measures)
    state.changed()
    return Ask(messages.limit_ask_reason(call.name, hits, failures, config), hits, failures)


def plan(state: AgentState, call: ToolCall, raw: tuple[Fingerprint, ...], config: BreakerConfig) -> Plan:
    """What the guard does with ``call`` in ``state``, without doing it."""
    fingerprints = state.counted(call, raw, config)
    hits, peak = state.repeats.hits(fingerprints, config.limits)
    failures = state.failures.hits(fingerprints, config.failLimit)
    preview = config.resultPreviewChars
    if not hits and not failures:
        stall = _stall(state, call, fingerprints, config)
        if stall is not None:
            # Like any denial it commits only what stopped it: the call.
            assert state.progress is not None
            previous = state.results.of(state.progress.returned_by, preview)
            message = messages.stall_denial(call.name, stall, previous, config)
            stopped = tuple(fp.key for fp in fingerprints if fp.kind in CALL_KINDS)
            return Plan(call, Deny(message, (), stall=stall), fingerprints, raw, stopped, peak)
        notice = stage_notice(state.window, fingerprints, config)
        return Plan(call, ALLOW if notice is None else Allow(notice), fingerprints, raw, (), peak)
    hit_keys = tuple(denial_keys(hits, failures))
    refused = not state.asks.asked_measures.isdisjoint(hit_keys)
    previous = state.results.previous(state.window, (hit.fingerprint.key for hit in hits), preview)
    message = messages.denial(call.name, hits, previous, config, failures, refused)
    return Plan(call, Deny(message, hits, failures), fingerprints, raw, hit_keys, peak)


def apply(state: AgentState, plan: Plan, config: BreakerConfig) -> Allow | Deny:
    """Commit what ``plan`` decided: every fingerprint of an allowed call, only what stopped a
    denied one."""
    state.changed()
    call, verdict = plan.call, plan.verdict
    if isinstance(verdict, Deny):
        if call.call_id:
            state.results.denied.add(call.call_id)
        state.commit(call.call_id, plan.commits, plan.peak)
        return verdict
    state.commit(call.call_id, (fp.key for fp in plan.fingerprints), plan.peak)
    if state.progress is not None:
        state.progress.ran(call.call_id, call.name, plan.fingerprints)
    if call.call_id:
        state.results.allowed(call.call_id)
        state.failures.await_result(call, plan.fingerprints, verdict.notice, config)
        if state.workspace is not None:
            state.workspace.identify(call, plan.raw)  # the call identified last is the one expected
            state.workspace.expect(call.call_id)
    return verdict


def denial_keys(hits: tuple[Hit, ...], failures: tuple[FailureHit, ...]) -> list[str]:
    """The fingerprint keys a denial stops on: the repeats, then the failing targets."""
    return [hit.fingerprint.key for hit in hits] + [failure.fingerprint.key for failure in failures]


def _stall(
    state: AgentState, call: ToolCall, fingerprints: Iterable[Fingerprint], config: BreakerConfig
) -> Stall | None:
    """No progress (``sameResultLimit``): the call repeats the previous one, and that tool
    already returned one result this many times in a row."""
    limit = config.sameResultLimit
    if limit is None:
        return None
    if state.progress is None:
        state.progress = SameResults()
    count = state.progress.repeats(call.name, fingerprints)
    return Stall(count, limit) if count >= limit else None
