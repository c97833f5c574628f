"""Cycles among an agent's recent calls: the last calls going round again, call for call and
result for result (A-B-A-B, A-B-C-A-B-C, five reads in a ring), and how many calls surely complete
none (what ``passes`` reads). Pure: a list of recent calls in, a number out.
"""

from __future__ import annotations

#: The longest cycle looked for: five different calls repeated in turn.
MAX_PERIOD = 5
#: The round of a cycle a call is denied for beginning: the calls before it went round twice.
CYCLE_ROUND = 3

#: A recent call: its keys, its result (None while awaited), its call id, its model turn.
Recent = tuple[frozenset[str], bytes | None, str, int]


def together(one: int, other: int) -> bool:
    """Two calls of one model turn (the harness tells turns): sent before either's answer."""
    return one == other and one > 0


def same(one: Recent, other: Recent, *, unknown: bool) -> bool:
    """Two recent calls are the same call with the same result; a result still awaited is
    ``unknown`` (it may turn out either way)."""
    if one[1] is None or other[1] is None:
        return unknown
    return one[:2] == other[:2]


def cycle(recent: list[Recent]) -> int:
    """The period (2 to ``MAX_PERIOD``) of a cycle the last calls complete: their last ``p``
    calls are the ``p`` before them again, call for call and result for result (0: none)."""
    if len(recent) < 4:
        return 0
    last = recent[-1]
    keys, result = last[0], last[1]
    if result is None:
        return 0  # its result is still awaited: it has not gone round yet
    for period in range(2, MAX_PERIOD + 1):
        if len(recent) < 2 * period:
            break
        before = recent[-1 - period]
        if before[1] != result or before[0] != keys:
            continue  # the last call did not go round (results first: they differ more often)
        if together(last[3], before[3]):
            continue  # calls of one turn, sent before their answers: no round gone twice
        if all(same(recent[-i], last, unknown=False) for i in range(2, period + 1)):
            continue  # one call repeated, not a ring of calls: the same result judges it (its limit)
        if all(same(recent[-i], recent[-i - period], unknown=False) for i in range(2, period + 1)):
            return period
    return 0


def cycle_room(recent: list[Recent]) -> int:
    """How many more calls surely complete no cycle, whatever they are and return: the fewest
    calls after which the last ``2p`` calls could be a repeated cycle (a result still awaited
    could be anything, and so could every call to come).

    With ``added`` calls to come, the last ``2p`` are a cycle when each of the ``p - added``
    known calls that would open it matches the one ``p`` later: a run of matches that ends
    with the call ``p`` before the last. So the fewest is ``p`` minus that run."""
    count = len(recent)
    room = 2 * MAX_PERIOD
    for period in range(2, MAX_PERIOD + 1):
        fewest = 2 * period - count if 2 * period > count else 0  # calls to come before there are 2p
        run = 0  # matches in a row, back from the pair (count - p - 1, count - 1)
        at = count - period - 1
        while run < period - fewest:
            one, other = recent[at - run], recent[at - run + period]
            # ``same(one, other, unknown=True)``, inlined: this runs after every answer
            if one[1] is not None and other[1] is not None and (one[1] != other[1] or one[0] != other[0]):
                break
            run += 1
        added = period - run if period - run > fewest else fewest
        if added < period and added < room:
            room = added
        widest = period if period > fewest else fewest
        if widest < room:
            room = widest
    return room
