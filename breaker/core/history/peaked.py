"""Records by key that know their highest measures at once: what ``passes`` reads, asked after
every answer, without a walk over every record.

Each record has two small whole-number measures (``progress``: how many times a call key came back
the same plus how much sooner it could yet be stopped, and plus how much sooner it is stopped
now). The map counts how many records hold each value of each measure, so the highest of either
is a look over the few distinct values, however many records there are. The second is also
counted over the records of the keys ``marked`` picks out (``progress``: the keys of what failed),
so whether any of those could stop a call is a look too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from typing import TypeVar

Record = TypeVar("Record")


class Peaked(MutableMapping[str, Record]):
    """Records by key (in the order they were last set) that tally ``measure(record)`` (two
    numbers) over the records held, and its second over those whose key is ``marked``."""

    __slots__ = ("_marked", "_measure", "_records", "_tallies")

    def __init__(
        self, measure: Callable[[Record], tuple[int, int]], marked: Callable[[str], bool] | None = None
    ) -> None:
        self._measure = measure
        self._marked = marked
        self._records: dict[str, Record] = {}
        # Each measure over every record, then the second over the marked ones: how many records
        # hold each value (plain dicts: a ``Counter`` costs ten times as much to make, and an
        # agent's evidence makes one at each start).
        self._tallies: tuple[dict[int, int], dict[int, int], dict[int, int]] = ({}, {}, {})

    def __getitem__(self, key: str) -> Record:
        return self._records[key]

    def get(self, key: str, default: Record | None = None) -> Record | None:  # type: ignore[override]
        return self._records.get(key, default)

    def __setitem__(self, key: str, record: Record) -> None:
        records = self._records
        if key in records:  # ``pop``, inlined: a record is set for every key of every result
            self._untally(key, records.pop(key))
        records[key] = record
        first, second = self._measure(record)
        tallies = self._tallies
        tallies[0][first] = tallies[0].get(first, 0) + 1
        tallies[1][second] = tallies[1].get(second, 0) + 1
        if self._marked is not None and self._marked(key):
            tallies[2][second] = tallies[2].get(second, 0) + 1

    def __delitem__(self, key: str) -> None:
        self._untally(key, self._records.pop(key))

    def pop(self, key: str, default: Record | None = None) -> Record | None:  # type: ignore[override]
        if key not in self._records:
            return default
        record = self._records.pop(key)
        self._untally(key, record)
        return record

    def __iter__(self) -> Iterator[str]:
        return iter(self._records)

    def __len__(self) -> int:
        return len(self._records)

    def clear(self) -> None:
        self._records.clear()
        for tally in self._tallies:
            tally.clear()

    def highest(self) -> tuple[int, int] | None:
        """The highest value of each measure over the records held (None: there are none)."""
        if not self._records:
            return None
        first, second, _ = self._tallies
        return _highest(first), _highest(second)

    def highest_marked(self) -> int | None:
        """The highest second measure over the marked records (None: none is held)."""
        marked = self._tallies[2]
        return _highest(marked) if marked else None

    def _untally(self, key: str, record: Record) -> None:
        first, second = self._measure(record)
        _untally_one(self._tallies[0], first)
        _untally_one(self._tallies[1], second)
        if self._marked is not None and self._marked(key):
            _untally_one(self._tallies[2], second)


def _highest(tally: dict[int, int]) -> int:
    """The highest value a tally holds (it holds one at least): ``max``, spelled out, costs a
    fraction of a call of it over the few values there are."""
    values = iter(tally)
    top = next(values)
    for value in values:
        if value > top:
            top = value
    return top


def _untally_one(tally: dict[int, int], value: int) -> None:
    left = tally[value] - 1
    if left:
        tally[value] = left
    else:
        del tally[value]
