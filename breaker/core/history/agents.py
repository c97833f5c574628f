"""The agents a breaker holds state for: at most ``maxAgents``, the idlest forgotten first.

An agent becomes the most recently active when a call of its is decided, prechecked or committed
(``OPERATIONS``); reading its state (a result, ``passes``) leaves the order alone. Past ``maxAgents`` the
least recently active agent is dropped whole, as if it had been forgotten.
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
    (``Agents.active``), and whether it can change what a verdict reads, so that verdicts made
    ahead of the guard (``plans``) no longer hold: always, or only when it asks the operator."""

    recent: bool
    changes: Literal["always", "when it asks"]


#: The one statement of that rule, by request (breaker/protocol.py): ``Breaker`` follows it, and
#: the shim applies it from the configure reply (node-shim/ahead.js, journal.js), as does
#: ``rtb replay``. ``forget`` drops the agent whole.
OPERATIONS: dict[str, Operation] = {
    "preflight": Operation(recent=True, changes="when it asks"),
    "guard": Operation(recent=True, changes="always"),
    "commit": Operation(recent=True, changes="always"),
    "result": Operation(recent=False, changes="always"),
    "human": Operation(recent=False, changes="always"),
    "step": Operation(recent=True, changes="always"),
}


class Agents(Generic[State]):
    """Agent id -> its state, least recently active first."""

    __slots__ = ("_limit", "_new", "_states")

    def __init__(self, limit: int, new: Callable[[], State]) -> None:
        self._limit = limit
        self._new = new
        self._states: dict[AgentId, State] = {}

    def __len__(self) -> int:
        return len(self._states)

    def __getitem__(self, agent: AgentId) -> State:
        return self._states[agent]

    def get(self, agent: AgentId) -> State | None:
        """The agent's state, if it has one; the order is left alone."""
        return self._states.get(agent)

    def active(self, agent: AgentId) -> State:
        """The agent's state, made if new, now the most recently active; past the limit the idlest
        agent goes."""
        state = self._states.pop(agent, None)
        if state is None:
            state = self._new()
            if len(self._states) >= self._limit:
                del self._states[next(iter(self._states))]
        self._states[agent] = state
        return state

    def forget(self, agent: AgentId) -> None:
        self._states.pop(agent, None)

    def states(self) -> Iterator[State]:
        return iter(self._states.values())
