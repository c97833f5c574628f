"""No progress: one tool giving the same result again and again, and the same call once more.

The published loop detectors stop an agent that repeats one call with one result (OpenHands'
StuckDetector after four identical action/observation pairs, Roo Code at the fourth identical
call in a row). Here that signal is applied before the call runs: once one tool returned one
result ``sameResultLimit`` times in a row, a call that repeats the agent's previous call is
denied. The run counts the tool's results, not only identical calls, so a variant that got the
same answer (``flat{…}`` then ``flag{…}``, "Wrong flag!" each time) belongs to it; the call that
is stopped must be the previous call again, so anything new the agent tries still runs.

"The same call" shares an ``exact:`` or ``cmd:`` key with the previous one (decoy arguments and
volatile flags are already stripped); "the same result" is the same text the model read. Only
the result of the latest call that ran can extend a run: with parallel calls, an earlier call's
result arrives too late to say anything about the call after it. Pure: one run per agent, held
as a digest.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from breaker.core.fingerprints import Fingerprint

#: The fingerprint kinds that say two calls are the same call.
CALL_KINDS = frozenset({"exact", "cmd"})


@dataclass(slots=True)
class SameResults:
    """One agent's run: its tool, the keys of the last call that ran, the result and how often."""

    tool: str = ""
    keys: frozenset[str] = frozenset()
    awaited: str = ""  # the call id of the last call that ran, until its result arrives
    returned_by: str = ""  # the call id whose result the run holds (the one to quote)
    result: bytes = b""
    count: int = 0

    def repeats(self, tool: str, fingerprints: Iterable[Fingerprint]) -> int:
        """How many identical results in a row a call repeating the previous one follows (0: none,
        or the call is not the previous one again)."""
        if tool != self.tool or self.keys.isdisjoint(call_keys(fingerprints)):
            return 0
        return self.count

    def ran(self, call_id: str, tool: str, fingerprints: Iterable[Fingerprint]) -> None:
        """A call was allowed: it is now the previous call; another tool ends the run."""
        if tool != self.tool:
            self.count = 0
        self.tool = tool
        self.keys = call_keys(fingerprints)
        self.awaited = call_id

    def returned(self, call_id: str, text: str) -> None:
        """A result arrived: the same as the run's extends it, any other starts a new run."""
        if not call_id or call_id != self.awaited:
            return
        self.awaited = ""
        self.returned_by = call_id
        result = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        if self.count and result == self.result:
            self.count += 1
        else:
            self.result = result
            self.count = 1


def call_keys(fingerprints: Iterable[Fingerprint]) -> frozenset[str]:
    return frozenset(fp.key for fp in fingerprints if fp.kind in CALL_KINDS)
