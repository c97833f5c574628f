"""How an agent's calls were spelled: what reading a call strips, one record per window entry.

Reading a call (``reading.fingerprints``) strips what does not change the action: its notes (the
``ignoreArgs`` arguments, such as a description), volatile flags (``--max-time``) and the spelling of
a host. A denial says that changing those does not make a new action; that is worth saying only
when the repeat did change one of them. So each committed entry keeps its call's spelling, three
8-byte digests:

* the call as written, notes aside (its ``exact:`` key, and for a call whose paths or URLs were
  spelled otherwise than they resolve, the arguments as written too);
* the action it names once flags and host spellings are folded (its ``cmd:`` and ``net:`` keys,
  else its ``exact:`` key, paths and URLs as they resolve);
* its notes (each text by ``canonical.condensed``, so a journal's stand-in spells the same).

The keys are the ones the call counts by (under ``identity: state-aware``, keyed by the workspace),
as its entry holds them: a repeat and the earlier call share the key that stopped it.

A repeat is respelled when its notes differ from the earlier call's, or when it is written
otherwise but names the same action. Digests, not texts: ten thousand agents with full windows
hold 24 bytes an entry.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from breaker.core.config import BreakerConfig
from breaker.core.history.window import Window, digest
from breaker.core.reading import Fingerprint, ToolCall, canonical_json, condensed

#: The bytes one entry's spelling takes: the three digests.
SPELLING_SIZE = 24
#: The fingerprint kinds that name the action once flags and host spellings are folded.
_NO_NOTES = bytes(8)


def spelling(call: ToolCall, fingerprints: Iterable[Fingerprint], config: BreakerConfig) -> bytes:
    """The spelling of ``call`` (``fingerprints``: those that count, as its window entry holds them).

    The keys' digests are the window's own (cached: the call was just counted by them); only the
    notes, and the arguments of a call whose paths or URLs were respelled, are digested anew."""
    exact = written = bytes(8)
    named = 0
    for fp in fingerprints:
        kind = fp.kind
        if kind == "exact":
            exact = written = digest(fp.key)
            if call.written is not None:  # its paths or URLs as written, not as they resolve
                written = digest(f"{fp.key}\0{canonical_json(call.written)}")
        elif kind == "cmd" or kind == "net":
            named ^= int.from_bytes(digest(fp.key), "little")
    return written + (named.to_bytes(8, "little") if named else exact) + _notes(call, config)


def _notes(call: ToolCall, config: BreakerConfig) -> bytes:
    """The digest of the call's notes (its ``ignoreArgs`` arguments, in any order); zeros for none."""
    arguments = call.arguments
    if type(arguments) is not dict:
        return _NO_NOTES
    shared = config.ignoreArgs.get("*", ())
    own = config.ignoreArgs.get(call.name, ())
    notes = [
        (key, condensed(value) if type(value) is str else canonical_json(value))
        for key, value in arguments.items()
        if key in shared or key in own
    ]
    if not notes:
        return _NO_NOTES
    notes.sort()
    return hashlib.blake2b(repr(notes).encode("utf-8", "surrogatepass"), digest_size=8).digest()


def respelled(this: bytes, earlier: bytes) -> bool:
    """Whether a call spelled ``this`` changed what reading strips from one spelled ``earlier``:
    its notes, or how it is written while naming the same action."""
    if this[16:] != earlier[16:]:
        return True
    return this[:8] != earlier[:8] and this[8:16] == earlier[8:16]


class Spellings:
    """The spelling of each entry in one agent's window, oldest first (kept in step with it)."""

    __slots__ = ("_spellings",)

    def __init__(self) -> None:
        self._spellings = bytearray()

    def __len__(self) -> int:
        return len(self._spellings) // SPELLING_SIZE

    def append(self, spelled: bytes) -> None:
        """The entry just committed was spelled ``spelled``."""
        self._spellings += spelled

    def drop_oldest(self) -> None:
        """The oldest entry left the window."""
        del self._spellings[:SPELLING_SIZE]

    def clear(self) -> None:
        self._spellings.clear()

    def respelled(self, window: Window, keys: Iterable[str], spelled: bytes) -> bool:
        """Whether a call spelled ``spelled`` that repeats one of ``keys`` was respelled from the
        latest entry holding one of them (False when there is none)."""
        end = len(self._spellings)
        for _, shares_a_key in window.newest_first(keys):
            start = end - SPELLING_SIZE
            if start < 0:
                return False
            if shares_a_key:
                return respelled(spelled, bytes(self._spellings[start:end]))
            end = start
        return False
