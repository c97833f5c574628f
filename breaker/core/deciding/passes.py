"""Passes: how many more calls of an agent, whatever they are, surely go through unasked.

``passes`` holds whatever the results are; ``conditional``, while they are news.

The guard allows them and the preflight never asks about them, whatever results or human turns
come between. The shim lets that many calls through without waiting for an answer
(node-shim/call/ahead.js) and sends them after; they are decided in order all the same (a notice they
earn still comes with their result). Why it holds: each rule stops a call once a count reaches
its limit, and no call adds more than one to any count (a key a call carries twice counts once,
``fingerprints.distinct``): to a capped key in the window (none counts more than the agent's
highest peak), to a failure streak, or to the evidence of results (``progress.Evidence.passes``:
a result still awaited counts as if it added one). Notices stop nothing, so they leave passes alone.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from itertools import repeat
from typing import Final, Literal, NamedTuple

from breaker.core.config import BreakerConfig
from breaker.core.deciding.agent import AgentState
from breaker.core.history import SOONEST, Evidence, fresh_evidence_passes
from breaker.core.reading.groups import APART, NO_GROUP, stand_ins
from breaker.core.reading.news import DIGEST_BYTES

#: ``passes`` when no fingerprint is capped at all: nothing can ever be denied.
UNLIMITED_PASSES = 1 << 30


def tightest_cap(config: BreakerConfig) -> float | None:
    """The lowest cap (None: nothing is capped)."""
    return min((cap for cap in config.limits.values() if cap is not None), default=None)


def passes(state: AgentState, config: BreakerConfig, tightest: float | None, peak: int | None = None) -> int:
    """The least distance from ``state`` to any limit (``tightest``: ``tightest_cap(config)``;
    ``peak``: the agent's highest peak, when read already)."""
    # min and max spelled out as comparisons: a call of either costs more than its comparison.
    left: float = UNLIMITED_PASSES
    if tightest is not None:
        left = tightest - 1 - (state.repeats.highest_peak() if peak is None else peak)
    if config.failLimit is not None:
        room = config.failLimit - state.failures.longest()
        left = room if room < left else left
    same_limit, evidence = config.sameResultLimit, state.progress
    if same_limit is not None:
        room = fresh_evidence_passes(same_limit) if evidence is None else evidence.passes(same_limit)
        left = room if room < left else left
    passes = math.ceil(left)
    return passes if passes > 0 else 0


#: A promise names at most this many groups (a window holding more promises none by group).
GROUPS_NAMED = 64
#: A promise lists its window's calls only for a window of at most this many (a larger one
#: promises none by group: an answer would carry a number for each of its calls).
WINDOW_LISTED = 256
#: A call of the window whose group is not named (``reading.groups.APART``), in ``window``.
UNNAMED = -1


class Conditional(NamedTuple):
    """Calls that surely pass while the results after the answer are news, and the digests news
    must not have; and beyond them, a call while fewer than ``room`` calls are of its group or its
    tool's loose group among the window's (``groups``; ``window``, each of its calls as the index
    of its group in ``groups``, oldest first, ``UNNAMED`` for a call of none) and those sent since
    (``reading.groups``), of the calls still in the window when it comes."""

    passes: int
    digests: tuple[int, ...]
    groups: tuple[int, ...] | None = None  # None: no call passes by its group
    room: int = 0
    window: tuple[int, ...] = ()

    def counts(self) -> dict[int, int]:
        """How many of the window's calls are of each group named."""
        named = self.groups or ()
        return {group: self.window.count(index) for index, group in enumerate(named)}


#: Why it holds. While every result to come is news (``reading.news``), a result changes nothing
#: a later verdict reads: each key of its call came back once, no run of answers alike grew, no
#: cycle closed (its result matches none before it), no failure streak grew. So only what does not
#: hang on results limits the calls to come: the caps (a call adds at most one to a capped key's
#: count), and what is known now (a key or a run at its limit, a cycle gone round twice, a streak at
#: ``failLimit``). ``tests/test_conditions.py`` checks it with hypothesis over every rule.
#:
#: By group: a call counts on a key no more often than the calls that share it, and two calls that
#: share a key share a group, or one is of a stand-in group of the other's (``reading.groups``). So a
#: call with fewer than ``tightest - 1`` calls of its group or its stand-ins in its window counts
#: less than ``tightest - 1`` on every capped key: no cap stops it
#: (``tests/test_group_promises.py``). Its window is the last ``size`` of the window's calls at the
#: answer and those sent since, taken in order: each call the guard decides adds one entry,
#: allowed or denied, and a human message or a forgotten agent only empties it.


def by_group(more: Conditional, tool: str, group: int, since: Sequence[int], size: int) -> bool:
    """Whether a call of ``tool`` whose group is ``group`` goes on by its group on ``more`` while
    its condition holds (``since``: the groups of the calls sent since the answer, oldest first;
    ``size``: the window's): the statement node-shim/call/ahead.js ``byGroup`` applies. A call
    with no group, or of a stand-in group of its own (a loose call), never does."""
    others = stand_ins(tool)
    if more.groups is None or group == NO_GROUP or group in others:
        return False
    alike_named = {index for index, named in enumerate(more.groups) if named == group or named in others}
    still = more.window[max(0, len(more.window) + len(since) - size) :]  # not pushed out since
    alike = sum(1 for index in still if index in alike_named)
    alike += sum(1 for sent in since[-size:] if sent == group or sent in others)
    return alike < more.room


#: A result's head, what news compares (``reading.news``), and how it is read as a number.
_HEAD = operator.itemgetter(slice(0, DIGEST_BYTES))
_BIG_ENDIAN: Final[Literal["big"]] = "big"
#: A recent call's result (``cycles.Recent``: keys, result, call id, turn).
_RESULT_OF = operator.itemgetter(1)


def held(evidence: Evidence) -> set[bytes]:
    """The results one to come could be found the same as (those of the calls a record within the
    window of a call awaited or to come may hold, the runs', the recent calls'): news is none."""
    since = evidence.since()
    found = {result for serial, result in evidence.returns.items() if serial > since}
    found.update(map(_RESULT_OF, evidence.recent))  # in C: None (awaited) goes below
    found.update((evidence.target_result, evidence.tool_result))
    found.discard(b"")
    found.discard(None)  # a recent call's result still awaited
    return found


def conditional(
    state: AgentState, config: BreakerConfig, tightest: float | None, now: int, peak: int | None = None
) -> Conditional | None:
    """The calls that surely pass while every result to come is news (None: no more than ``now``,
    the passes whatever they are; ``peak``: as ``passes`` takes it)."""
    left: float = UNLIMITED_PASSES
    if tightest is not None:
        left = tightest - 1 - (state.repeats.highest_peak() if peak is None else peak)
    if config.failLimit is not None and state.failures.streaks.longest() >= config.failLimit:
        return None
    digests: tuple[int, ...] = ()
    limit, evidence = config.sameResultLimit, state.progress
    if limit is not None:
        if limit <= 1 + SOONEST:
            return None  # one news result may stop the call after it: no more than ``passes``
        if evidence is not None:
            if evidence.stops_now(limit):
                return None
            digests = _head_numbers(held(evidence))
    then = math.ceil(left)
    then = then if then > 0 else 0
    groups, room, window = _named_groups(state, tightest)
    if then > now:
        return Conditional(then, digests, groups, room, window)
    return None if groups is None else Conditional(now, digests, groups, room, window)


#: The held results' heads as numbers, kept: most results one answer holds, the next holds
#: again, and reading them apart is most of what a promise costs to read them (all are let go
#: once ``_HEADS_KEPT`` are kept).
_HEADS_KEPT = 4096
_heads: dict[bytes, int] = {}


def _head_numbers(results: set[bytes]) -> tuple[int, ...]:
    """Each result's head as a big-endian number (``int.from_bytes(result[:DIGEST_BYTES],
    "big")``), sorted and each once."""
    heads = _heads
    missing = results.difference(heads)
    if missing:
        if len(heads) + len(missing) > _HEADS_KEPT:
            heads.clear()
            missing = results
        # In C: map over the heads, no frame per result.
        numbers = map(int.from_bytes, map(_HEAD, missing), repeat(_BIG_ENDIAN))
        heads.update(zip(missing, numbers, strict=True))
    return tuple(sorted(set(map(heads.__getitem__, results))))


def _named_groups(
    state: AgentState, tightest: float | None
) -> tuple[tuple[int, ...] | None, int, tuple[int, ...]]:
    """The groups of the window's calls, the room a group has, and the window's calls as the
    index of each one's group, oldest first (None: none promised). The calls with no group that
    fetch are named too (as ``NO_GROUP``), as a call of a URL tool counts them
    (``reading.groups.stand_ins``); the calls ``APART`` are not (``UNNAMED``)."""
    if tightest is None:
        return None, 0, ()  # nothing capped: the passes are unlimited already
    room = math.ceil(tightest - 1)
    window = state.repeats.groups
    if room <= 0 or len(window) > WINDOW_LISTED:
        return None, 0, ()
    named = set(window)
    named.discard(APART)
    if len(named) > GROUPS_NAMED:
        return None, 0, ()
    groups = tuple(sorted(named))
    index = dict(zip(groups, range(len(groups)), strict=True))
    return groups, room, tuple(index.get(group, UNNAMED) for group in window)
