"""The agents a breaker holds state for: at most ``maxAgents``, the idlest forgotten first.

An agent becomes the most recently active when a call of its is decided or prechecked; reading
its state (a preflight, a result, ``passes``) leaves the order alone. Past ``maxAgents`` the
least recently active agent is dropped whole, as if it had been forgotten.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

AgentId = int | str
State = TypeVar("State")


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
