"""What calls of tools the breaker does not know may have changed, as their answers tell.

A call that may change what later calls read (``reading.may_change``) and reports what it did
(``reading.reports_state``) is a possible change. Judged by the answers, not by the names of the
calls: a change made before (the same call with the same answer) is the agent going round through
states it has been in, and brings nothing new; a change not made before may have undone what
other such calls did, and made what failed work. The last change that landed is the context the
agent works in: a read is predicted to answer as it did only in the same context.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

#: Changes remembered per agent; past this the oldest are forgotten (made again, they are new).
MAX_CHANGES = 256


@dataclass(slots=True)
class Changes:
    """One agent's possible changes since its evidence last started over."""

    seen: dict[bytes, None] = field(default_factory=dict)  # each change (keys and answer), in order
    changers: set[str] = field(default_factory=set)  # the keys of the calls that made them
    context: bytes = b""  # the last change that landed (empty: none)

    def landed(self, keys: frozenset[str], result: bytes) -> bool:
        """A call of ``keys`` that may change what later calls read answered ``result`` (its digest):
        now the context; whether it is a change not made before."""
        if len(self.changers) >= MAX_CHANGES:
            self.changers.clear()
        self.changers |= keys
        spelled = b"\0".join(sorted(key.encode("utf-8", "surrogatepass") for key in keys))
        self.context = change = hashlib.blake2b(spelled + b"\0" + result, digest_size=16).digest()
        if change in self.seen:
            return False
        self.seen[change] = None
        if len(self.seen) > MAX_CHANGES:
            del self.seen[next(iter(self.seen))]
        return True
