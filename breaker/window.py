"""One agent's sliding window: its last ``size`` committed entries and how often each key occurs.

The counts are kept in step with the entries (incremented on append, decremented on eviction), so
asking how often a fingerprint was seen costs one dictionary lookup however long the window is,
and the memory an agent holds is bounded by ``size`` entries.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Entry:
    """What one guarded call committed: its fingerprint keys, and its id (to quote its result)."""

    call_id: str
    keys: frozenset[str]


class Window:
    """The last ``size`` entries of one agent, oldest first, with per-key occurrence counts."""

    __slots__ = ("_call_ids", "_counts", "_entries", "size")

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"a window holds at least one entry, got size {size}")
        self.size = size
        self._entries: deque[Entry] = deque()
        # Plain dicts rather than Counters: Counter's Python-level methods cost more than they save.
        self._counts: dict[str, int] = {}
        self._call_ids: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def count(self, key: str) -> int:
        """How many entries in the window hold ``key``."""
        return self._counts.get(key, 0)

    def holds_call(self, call_id: str) -> bool:
        """Whether some entry in the window was committed under ``call_id``."""
        return self._call_ids.get(call_id, 0) > 0

    def append(self, entry: Entry) -> Entry | None:
        """Commit ``entry`` as the newest; return the entry it pushed out, if the window was full."""
        self._entries.append(entry)
        counts = self._counts
        for key in entry.keys:
            counts[key] = counts.get(key, 0) + 1
        self._call_ids[entry.call_id] = self._call_ids.get(entry.call_id, 0) + 1
        if len(self._entries) <= self.size:
            return None
        evicted = self._entries.popleft()
        _decrement(self._counts, evicted.keys)
        _decrement(self._call_ids, (evicted.call_id,))
        return evicted

    def newest_first(self) -> Iterator[Entry]:
        """The entries from the most recent to the oldest (for finding a result to quote)."""
        return reversed(self._entries)

    def clear(self) -> None:
        """Forget every entry (a human turn starts a fresh budget)."""
        self._entries.clear()
        self._counts.clear()
        self._call_ids.clear()


def _decrement(counter: dict[str, int], keys: Iterable[str]) -> None:
    """Lower each key by one, dropping keys that reach zero so the counter stays window-sized."""
    for key in keys:
        remaining = counter[key] - 1
        if remaining:
            counter[key] = remaining
        else:
            del counter[key]
