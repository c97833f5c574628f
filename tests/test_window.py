"""The sliding window: counts kept in step with entries, eviction, bounded memory."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from breaker.core.history.window import Window, digest, split


def test_counts_each_key_once_per_entry() -> None:
    window = Window(4)
    window.append("a", ["exact:x", "net:h/"])
    window.append("b", ["net:h/"])
    assert window.count("net:h/") == 2
    assert window.count("exact:x") == 1
    assert window.count("cmd:never") == 0
    assert len(window) == 2


def test_the_oldest_entry_is_evicted_and_returned_when_full() -> None:
    window = Window(2)
    assert window.append("a", ["k"]) is None
    assert window.append("b", ["k"]) is None
    evicted = window.append("c", ["other"])
    assert evicted is not None
    assert evicted[0] == "a" and split(evicted[1]) == {digest("k")}
    assert window.count("k") == 1
    assert len(window) == 2
    assert not window.holds_call("a")
    assert window.holds_call("b") and window.holds_call("c")


def test_a_call_id_seen_twice_is_held_until_both_entries_leave() -> None:
    window = Window(2)
    window.append("same", ["k1"])
    window.append("same", ["k2"])
    window.append("other", [])
    assert window.holds_call("same")
    window.append("other", [])
    assert not window.holds_call("same")


def test_newest_first_walks_from_the_latest_entry() -> None:
    window = Window(3)
    for call_id in "abcd":
        window.append(call_id, [call_id])
    assert list(window.newest_first(["b", "d"])) == [("d", True), ("c", False), ("b", True)]


def test_clear_forgets_entries_counts_and_ids() -> None:
    window = Window(3)
    window.append("a", ["k"])
    window.clear()
    assert len(window) == 0
    assert window.count("k") == 0
    assert not window.holds_call("a")


def test_a_window_holds_at_least_one_entry() -> None:
    with pytest.raises(ValueError, match="at least one"):
        Window(0)


@given(
    size=st.integers(min_value=1, max_value=6),
    entries=st.lists(st.frozensets(st.sampled_from(["a", "b", "c", "d"])), max_size=40),
)
def test_counts_always_equal_a_rescan_of_the_last_size_entries(
    size: int, entries: list[frozenset[str]]
) -> None:
    window = Window(size)
    for index, keys in enumerate(entries):
        window.append(str(index), keys)
        kept = entries[max(0, index + 1 - size) : index + 1]
        for key in "abcde":
            assert window.count(key) == sum(key in keys for keys in kept)
        assert len(window) == len(kept)
        # Keys that left the window are not remembered: memory stays bounded.
        assert len(window.digests) == 8 * sum(len(keys) for keys in kept)
