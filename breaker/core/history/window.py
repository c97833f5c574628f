"""One agent's sliding window: its last ``size`` committed entries and how often each key occurs.

An entry is the set of fingerprint keys one call committed, plus its call id. The window keeps
8-byte BLAKE2b digests of the keys, not the keys: ten thousand agents with full windows would
otherwise hold their key strings and one set per entry (~21 KB per agent). The digests of all
entries sit in one flat ``bytearray``, oldest first, and a count is one C-level ``count`` over
it (a window holds a few hundred bytes), so no per-key dictionary is needed either.

The digest is stable (no per-process seed), so a replay gives the same verdicts run to run. Two
distinct keys share a digest with odds of 2**-64, and ``bytearray.count`` could match a needle
straddling two adjacent digests with the same odds per position; either would only make one
count one too high, deterministically.
"""

from __future__ import annotations

import functools
import hashlib
from array import array
from collections.abc import Iterable, Iterator

_DIGEST_SIZE = 8


@functools.lru_cache(maxsize=1024)
def digest(key: str) -> bytes:
    """The key's 8-byte digest. Cached: a call's keys are counted, then committed, and loops
    repeat the same keys (a cache hit costs a tenth of hashing)."""
    return hashlib.blake2b(key.encode(), digest_size=_DIGEST_SIZE).digest()


def split(digests: bytes | bytearray) -> set[bytes]:
    """The separate digests of one entry's block (as ``Window.append`` returns it)."""
    return {bytes(digests[at : at + _DIGEST_SIZE]) for at in range(0, len(digests), _DIGEST_SIZE)}


class Window:
    """The last ``size`` entries of one agent, oldest first, counted by key digest."""

    __slots__ = ("_call_ids", "_lengths", "digests", "size")

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"a window holds at least one entry, got size {size}")
        self.size = size
        # Every entry's key digests, oldest entry first: read by ``Repeats.hits`` (its counts, in C),
        # changed only here.
        self.digests = bytearray()
        self._lengths = array("I")  # per entry, the bytes its digests take
        self._call_ids: list[str] = []  # per entry, the call id it was committed under

    def __len__(self) -> int:
        return len(self._call_ids)

    def count(self, key: str) -> int:
        """How many entries in the window hold ``key``."""
        return self.digests.count(digest(key)) if self.digests else 0

    def holds_call(self, call_id: str) -> bool:
        """Whether some entry in the window was committed under ``call_id``."""
        return call_id in self._call_ids

    def append(self, call_id: str, keys: Iterable[str]) -> tuple[str, bytes] | None:
        """Commit the entry ``keys`` as the newest; when the window was full, return the call id and
        the key digests (see ``split``) of the entry it pushed out."""
        digests = b"".join(dict.fromkeys(map(digest, keys)))  # a key counts once per entry
        self.digests += digests
        self._lengths.append(len(digests))
        self._call_ids.append(call_id)
        if len(self._call_ids) <= self.size:
            return None
        evicted_id = self._call_ids.pop(0)
        width = self._lengths.pop(0)
        evicted = bytes(self.digests[:width])
        del self.digests[:width]
        return evicted_id, evicted

    def newest_first(self, keys: Iterable[str]) -> Iterator[tuple[str, bool]]:
        """From the most recent entry to the oldest: its call id, and whether it holds one of
        ``keys`` (for finding a result to quote)."""
        wanted = {digest(key) for key in keys}
        end = len(self.digests)
        for call_id, width in zip(reversed(self._call_ids), reversed(self._lengths), strict=True):
            start = end - width
            yield call_id, not wanted.isdisjoint(split(self.digests[start:end]))
            end = start

    def clear(self) -> None:
        """Forget every entry (a human turn starts a fresh budget)."""
        self.digests.clear()
        del self._lengths[:]
        self._call_ids.clear()
