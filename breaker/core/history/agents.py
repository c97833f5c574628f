"""The agents a breaker holds state for: at most ``maxAgents``, the idlest forgotten first.

One rule orders them, the same for the live worker and for ``rtb replay`` (``OPERATIONS``): a call
makes its agent the most recently active with the first request about it (its preflight, or its
guard when it went through on a pass); a guard or commit after that preflight moves nothing, nor
does a result, a human turn or a new step. Past ``maxAgents`` the least recently active agent is
dropped whole, as if it had been forgotten, whatever its calls await. So the order and what is
forgotten change only with a call's first request, which a session's log holds in the same order
(dsh logs a call where the shim sends its first request); not with a result, which dsh logs a few
microtasks after the shim sends it, so that another agent's call can come between them on one
side and not the other. A result of a forgotten agent's call is not recorded, as for any unknown
agent. A guard that comes late, after other agents' calls began, changes nothing either
(tests/test_agent_recency.py drives one trace both ways). An agent dropped while calls of it await
their guard after their preflight is told (``dropped``): those calls keep the verdicts their
preflight gave, and their guards make it no more, as ``rtb replay`` has it (there the call was
decided where dsh logged it, then its agent dropped).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

AgentId = int | str
State = TypeVar("State")


@dataclass(frozen=True, slots=True)
class Operation:
    """What one request does to its agent: whether it makes the agent the most recently active
    (a guard only when no preflight of its call came before it: ``Agents.called``), and whether
    it can change
    what a verdict reads, so that verdicts made ahead of the guard (``plans``) no longer hold:
    always, or only when it asks the operator."""

    recent: bool
    changes: Literal["always", "when it asks"]


#: The one statement of that rule, by request (breaker/protocol.py): ``Breaker`` follows it, and
#: the shim applies it from the configure reply (node-shim/call/ahead.js, journal.js), as does
#: ``rtb replay``. ``forget`` drops the agent whole.
OPERATIONS: dict[str, Operation] = {
    "preflight": Operation(recent=True, changes="when it asks"),
    "guard": Operation(recent=True, changes="always"),
    "commit": Operation(recent=False, changes="always"),
    "result": Operation(recent=False, changes="always"),
    "human": Operation(recent=False, changes="always"),
    "step": Operation(recent=False, changes="always"),
}


class Agents(Generic[State]):
    """Agent id -> its state, least recently active first; and each agent's calls opened, whose
    preflight came and whose guard is still to come (at most ``bound`` calls an agent: one whose
    guard never came is let go)."""

    __slots__ = ("_bound", "_dropped", "_limit", "_new", "_opened", "_states")

    def __init__(
        self,
        limit: int,
        new: Callable[[], State],
        bound: int = 1 << 10,
        dropped: Callable[[AgentId, State, list[str]], None] | None = None,
    ) -> None:
        self._limit = limit
        self._new = new
        self._bound = bound
        # told of each agent dropped past the limit before it goes, with its calls opened
        self._dropped = dropped
        self._states: dict[AgentId, State] = {}
        # agent -> the ids of its calls opened (a preflight came, the guard is still to come)
        self._opened: dict[AgentId, dict[str, None]] = {}

    def __len__(self) -> int:
        return len(self._states)

    def __getitem__(self, agent: AgentId) -> State:
        return self._states[agent]

    def get(self, agent: AgentId) -> State | None:
        """The agent's state, if it has one; the order is left alone."""
        return self._states.get(agent)

    def called(self, agent: AgentId, call_id: str, op: Literal["preflight", "guard", "commit"]) -> State:
        """Request ``op`` about ``call_id``: the agent's state, made if new. A preflight, or a guard
        no preflight of its call came before, makes the agent the most recently active; a guard
        after its preflight and a commit leave its place alone. A preflight opens the call, its
        guard or commit closes it (a call without an id is not followed: its requests always move
        its agent)."""
        opened = self._opened.get(agent)
        preflighted = opened is not None and call_id in opened
        state = self._states.get(agent)
        if state is None:
            state = self._states[agent] = self._made()
        elif OPERATIONS[op].recent and not (call_id and preflighted):
            del self._states[agent]
            self._states[agent] = state
        if call_id and op == "preflight":
            opened = self._opened.setdefault(agent, {})
            opened.pop(call_id, None)  # the latest request last: the bound lets the oldest go
            opened[call_id] = None
            if len(opened) > self._bound:
                del opened[next(iter(opened))]
        elif preflighted:
            self.returned(agent, call_id)
        return state

    def returned(self, agent: AgentId, call_id: str) -> None:
        """The guard of ``call_id`` came, or its result: the call is no longer opened."""
        opened = self._opened.get(agent)
        if opened is not None:
            opened.pop(call_id, None)
            if not opened:
                del self._opened[agent]

    def settled(self, agent: AgentId) -> None:
        """A human turn: whatever the agent's calls were, none is opened any more."""
        self._opened.pop(agent, None)

    def forget(self, agent: AgentId) -> None:
        self._states.pop(agent, None)
        self._opened.pop(agent, None)

    def states(self) -> Iterator[State]:
        return iter(self._states.values())

    def _made(self) -> State:
        """A new agent's state; past the limit, the least recently active agent goes first, whatever
        its calls await (a result moves no agent, nor keeps one)."""
        if len(self._states) >= self._limit:
            idlest = next(iter(self._states))
            if self._dropped is not None:
                self._dropped(idlest, self._states[idlest], list(self._opened.get(idlest, ())))
            self.forget(idlest)
        return self._new()
