"""No progress, read from results: the same call with the same result is a call that brought nothing.

The result of a call is evidence. The same call with the same result, with nothing changed in the
workspace between, is no progress; the same call with a changing result is polling, and polling
is left alone. Three rules read that evidence and apply before a call runs (the call is predicted
to bring what it brought before); ``sameResultLimit`` (N) sets them:

* **the same result** (``same``): a call that already returned one result N times, each within
  the window of the one before and with nothing changed since, is denied; one whose result
  failed, was a complaint of the shell or had no output is denied after N - 1 (nothing new can be
  read from it), and so is a command whose answer is settled (``settled``: literal text through
  text filters, which answers alike every time); one whose file tool returned an error after
  N - 2 (an edit the linter rejected, resent word for word, gets the same rejection);
* **a cycle** (``cycle``): once the last p calls (p from 2 to 5) repeated the p before them, call
  for call and result for result, a call that goes round again is denied (A-B-A-B, A-B-C-A-B-C,
  five reads in a ring);
* **the same answer, reworded** (``reworded``): once N calls in a row on one target returned the
  identical result with some output (a search that found nothing has none), another call on that
  target is denied (N + 1 for a command line, whose target is its program). A target is a
  command's program with the addresses it fetches, a file tool's path with the text it writes,
  an address without its query, else the tool: a flag or a stage appended, a range shifted, a
  cache-buster query, a note that changes each time.

Anything new the agent tries still runs: only a repeat (the same call, the next call of a cycle,
the same target after identical answers) is stopped. A change that lands in the workspace
(identity: state-aware) starts the evidence over. Pure: state in, state out; bounded by
``MAX_CALLS`` remembered keys and ``2 * MAX_PERIOD`` recent calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from breaker.core.history.asked import FAILED_KEYS, ITEM_KEY, Asked
from breaker.core.history.changes import Changes
from breaker.core.history.cycles import CYCLE_ROUND, MAX_PERIOD, Recent, cycle, cycle_room, together
from breaker.core.history.peaked import Peaked
from breaker.core.history.seen import Seen, failed_key, measures
from breaker.core.history.sooner import SOONEST, answers_data, stops_sooner, worst_sooner
from breaker.core.history.variants import Variants
from breaker.core.reading import (
    FILE_TOOLS,
    SHELL_TOOLS,
    Failure,
    Settled,
    judge,
    may_change,
    reports_state,
    result_digest,
    says_nothing,
)
from breaker.core.reading.volatile import Answer

#: Calls (and results) remembered per agent since the last change; past this the oldest go.
MAX_CALLS = 256


#: The rules a no-progress denial names (``Stall.rule``), as docs/decision-quality.md's table does.
RULES = ("same", "failed", "cycle", "reworded", "variants")


@dataclass(frozen=True, slots=True)
class Stall:
    """Why a call is denied for no progress: the ``rule``, the count it reached, its limit, and
    the call id whose result to quote (empty: none)."""

    rule: str  # "same" | "failed" | "cycle" | "reworded" | "variants"
    count: int  # a cycle's: its period (the calls in one round)
    limit: float
    quote: str = ""
    poll: bool = False  # the call was asked again right after itself: a poll

    @property
    def reached(self) -> tuple[int, float]:
        """The count this stop reached and the limit it reached, as a report shows them: a
        cycle's in rounds (the call would begin round ``CYCLE_ROUND``), any other rule's its own."""
        return (CYCLE_ROUND, CYCLE_ROUND) if self.rule == "cycle" else (self.count, self.limit)


class _Ran(NamedTuple):
    """A call allowed, until its result (a tuple: one is made for every call)."""

    tool: str
    keys: frozenset[str]
    serial: int
    settled: bool  # its answer depends on nothing but the call itself (``settled``)
    round: int
    asked: Asked | None  # what it asks for: its target, and its ``failed`` keys when it fails


@dataclass(slots=True)
class Evidence:
    """One agent's evidence since the workspace last changed."""

    window: int = 16  # a repeat counts while the one before it is at most this many calls back
    state: int = 0  # the workspace state the evidence belongs to
    serial: int = 0  # calls allowed so far
    repeats: Peaked[Seen] = field(default_factory=lambda: Peaked(measures, failed_key))  # by key
    recent: list[Recent] = field(default_factory=list)
    # The call of the last result (its target read when first compared), its result and how
    # often in a row: most results differ from the one before, so most targets are never read.
    target_of: Asked | None = None
    target_result: bytes = b""
    target_run: int = 0
    target_quote: str = ""
    target_round: int = 0
    failed_any: bool = False  # a key of what failed (``failed_keys``) was recorded since the restart
    # The previous call that ran (its tool and keys) and its tool's identical results in a row.
    last_tool: str = ""
    last_keys: frozenset[str] = frozenset()
    last_id: str = ""  # until its result arrives
    tool_result: bytes = b""
    tool_run: int = 0
    tool_quote: str = ""
    tool_round: int = 0
    round: int = 0  # the model turn the agent is in (0: the harness does not tell turns)
    sizes: dict[int, int] = field(default_factory=dict)  # calls allowed per recent turn
    running: dict[str, _Ran] = field(default_factory=dict)  # call id -> what it was, until its result
    returns: dict[int, bytes] = field(default_factory=dict)  # serial -> result, while a record may hold it
    changes: Changes = field(default_factory=Changes)  # what tools it does not know may have changed
    variants: Variants = field(default_factory=Variants)  # one failing call's variants
    answered: Answer | None = None  # the answer of the result just judged (the failure track reads it)

    def stall(self, tool: str, asked: Asked, state: int, limit: float) -> Stall | None:
        """The rule that denies a call asking for ``asked``, if any (reads only). Its keys are its
        call keys and, once something failed since the restart, the keys of what it asks that
        count when it fails; those and its target are read only when a rule could stop it."""
        keys = asked.keys
        if state != self.state or (not keys and not self._failing(asked)):
            return None
        highest = self.repeats.highest()
        if highest is not None and highest[1] >= limit:  # a key came back often enough to stop
            # What failed, asked again, is read only once a key of what failed could stop a call:
            # one that cannot changes nothing here, wherever it sorts.
            failed = self.repeats.highest_marked()
            failing = self._failing(asked) if failed is not None and failed >= limit else frozenset()
            for key in sorted(keys | failing):
                seen = self.repeats.get(key)
                if (
                    seen is None
                    or seen.serial <= self.serial - self.window
                    or seen.context != self.changes.context
                ):
                    continue  # long ago, or after another change than the last: let its answer tell
                cap = limit - seen.sooner
                if seen.times >= cap:
                    rule = "failed" if key.startswith(FAILED_KEYS) else "same"
                    return Stall(rule, seen.times, cap, seen.quote, self.polls(keys))
        period = cycle(self.recent)
        if period and self._shares(asked, self.recent[-period][0]):
            return Stall("cycle", period, limit, self.recent[-period][2])
        target = self.target() if self.target_run >= limit else ""
        if target and asked.target == target:
            cap = reworded_limit(target, limit)  # never below ``limit``
            if self.target_run >= cap:
                return Stall("reworded", self.target_run, cap, self.target_quote)
        if tool == self.last_tool and self.tool_run >= limit and self._shares(asked, self.last_keys):
            return Stall("reworded", self.tool_run, limit, self.tool_quote)
        if tool == self.variants.tool and self.variants.run >= limit:
            return Stall("variants", self.variants.run, limit, self.variants.quote)
        return None

    def _failing(self, asked: Asked) -> frozenset[str]:
        """What ``asked`` asks that counts when it fails, once something failed (else nothing)."""
        return asked.failed if self.failed_any else frozenset()

    def _shares(self, asked: Asked, keys: frozenset[str]) -> bool:
        """Whether a key of ``asked`` (its call keys, else its failing ones) is among ``keys``."""
        return not asked.keys.isdisjoint(keys) or not self._failing(asked).isdisjoint(keys)

    def new_round(self) -> None:
        """The model began a new turn: the calls it sends now were sent after it read every
        answer before; calls of one turn were sent together, before any of their answers."""
        self.round += 1
        self.sizes[self.round] = 0
        self.sizes.pop(self.round - MAX_CALLS, None)

    def ran(
        self,
        call_id: str,
        tool: str,
        keys: frozenset[str],
        state: int,
        *,
        settled: bool = False,
        asked: Asked | None = None,
    ) -> None:
        """A call was allowed: its result will be evidence (a change of state starts over).
        ``settled``: its answer cannot change (``settled.is_settled``); ``asked``: what it asks
        for, its target and the keys that count when it fails (read when its result comes)."""
        if state != self.state:
            self.restart(state)
        self.serial += 1
        if self.round:
            self.sizes[self.round] = self.sizes.get(self.round, 0) + 1
        if tool != self.last_tool:
            self.tool_run = 0
        self.last_tool, self.last_keys, self.last_id = tool, keys, call_id
        if call_id:
            self.running.pop(call_id, None)
            self.running[call_id] = _Ran(tool, keys, self.serial, settled, self.round, asked)
            self.recent.append((keys, None, call_id, self.round))
            del self.recent[: -2 * MAX_PERIOD]
            if len(self.running) > MAX_CALLS:  # a result that never came
                del self.running[next(iter(self.running))]

    def returned(
        self, call_id: str, text: str, facts: Mapping[str, object] | None
    ) -> Failure | Settled | None:
        """A result arrived (``facts``: as ``outcomes.judge`` reads them): one more of the same,
        or news. How ``judge`` judged it (None: no call of that id awaited it), which the failure
        track reads too."""
        ran = self.running.pop(call_id, None)
        self.answered = None
        if ran is None:
            return None
        tool, asked = ran.tool, ran.asked
        judged = judge(tool, facts, text)
        failure = judged.reason if isinstance(judged, Failure) else None
        # A call that may change what later calls read and reports what it did (``changes``):
        # made again with the same report, it changed nothing, like a settled answer.
        changes = failure is None and may_change(tool) and reports_state(text)
        silent = says_nothing(text)  # read once, for both of its readers
        sooner = stops_sooner(failure, tool, text, ran.settled or changes, silent)
        returns = self.returns
        result = returns[ran.serial] = result_digest(tool, text)
        if len(returns) > 2 * self.window:  # only a record of a call since ``since`` counts
            since = self.since()
            self.returns = {serial: result for serial, result in returns.items() if serial > since}
        recent = self.recent
        for at in range(len(recent)):
            if recent[at][2] == call_id:
                keys, _, ran_id, turn = recent[at]
                recent[at] = (keys, result, ran_id, turn)
        failing: frozenset[str] = frozenset()
        if asked is not None and (failure is not None or self.failed_any):
            failing = asked.failed  # read only when it failed or something had failed
            self.failed_any = self.failed_any or (failure is not None and bool(failing))
        if changes and self.changes.landed(ran.keys, result):  # a new change: what it may undo starts over
            for key in [
                key for key in self.repeats if key in self.changes.changers or key.startswith(FAILED_KEYS)
            ]:
                del self.repeats[key]
            self.failed_any = False
            self.variants.ended()
        data = answers_data(tool, failure, text)
        answer = self.answered = Answer(tool, text, asked.call if asked else None)
        for key in ran.keys | failing if failing else ran.keys:
            previous = self.repeats.pop(key, None)
            if key in failing and failure is None:
                continue  # what failed before worked now
            if key in failing and previous is not None and previous.call == ran.keys:
                self.repeats[key] = previous  # the same call failing again: counted by its own keys
                continue
            self.repeats[key] = self._seen(
                key, previous, ran, result, sooner, call_id, answer, failure is not None, data
            )
        while len(self.repeats) > MAX_CALLS:
            del self.repeats[next(iter(self.repeats))]
        if silent:  # an answer with no output says nothing about a rewording
            self.target_of, self.target_result, self.target_run = None, b"", 0
        else:
            # Its target is read only after the same result as the last one's (else a new run starts).
            same = result == self.target_result and asked is not None and bool(asked.target)
            if same and asked is not None and asked.target == self.target():
                if not together(self.target_round, ran.round):
                    self.target_run += 1
            else:
                self.target_of, self.target_result, self.target_run = asked, result, 1
        self.target_quote, self.target_round = call_id, ran.round
        if failure is None or not may_change(tool):  # a tool it reads: calls of their own
            self.variants.ended(tool)
        else:
            self.variants.failed(tool, answer.content(), call_id, ran.round)
        if call_id == self.last_id:  # only the latest call's result can continue its tool's run
            self.last_id = ""
            if not self.tool_run or result != self.tool_result:
                self.tool_run = 1
            elif not together(self.tool_round, ran.round):
                self.tool_run += 1
            self.tool_result, self.tool_quote, self.tool_round = result, call_id, ran.round
        return judged

    def _seen(
        self,
        key: str,
        previous: Seen | None,
        ran: _Ran,
        result: bytes,
        sooner: int,
        call_id: str,
        answer: Answer,
        failed: bool,
        data: bool,
    ) -> Seen:
        """What ``key`` returned now (``answer``: its content, read when needed; ``failed``: as a
        failure; ``data``: as data, ``answers_data``), after ``previous``: one more of the same, or news."""
        call = ran.keys
        batched = self.sizes.get(ran.round, 0) > 1
        if key.startswith(ITEM_KEY):  # one item among others: the failure may be another's
            sooner = min(sooner, 1)
        elif key.startswith(FAILED_KEYS) and ran.tool.lower() not in FILE_TOOLS:
            sooner = 0  # a tool not of files, failing alike with other arguments: counted in full
        recent = previous is not None and previous.serial > ran.serial - self.window
        if previous is None or not recent or previous.result != result:
            last = previous if previous is not None and recent else None
            content = b"" if last is None else answer.content()  # read only for a call asked before
            # A first answer's content is read only now, from its kept ends (none: it failed).
            earlier = last.content or (last.kept.content() if last.kept else b"") if last else b""
            moved = last is not None and not key.startswith(FAILED_KEYS) and bool(earlier)
            moved = moved and last is not None and not failed and (last.moved or content != earlier)
            polled = moved or (last is not None and (last.polled or last.result != result))
            made, context = (call_id, ran.serial, ran.round), self.changes.context
            worst, polled = worst_sooner(sooner), polled and not failed
            kept = None if content or failed else answer.keep()  # until its content is read
            return Seen(
                result, 1, sooner, worst, *made, False, batched, call, content, moved, polled, context, kept
            )
        if together(previous.round, ran.round):
            return previous  # sent together, before either answer: not a repeat
        # A rerun after other calls ran (not a poll in a row) whose answer came back the same is
        # stopped one sooner; soonest (as a file tool's error is) for a call once sent together
        # with others in a turn (an agent rerunning a batch of lookups).
        apart = previous.apart or previous.serial < ran.serial - 1
        batched = batched or previous.batched
        if apart and not key.startswith(ITEM_KEY):
            sooner = max(sooner, SOONEST if batched else 1)
        elif not key.startswith(FAILED_KEYS) and data:
            sooner = max(sooner, 1)  # the same data again right after itself (``answers_data``)
        times, worst = previous.times + 1, worst_sooner(sooner)
        made, content = (call_id, ran.serial, ran.round), previous.content or answer.content()
        moved, polled, context = previous.moved, previous.polled, self.changes.context
        return Seen(
            result, times, sooner, worst, *made, apart, batched, call, content, moved, polled, context
        )

    def target(self) -> str:
        """The target of the last result's call (empty: none, or no result since the restart)."""
        return "" if self.target_of is None else self.target_of.target

    def polls(self, keys: frozenset[str]) -> bool:
        """Whether a call of ``keys`` is a poll: asked again right after itself, its answer changed
        between two of its runs (its content, or only its time)."""
        if not keys or keys.isdisjoint(self.last_keys):
            return False
        return any((seen := self.repeats.get(key)) is not None and seen.polled for key in keys)

    def moving(self, keys: frozenset[str]) -> bool:
        """Whether the call of ``keys`` is a poll whose answer moved: it changed in content between
        two of its runs, each within the window of the one before (no cap stops it; the same
        answer ``sameResultLimit`` times does)."""
        for key in keys:
            seen = self.repeats.get(key)
            if seen is not None and seen.moved and seen.serial > self.serial - self.window:
                return True
        return False

    def awaited(self) -> int:
        """Results still to come: each may add one to a count."""
        return len(self.running)

    def passes(self, limit: float) -> float:
        """How many more calls, whatever they are and return, no rule here denies (``passes``).

        Each result adds at most one to a count, and a result still awaited counts as one already
        in. The next call is judged by what is known now; the ones after it as if every result
        came back the same and judged the worst (a file tool's error: stopped soonest)."""
        # min and max spelled out as comparisons: a call of either costs more than its comparison,
        # and this runs with every answer that brings the passes.
        awaited = len(self.running)
        room: float = cycle_room(self.recent)
        bound = limit - self.target_run - awaited
        room = bound if bound < room else room
        bound = limit - self.tool_run - awaited
        room = bound if bound < room else room
        fresh = limit - SOONEST - awaited
        bound = fresh if awaited or fresh > 1 else 1
        room = bound if bound < room else room
        highest = self.repeats.highest()  # the most any key could be at, and is at, against its limit
        if highest is not None:
            later = limit - highest[0] - awaited
            if awaited:
                room = later if later < room else room
            elif highest[1] >= limit:  # a key stopped already
                room = 0
            else:
                bound = later if later > 1 else 1
                room = bound if bound < room else room
        return room

    def since(self) -> int:
        """The serial a record's must be past to count for any call awaited or to come."""
        running = self.running
        first = min([ran.serial for ran in running.values()]) if running else self.serial + 1
        return first - self.window

    def stops_now(self, limit: float) -> bool:
        """Whether what is known now could stop a call: all that can while every result is news."""
        highest = self.repeats.highest()
        if highest is not None and highest[1] >= limit:
            return True
        if self.target_run >= limit or self.tool_run >= limit or self.variants.run >= limit:
            return True
        return cycle(self.recent) > 0

    def restart(self, state: int) -> None:
        """The workspace changed: what was seen before says nothing about what comes now."""
        self.state = state
        self.repeats.clear()
        self.recent.clear()
        self.target_of, self.target_result, self.target_run, self.target_quote = None, b"", 0, ""
        self.tool_result, self.tool_run, self.tool_quote = b"", 0, ""
        self.failed_any = False
        if self.changes.context:  # a change landed since the last restart (else it is as made)
            self.changes = Changes()
        self.variants.ended()


def fresh_evidence_passes(limit: float) -> float:
    """``Evidence.passes`` of an agent with no evidence yet."""
    return Evidence().passes(limit)


def reworded_limit(target: str, limit: float) -> float:
    """Identical answers in a row on one target before another call on it is stopped: ``limit``,
    one more for a command line, whose target (its program) is the coarser."""
    return limit + (1 if target.partition(":")[0] in SHELL_TOOLS else 0)
