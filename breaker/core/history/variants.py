"""The variants of one failing call: calls of one tool the breaker does not know, whatever their
arguments, failing in a row with one error (the calls' own arguments quoted back left out).

A tool the breaker reads (a shell, a file tool) is read call by call: different commands or paths
failing alike are different attempts. A function of an API is known by its answers alone: the same
function failing the same way, its arguments reworded, is one call that cannot work as it is
(``sameResultLimit`` of them in a row stop the next, ``progress``). Pure and tiny.
"""

from __future__ import annotations

from dataclasses import dataclass

from breaker.core.history.cycles import together


@dataclass(slots=True)
class Variants:
    """The tool whose calls failed in a row with one error, and how often (calls of one model
    turn, sent before their answers, count once)."""

    tool: str = ""
    error: bytes = b""
    run: int = 0
    quote: str = ""  # the call id of the latest of them
    round: int = 0

    def failed(self, tool: str, error: bytes, call_id: str, turn: int) -> None:
        """A call of ``tool`` failed with ``error`` (its digest): one more of the run, or a new one."""
        if tool == self.tool and error == self.error:
            if not together(self.round, turn):
                self.run += 1
        else:
            self.tool, self.error, self.run = tool, error, 1
        self.quote, self.round = call_id, turn

    def ended(self, tool: str | None = None) -> None:
        """A call of ``tool`` worked or is read call by call (None: a change, or a restart): the
        run of that tool ends."""
        if tool is None or tool == self.tool:
            self.tool, self.run = "", 0
