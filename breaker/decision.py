"""The verdict on one tool call of one agent: allow, deny, or ask the operator first.

``Breaker`` holds each agent's window and turn state and nothing else; every method is a pure
state transition (no clock, no I/O), so a recorded sequence of calls always replays to the same
verdicts. The rules are the seed README's "Counting rules" and "Local addresses".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from breaker import messages
from breaker.config import BreakerConfig
from breaker.fingerprints import CallFingerprints, Fingerprint, ToolCall, fingerprint_call
from breaker.window import Entry, Window

AgentId = int | str
Fingerprinter = Callable[[ToolCall, BreakerConfig], CallFingerprints]


@dataclass(frozen=True, slots=True)
class Hit:
    """One fingerprint at its cap: ``count`` occurrences including this call (== cap for a whole cap)."""

    fingerprint: Fingerprint
    count: int
    cap: float


@dataclass(frozen=True, slots=True)
class Allow:
    """Run the call."""


@dataclass(frozen=True, slots=True)
class Deny:
    """Do not run the call; ``message`` (starting ``REPEAT_TOOL_BLOCKED:``) is its result."""

    message: str
    hits: tuple[Hit, ...]


@dataclass(frozen=True, slots=True)
class Ask:
    """Ask the operator before the guard runs; ``reason`` says which local target repeated."""

    reason: str
    hits: tuple[Hit, ...]


ALLOW = Allow()


@dataclass(slots=True)
class _Turn:
    """What happened about local repeats since the last human message."""

    asked: bool = False
    pending: str | None = None  # the call id of an ask not answered yet
    approved: bool = False
    refused: bool = False


@dataclass(slots=True)
class _Agent:
    """One agent's state: its window, the quotable results of its allowed calls, its turn."""

    window: Window
    # Only call ids of allowed calls still in the window; None until the result arrives.
    results: dict[str, str | None] = field(default_factory=dict)
    turn: _Turn = field(default_factory=_Turn)


class Breaker:
    """Per-agent windows and the verdict on each call; see the module docstring."""

    def __init__(self, config: BreakerConfig, fingerprinter: Fingerprinter = fingerprint_call) -> None:
        self.config = config
        self._fingerprint = fingerprinter
        self._counted = re.compile(config.counted_tools_pattern())
        self._agents: dict[AgentId, _Agent] = {}

    def is_counted(self, tool_name: str) -> bool:
        """Whether ``tool_name`` takes part at all (``include``/``exclude``, ``*`` wildcards)."""
        return self._counted.match(tool_name) is not None

    def preflight(self, agent: AgentId, call: ToolCall) -> Allow | Ask:
        """Before the guard: ask the operator when only local targets would deny this call.

        Never commits. ``Allow`` here only means "no question"; the guard still decides.
        """
        if self.config.localHosts != "ask" or not call.call_id or not self.is_counted(call.name):
            return ALLOW
        state = self._agents.get(agent)
        if state is None or state.turn.asked or state.turn.approved or state.turn.refused:
            return ALLOW
        hits = self._hits(state, self._fingerprints(state, call))
        if not hits or not all(hit.fingerprint.local for hit in hits):
            return ALLOW
        state.turn.asked = True
        state.turn.pending = call.call_id
        return Ask(messages.ask_reason(call.name, hits, self.config), hits)

    def decide(self, agent: AgentId, call: ToolCall) -> Allow | Deny:
        """The guard: allow (committing every fingerprint) or deny (committing only the hits)."""
        if not self.is_counted(call.name):
            return ALLOW
        state = self._active(agent)
        turn = state.turn
        if call.call_id and turn.pending == call.call_id:
            # The operator approved: the asked call reached the guard.
            turn.pending = None
            turn.approved = True
        fingerprints = self._fingerprints(state, call)
        hits = self._hits(state, fingerprints)
        if not hits:
            self._commit(state, call.call_id, (fp.key for fp in fingerprints))
            if call.call_id:
                state.results[call.call_id] = None
            return ALLOW
        previous = self._previous_result(state, hits)
        state.results.pop(call.call_id, None)
        self._commit(state, call.call_id, (hit.fingerprint.key for hit in hits))
        return Deny(messages.denial(call.name, hits, previous, self.config), hits)

    def record_result(self, agent: AgentId, call_id: str, text: str) -> None:
        """A tool result arrived: keep it for quoting, or read it as an ask that was declined.

        Only results of allowed calls still in the window are kept, already cut to what a denial
        can quote; the result of a denied call (the denial itself) is never kept.
        """
        state = self._agents.get(agent)
        if state is None or not call_id:
            return
        if state.turn.pending == call_id:
            # The asked call ended without reaching the guard: the ask was declined.
            state.turn.pending = None
            state.turn.refused = True
            return
        if call_id in state.results:
            state.results[call_id] = messages.quotable(text, self.config.resultPreviewChars)

    def human_message(self, agent: AgentId) -> None:
        """A real user turn: a fresh window, no results to quote, a fresh ask state."""
        state = self._agents.get(agent)
        if state is not None:
            state.window.clear()
            state.results.clear()
            state.turn = _Turn()

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

    def _fingerprints(self, state: _Agent, call: ToolCall) -> tuple[Fingerprint, ...]:
        """The fingerprints that count: local targets drop out under ``allow`` or an approval."""
        fingerprints = self._fingerprint(call, self.config).fingerprints
        if self.config.localHosts == "allow" or state.turn.approved:
            return tuple(fp for fp in fingerprints if not fp.local)
        return fingerprints

    def _hits(self, state: _Agent, fingerprints: Iterable[Fingerprint]) -> tuple[Hit, ...]:
        """The capped fingerprints this call would take to their cap (prior count >= cap - 1)."""
        hits: list[Hit] = []
        for fp in fingerprints:
            cap = self.config.limit_for(fp.kind, fp.key)
            if cap is None:
                continue
            prior = state.window.count(fp.key)
            if prior >= cap - 1:
                hits.append(Hit(fp, prior + 1, cap))
        return tuple(hits)

    def _commit(self, state: _Agent, call_id: str, keys: Iterable[str]) -> None:
        evicted = state.window.append(Entry(call_id, frozenset(keys)))
        if evicted is not None and not state.window.holds_call(evicted.call_id):
            state.results.pop(evicted.call_id, None)

    def _previous_result(self, state: _Agent, hits: tuple[Hit, ...]) -> str | None:
        """The result of the latest allowed call sharing a hit, else the agent's latest result."""
        hit_keys = {hit.fingerprint.key for hit in hits}
        latest: str | None = None
        for entry in state.window.newest_first():
            result = state.results.get(entry.call_id)
            if result is None:
                continue
            if not hit_keys.isdisjoint(entry.keys):
                return result
            if latest is None:
                latest = result
        return latest
