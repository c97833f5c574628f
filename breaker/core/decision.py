"""The verdict on one tool call of one agent: allow, deny, or ask the operator first.

``Breaker`` is a façade over parts that each hold one concept: the agent registry
(``agents``), one agent's state (``agent``: its window and peaks in ``repeats``, quotable results
in ``results``, the turn's asks in ``asks``, the failure track in ``failures``, the run of
identical results in ``progress``, the workspace in ``identity``), the analysis cache
(``analysis``), the rules that read them (``rules``), plans kept ahead of the guard (``plans``)
and ``passes``. Every method is a pure state transition (no clock, no I/O), so a recorded
sequence of calls always replays to the same verdicts.

``decide`` is a plan (the verdict and what it commits, read from the state) applied to the
state. ``precheck`` makes the plan ahead of the guard and keeps it; ``commit`` applies it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping

from breaker.core.config import BreakerConfig
from breaker.core.deciding import UNLIMITED_PASSES, AgentState, rules
from breaker.core.deciding import passes as passes_
from breaker.core.history import (
    ANALYSED_ARGS,
    ANALYSED_CALLS,
    ANALYSED_CHARS,
    AgentId,
    Agents,
    Analysis,
    Evidence,
    Fingerprinter,
)
from breaker.core.judging import Allow, Ask, Deny, Notice
from breaker.core.reading import Fingerprint, ToolCall, counted_tools_pattern, fingerprint_call
from breaker.core.wording import messages

__all__ = [
    "ANALYSED_ARGS",
    "ANALYSED_CALLS",
    "ANALYSED_CHARS",
    "UNLIMITED_PASSES",
    "AgentId",
    "Breaker",
    "Fingerprinter",
]

ALLOW = rules.ALLOW
#: What ``passes`` reads for an agent not seen yet (never changed).
_FRESH = AgentState(1)
#: Agents whose model turn began and who have made no counted call in it yet, at most (past it the
#: turn longest begun is let go): never fewer than ``maxAgents``.
BEGUN_TURNS = 1024
#: Tool names whose ``is_counted`` answer is kept (all are let go past it).
COUNTED_NAMES_KEPT = 256


class Breaker:
    """Per-agent state and the verdict on each call; see the module docstring."""

    def __init__(self, config: BreakerConfig, fingerprinter: Fingerprinter = fingerprint_call) -> None:
        self.config = config
        self._counted = re.compile(counted_tools_pattern(config))
        self._counted_names: dict[str, bool] = {}
        # The verdicts kept for calls of agents dropped past maxAgents before their guard came.
        self._settled: dict[tuple[AgentId, str], Allow | Deny] = {}
        self._begun_bound = max(config.maxAgents, BEGUN_TURNS)
        # The registry holds no reference back to this breaker: a dropped one is freed at once,
        # never left to the cyclic collector (whose pause would fall on some later call).
        dropped = functools.partial(_keep_settled, self._settled, self._begun_bound)
        self._agents: Agents[AgentState] = Agents(
            config.maxAgents, lambda: AgentState(config.window), bound=config.window, dropped=dropped
        )
        self._analysis = Analysis(config, fingerprinter)
        self._tightest_cap = passes_.tightest_cap(config)
        # Agents whose model turn began (``new_step``) and who have made no counted call since.
        self._begun: dict[AgentId, None] = {}

    def is_counted(self, tool_name: str) -> bool:
        """Whether ``tool_name`` takes part at all (``include``/``exclude``, ``*`` wildcards).
        Kept by name (a handful of tools, asked of every call): a dict look-up, not a match."""
        known = self._counted_names.get(tool_name)
        if known is None:
            known = self._counted.match(tool_name) is not None
            if len(self._counted_names) >= COUNTED_NAMES_KEPT:
                self._counted_names.clear()
            self._counted_names[tool_name] = known
        return known

    def preflight(self, agent: AgentId, call: ToolCall) -> Allow | Ask:
        """Before the guard: ask the operator when this call would be denied and asking is allowed
        (``rules.question``). Never commits. ``Allow`` here only means "no question"; the guard
        still decides."""
        config = self.config
        if "ask" not in (config.localHosts, config.onLimit) or not call.call_id:
            return ALLOW
        state = self._agents.get(agent)
        if state is None or not self.is_counted(call.name):
            return ALLOW
        if config.onLimit != "ask" and state.asks.local_spent:
            return ALLOW  # the one local ask of this turn is spent
        call, raw = state.raw_fingerprints(call, self._analysis, keep=True)
        return rules.question(state, call, raw, config) or ALLOW

    def decide(self, agent: AgentId, call: ToolCall) -> Allow | Deny:
        """The guard: allow (committing every fingerprint) or deny (committing only the hits). A
        call whose ask is pending reaching it means the operator approved. In stage order: the
        agent's history looked up, the call read, judged and its verdict worded, then committed."""
        if not self.is_counted(call.name):
            return ALLOW
        if self._settled and call.call_id and self._agents.get(agent) is None:
            settled = self._settled.pop((agent, call.call_id), None)
            if settled is not None:
                return settled
        state = self._agents.called(agent, call.call_id, "guard")
        if self._begun:
            self._enter_turn(agent, state)
        if call.call_id and state.asks.reached_guard(call.call_id):
            state.changed()  # the operator approved it
        # Read once (the preflight's); every rule reads its paths and URLs as they resolve.
        call, raw = state.raw_fingerprints(call, self._analysis, keep=False)
        plan = rules.plan(state, call, raw, self.config)
        return rules.apply(state, plan, self.config)

    def precheck(self, agent: AgentId, call: ToolCall) -> Allow | Deny | Ask | None:
        """Before the guard: ``preflight``'s ask, else the verdict ``decide`` would give now,
        kept for ``commit`` (None: nothing kept, the call's ask is pending). Never commits."""
        if not self.is_counted(call.name):
            return ALLOW  # decide changes nothing for it
        state = self._agents.called(agent, call.call_id, "preflight")
        if self._begun:
            self._enter_turn(agent, state)
        check = self.preflight(agent, call)
        if isinstance(check, Ask):
            return check
        if not call.call_id or call.call_id in state.asks.pending:
            return None
        call, raw = state.raw_fingerprints(call, self._analysis, keep=False)
        plan = rules.plan(state, call, raw, self.config)
        state.kept.keep(plan, self.config.window)  # past a window of them: guards that never came
        return plan.verdict

    def commit(self, agent: AgentId, call_id: str) -> Allow | Deny | None:
        """The guard used the verdict ``precheck`` gave for ``call_id``: it takes effect now.

        None when no plan is kept for it (the state changed since, or this breaker never saw the
        precheck); then nothing changes.
        """
        state = self._agents.get(agent)
        if state is None and self._settled:
            return self._settled.pop((agent, call_id), None)
        plan = state.kept.take(call_id) if state is not None else None
        if plan is None:
            return None
        return rules.apply(self._agents.called(agent, call_id, "commit"), plan, self.config)

    def record_result(
        self, agent: AgentId, call_id: str, text: str, outcome: Mapping[str, object] | None = None
    ) -> tuple[Notice, ...]:
        """A tool result arrived: keep it for quoting, judge it, or read it as a declined ask.

        Only results of allowed calls still in the window are kept, cut to what a denial can
        quote; the result of a denied call (the denial itself) is never kept nor judged.
        ``outcome`` holds the plain facts of the result (see ``outcomes.judge``). Returns the
        notices owed to the call: a failure notice first, then the repetition notice.
        """
        self._agents.returned(agent, call_id)
        state = self._agents.get(agent)
        if state is None or not call_id:
            return ()
        state.changed()
        declined = state.asks.ended(call_id)
        if declined is not None:  # its result is the harness's refusal: the model is told why
            return (messages.declined_ask_notice(declined, self.config),)
        if not state.results.arrived(call_id):
            return ()  # a denial's result
        return rules.returned(state, call_id, text, outcome, self.config)

    def human_message(self, agent: AgentId) -> None:
        """A real user turn: a fresh window, no results to quote, no streaks, a fresh ask state."""
        self._agents.settled(agent)
        state = self._agents.get(agent)
        if state is not None:
            state.new_turn()

    def new_step(self, agent: AgentId) -> None:
        """The agent's model began a new turn (a step): the calls it sends now were sent after it
        read every answer before them. Calls of one turn were sent together, so answers alike
        among them are not repetition (``progress``).

        The turn is entered at the agent's next counted call (``precheck`` or ``decide``), not
        here: so a human message told after the step began (dsh logs the step, then the message
        that starts it) clears what came before the turn, not the turn itself, and an agent whose
        step makes no counted call is neither made nor made to push another out past
        ``maxAgents``. The shim tells a step just before the step's first counted call and
        ``rtb replay`` where dsh logged it: both give every call the same turn."""
        state = self._agents.get(agent)
        if state is not None:
            state.changed()
        if self.config.sameResultLimit is None:
            return
        begun = self._begun
        begun.pop(agent, None)
        begun[agent] = None
        if len(begun) > self._begun_bound:
            del begun[next(iter(begun))]

    def _enter_turn(self, agent: AgentId, state: AgentState) -> None:
        """The agent's first counted call since its model turn began: the turn starts now."""
        if agent not in self._begun:
            return
        del self._begun[agent]
        if state.progress is None:
            state.progress = Evidence(self.config.window)
        state.progress.new_round()

    def passes(self, agent: AgentId) -> int:
        """How many more calls of ``agent``, whatever they are, the guard surely allows and the
        preflight never asks about, whatever results or human turns come between (``passes``)."""
        return passes_.passes(self._agents.get(agent) or _FRESH, self.config, self._tightest_cap)

    def conditional(self, agent: AgentId, now: int) -> passes_.Conditional | None:
        """More calls of ``agent`` than ``now`` (its ``passes``) that surely pass while every
        result to come is news (``reading.news``), counted or by their group (``reading.groups``);
        None when there are no more."""
        state = self._agents.get(agent) or _FRESH
        return passes_.conditional(state, self.config, self._tightest_cap, now)

    def promise(self, agent: AgentId) -> dict[str, object]:
        """What an answer tells of ``agent``'s passes (breaker/protocol.py): ``passes``, and its
        ``conditional`` ones (their number and digests) when there are more."""
        state = self._agents.get(agent) or _FRESH
        peak = state.repeats.highest_peak()  # read once for both
        passes = passes_.passes(state, self.config, self._tightest_cap, peak)
        more = passes_.conditional(state, self.config, self._tightest_cap, passes, peak)
        if more is None:
            return {"passes": passes}
        conditional: dict[str, object] = {"passes": more.passes, "digests": more.digests}
        if more.groups is not None:
            conditional["groups"] = more.groups
            conditional["room"] = more.room
            conditional["window"] = more.window
        return {"passes": passes, "conditional": conditional}

    def denial(self, verdict: Allow | Deny | Ask | None) -> dict[str, object]:
        """A verdict as a reply tells it: its denial's text (``deny``; None: not denied) and, under
        ``logDenials``, what the denial counted (``counted``: ``messages.denial_counts``)."""
        if not isinstance(verdict, Deny):
            return {"deny": None}
        if not self.config.logDenials:
            return {"deny": verdict.message}
        return {"deny": verdict.message, "counted": messages.denial_counts(verdict.reached)}

    def history_from(self, agent: AgentId) -> str | None:
        """The call from which the agent's calls rebuild what outlives its window: the failure
        that began its oldest streak (a streak lives while denied retries keep its key in the
        window, long after the failures that built it left). None: its window's calls suffice.
        The shim's journal keeps the calls from it on (node-shim/call/journal.js)."""
        state = self._agents.get(agent)
        return None if state is None else state.failures.streaks.first_call()

    def forget(self, agent: AgentId) -> None:
        """The agent is gone: drop everything held for it."""
        self._agents.forget(agent)
        self._begun.pop(agent, None)

    def window_count(self, agent: AgentId, key: str) -> int:
        """How many entries of the agent's window hold ``key`` now (0 for an agent it does not
        know). Reads only: ``rtb`` draws the counts with it as the window moves."""
        state = self._agents.get(agent)
        return 0 if state is None else state.window.count(key)

    def keyed(self, agent: AgentId, call: ToolCall) -> tuple[Fingerprint, ...]:
        """The fingerprints of ``call``, the agent's last decided call, as its window keys them
        (under ``identity: state-aware`` by the workspace, ``history.identity``). ``rtb`` counts
        them with ``window_count``; identifying that call again changes nothing."""
        resolved, raw = self._analysis.read(call)
        state = self._agents.get(agent)
        if state is None or state.workspace is None or not self.is_counted(call.name):
            return raw
        return state.workspace.identify(resolved, raw)

    def stats(self) -> dict[str, int]:
        """Plain counts for the worker's ``stats`` op: agents tracked and window entries held."""
        return {
            "agents": len(self._agents),
            "entries": sum(len(state.window) for state in self._agents.states()),
        }


def _keep_settled(
    settled: dict[tuple[AgentId, str], Allow | Deny],
    bound: int,
    agent: AgentId,
    state: AgentState,
    opened: list[str],
) -> None:
    """``agent`` is dropped past ``maxAgents`` while calls of it prechecked (``opened``) await
    their guard: each keeps the verdict its precheck kept (allowed when none is kept) in
    ``settled`` (at most ``bound``), as if its guard had come before the drop, where dsh logged the
    call and where ``rtb replay`` decides it; its guard makes the agent no more (``decide``,
    ``commit``; the shim's journal follows the same rule)."""
    if not opened:
        return
    plans = state.kept.plans or {}
    for call_id in opened:
        plan = plans.get(call_id)
        settled[(agent, call_id)] = ALLOW if plan is None else plan.verdict
    while len(settled) > bound:
        del settled[next(iter(settled))]
