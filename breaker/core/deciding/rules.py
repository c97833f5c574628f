"""The rules applied to one agent's state: the question a preflight asks, the plan a guard applies,
and what a result does.

The seed README's counting rules and local addresses, plus the opt-in measures of
docs/escalation.md: advisory notices below the caps, the failure track, asking at any cap
(``onLimit: ask``) and no progress (``sameResultLimit``). Each reads the parts of ``AgentState``
that hold its concept; this module takes one call through the stages in order: the call as read
(its fingerprints), what the agent's history holds, the judgement, its wording, the commit.
"""

from __future__ import annotations

from collections.abc import Mapping

from breaker.core.config import BreakerConfig
from breaker.core.deciding.agent import AgentState
from breaker.core.deciding.plans import Plan
from breaker.core.history import CALL_KINDS, Asked, Effect, Evidence, spelling
from breaker.core.judging import Allow, Ask, Deny, FailureHit, Hit, Notice, Stall, is_settled, notices
from breaker.core.reading import Failure, Fingerprint, Settled, ToolCall, judge
from breaker.core.reading.groups import call_group, window_group
from breaker.core.wording import messages

ALLOW = Allow()


def question(
    state: AgentState, call: ToolCall, raw: tuple[Fingerprint, ...], config: BreakerConfig
) -> Ask | None:
    """The ask the preflight of ``call`` makes, if any, recorded as pending (never commits).

    Repeats of local targets alone follow ``localHosts: ask`` (one ask per turn); any other
    denial is asked about under ``onLimit: ask``, once per measure per turn.
    """
    fingerprints = state.counted(call, raw, config)
    hits, _ = state.repeats.hits(fingerprints, config)
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
    hits, peak = state.repeats.hits(fingerprints, config)
    failures = state.failures.hits(fingerprints, config.failLimit)
    spelled = spelling(call, fingerprints, config)
    preview = config.resultPreviewChars
    watched = config.sameResultLimit is not None
    asked = Asked(call, raw, fingerprints, config) if watched else None
    effect = None if state.workspace is None else state.workspace.identified
    if hits and asked is not None and _moving(state, asked, effect):
        hits = ()  # a poll whose answer moves: no cap stops it, the same answer does (``_stall``)
    if not hits and not failures:
        stall = None if asked is None else _stall(state, call.name, asked, config)
        if stall is not None:
            # Like any denial it commits only what stopped it: the call.
            previous = state.results.of(stall.quote, preview)
            message = messages.stall_denial(call.name, stall, previous, config, state.quotes)
            stopped = tuple(fp.key for fp in fingerprints if fp.kind in CALL_KINDS)
            deny = Deny(message, (), stall=stall)
            return Plan(call, deny, fingerprints, raw, stopped, peak, spelled, asked, effect)
        stage = notices.stage(state.window, fingerprints, config, peak)
        verdict = ALLOW if stage is None else Allow(messages.stage_notice(stage, config))
        return Plan(call, verdict, fingerprints, raw, (), peak, spelled, asked, effect)
    hit_keys = tuple(denial_keys(hits, failures))
    refused = not state.asks.asked_measures.isdisjoint(hit_keys)
    repeated = [hit.fingerprint.key for hit in hits]
    previous = state.results.previous(state.window, repeated, preview)
    # Said only when the repeat changed what reading strips (its notes, flags, host spelling).
    respelled = state.spellings.respelled(state.window, repeated, spelled)
    poll = asked is not None and state.progress is not None and state.progress.polls(asked.keys)
    message = messages.denial(
        call.name,
        hits,
        previous,
        config,
        failures,
        refused,
        respelled=respelled,
        poll=poll,
        inline=state.quotes,
    )
    deny = Deny(message, hits, failures)
    return Plan(call, deny, fingerprints, raw, hit_keys, peak, spelled, asked, effect)


def apply(state: AgentState, plan: Plan, config: BreakerConfig) -> Allow | Deny:
    """Commit what ``plan`` decided: every fingerprint of an allowed call, only what stopped a
    denied one."""
    state.changed()
    call, verdict = plan.call, plan.verdict
    # The call's group as the shim computes it, from the arguments as sent (``reading.groups``).
    sent = call.arguments if call.written is None else call.written
    group = call_group(call.name, sent, config.ignoreArgs, config.url_calls_grouped)
    if isinstance(verdict, Deny):
        if call.call_id:
            state.results.denied.add(call.call_id)
        state.commit(call.call_id, plan.commits, plan.peak, plan.spelling, window_group(group, plan.commits))
        return verdict
    keys = [fp.key for fp in plan.fingerprints]
    state.commit(call.call_id, keys, plan.peak, plan.spelling, window_group(group, keys))
    asked = plan.asked
    if state.progress is not None and asked is not None:
        state.progress.ran(
            call.call_id,
            call.name,
            asked.keys,
            workspace_state(state),
            settled=is_settled(call),
            asked=asked,
        )
    if call.call_id:
        state.results.allowed(call.call_id)
        state.failures.await_result(call, plan.fingerprints, verdict.notice, config)
        if state.workspace is not None:
            state.workspace.expect(call.call_id, plan.effect)
    return verdict


def returned(
    state: AgentState, call_id: str, text: str, outcome: Mapping[str, object] | None, config: BreakerConfig
) -> tuple[Notice, ...]:
    """The result of an allowed call arrived (``outcome``: its plain facts): kept for quoting,
    handed to the workspace and the evidence of results, judged by the failure track. The
    notices owed to the call: a failure notice first, then the one decided when it was allowed."""
    preview = config.resultPreviewChars
    if state.results.awaits(call_id):
        state.results.keep(call_id, messages.quoted_prefix(text, preview), len(text))
    if state.workspace is not None:
        state.workspace.settle(call_id, text)
    # The evidence judges the result of a call it awaited: the same call (its tool), read once.
    judged = None if state.progress is None else state.progress.returned(call_id, text, outcome)
    running = state.failures.returned(call_id)
    if running is None:
        return ()
    owed: list[Notice] = []
    if running.capped:
        if judged is None:
            judged = judge(running.tool, outcome, text)
        if isinstance(judged, Failure):
            quote = messages.quotable(text, preview)
            answered = None if state.progress is None else state.progress.answered
            counts = state.failures.failed(call_id, running.capped, judged, quote, answered)
            crossed = [fp for fp in running.capped if counts[fp.key] == config.failWarnAt]
            if crossed:
                named = min(crossed, key=notices.naming_rank)
                owed.append(messages.failure_notice(named.key, counts[named.key], judged, config))
        elif judged is Settled.SUCCEEDED:
            state.failures.succeeded(running.capped)
    if running.notice is not None:
        owed.append(running.notice)
    return tuple(owed)


def denial_keys(hits: tuple[Hit, ...], failures: tuple[FailureHit, ...]) -> list[str]:
    """The fingerprint keys a denial stops on: the repeats, then the failing targets."""
    return [hit.fingerprint.key for hit in hits] + [failure.fingerprint.key for failure in failures]


def _stall(state: AgentState, tool: str, asked: Asked, config: BreakerConfig) -> Stall | None:
    """No progress (``sameResultLimit``, ``progress``): the call repeats one whose result already
    came back the same, continues a cycle, or rewords a call whose answer keeps coming back."""
    limit = config.sameResultLimit
    if limit is None:
        return None
    if state.progress is None:
        state.progress = Evidence(config.window)
    return state.progress.stall(tool, asked, workspace_state(state), limit)


def _moving(state: AgentState, asked: Asked, effect: Effect | None) -> bool:
    """Whether the call is a poll whose answer moved: read apart (``Progress.moving``), or code its
    line runs, whose every new answer is a change of its own (``Workspace.moved``)."""
    if state.progress is not None and state.progress.moving(asked.keys):
        return True
    return effect is not None and state.workspace is not None and state.workspace.moved(effect)


def workspace_state(state: AgentState) -> int:
    """The state of what the agent is known to have changed, as one number (0: unchanged, or not
    tracked); what tools the breaker does not know may have changed is judged by their answers."""
    return 0 if state.workspace is None else state.workspace.known_state
