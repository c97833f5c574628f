"""Rows meant for this plugin that dsh would not give it (breaker/strayrows.py): a row id one
or two edits from `repeat-tool-breaker`, or this plugin's keys under another row."""

from __future__ import annotations

import pytest

from breaker.strayrows import (
    ROW_ID,
    PatchRow,
    edits,
    is_misspelt_id,
    looks_like_own_config,
    patch_rows,
    stray_rows,
)


@pytest.mark.parametrize(
    ("a", "b", "count"),
    [("", "", 0), ("abc", "abc", 0), ("abc", "abd", 1), ("abc", "ab", 1), ("ab", "ba", 2), ("", "xyz", 3)],
)
def test_edits_counts_insertions_deletions_and_substitutions(a: str, b: str, count: int) -> None:
    assert edits(a, b) == count == edits(b, a)


@pytest.mark.parametrize(
    "row_id",
    [
        "repeat-tool-braker",
        "repeat-tool-breakr",
        "repeat_tool_breaker",
        "repeat-tool-breaker-",
        "Repeat-Tool-Breaker",
    ],
)
def test_an_id_one_or_two_edits_away_is_a_misspelling(row_id: str) -> None:
    assert is_misspelt_id(row_id)
    (stray,) = stray_rows([PatchRow(row_id)])
    assert stray.id == row_id and stray.line.endswith(f"Fix: write its id as {ROW_ID}")


@pytest.mark.parametrize("row_id", [ROW_ID, "repeat-tool-reminder", "hmr", "tools", "repeat-breaker"])
def test_its_own_id_and_other_rows_are_not(row_id: str) -> None:
    assert not is_misspelt_id(row_id)
    assert stray_rows([PatchRow(row_id)]) == []


def test_a_config_of_this_plugins_keys_only_looks_like_its_own() -> None:
    assert looks_like_own_config(["limits", "window"]) == ["limits", "window"]
    assert looks_like_own_config(["denyAfter"]) == ["denyAfter"]  # the unrelated plugin of the same name
    assert looks_like_own_config(["window", "exclude"]) == []  # keys other plugins use too
    assert looks_like_own_config(["thresholds", "exclude", "limits"]) == []  # another plugin's key
    assert looks_like_own_config([]) == []


def test_the_row_with_its_own_id_is_never_a_stray_whatever_it_holds() -> None:
    assert (
        stray_rows([PatchRow(ROW_ID, ("limits",)), PatchRow("hmr", ("root",)), PatchRow("tools", ("mode",))])
        == []
    )
    (stray,) = stray_rows(
        [PatchRow("repeat-tool-reminder", ("thresholds",)), PatchRow("agent", ("limits", "failLimit"))]
    )
    assert stray.id == "agent" and "(limits, failLimit)" in stray.what


@pytest.mark.parametrize(
    "name",
    [
        "dsh-repeat-tool-breaker",
        "/home/me/dsh-repeat-tool-breaker/node-shim/index.js",
        "/opt/x/node-shim/index.js",
    ],
)
def test_a_row_that_mounts_this_plugin_under_another_id_is_not_a_stray(name: str) -> None:
    """Such a row gives the plugin its config whatever its id (a second mount of it)."""
    assert stray_rows([PatchRow("rtb", ("limits",), name), PatchRow("repeat-tool-braker", (), name)]) == []
    assert len(stray_rows([PatchRow("rtb", ("limits",), "some-other-plugin")])) == 1


def test_config_keys_beside_the_own_rows_config_are_named_cordis_keys_are_not() -> None:
    """``window: 8`` written beside ``config:`` instead of under it is passed to no one."""
    (stray,) = stray_rows([PatchRow(ROW_ID, ("identity",), None, ("disabled", "window"))])
    assert stray.line == (
        "the row 'repeat-tool-breaker' holds window beside its config:, where dsh passes it to no one, "
        "so the defaults apply. Fix: indent it under config: in that row"
    )
    assert stray_rows([PatchRow(ROW_ID, (), None, ("disabled", "group", "inject", "isolate", "note"))]) == []
    mounted = PatchRow("rtb", (), "/abs/dsh-repeat-tool-breaker/node-shim/index.js", ("limits", "onLimit"))
    (stray,) = stray_rows([mounted])
    assert "holds limits, onLimit beside its config:" in stray.line and "indent them" in stray.line


def test_the_rows_the_shim_sends_carry_their_own_keys() -> None:
    sent = [{"id": ROW_ID, "keys": [], "beside": ["id", "name", "window"], "name": "dsh-repeat-tool-breaker"}]
    assert patch_rows(sent) == [PatchRow(ROW_ID, (), "dsh-repeat-tool-breaker", ("window",))]
    assert patch_rows([{"id": ROW_ID, "keys": [], "beside": "window"}]) == [PatchRow(ROW_ID)]


def test_a_second_row_inserting_this_plugin_is_named_as_running_it_twice() -> None:
    """The bundle inserts the row; an overlay or a profile inserting another makes dsh run the
    plugin twice, and the one on the defaults stops calls whatever the other's config says."""
    bundle = PatchRow(ROW_ID, (), "dsh-repeat-tool-breaker", ("id", "name"), inserted=True)
    overlay = PatchRow(
        ROW_ID, ("window",), "/abs/dsh-repeat-tool-breaker/node-shim/index.js", (), inserted=True
    )
    (stray,) = stray_rows([bundle, overlay])
    assert stray.line == (
        "2 rows insert this plugin ('repeat-tool-breaker' (dsh-repeat-tool-breaker), "
        "'repeat-tool-breaker' (/abs/dsh-repeat-tool-breaker/node-shim/index.js)), so dsh runs it 2 "
        "times, each on its own row's config:, and any of them stops a call. Fix: keep one: give the "
        "bundle's row its config with a flat `- id: repeat-tool-breaker` row holding config: (no "
        "insert:), or drop the other insert"
    )
    # one insert, reconfigured by id (a name beside it too): one plugin
    reconfigured = PatchRow(ROW_ID, ("window",), "dsh-repeat-tool-breaker", ())
    assert stray_rows([bundle, reconfigured]) == [] == stray_rows([overlay])
    assert stray_rows([bundle, PatchRow("other", (), "some-plugin", (), inserted=True)]) == []


def test_the_shim_marks_the_rows_of_an_insert_list() -> None:
    sent = [
        {"id": ROW_ID, "keys": [], "beside": [], "name": "dsh-repeat-tool-breaker", "inserted": True},
        {"id": ROW_ID, "keys": [], "beside": [], "inserted": "yes"},
    ]
    assert [row.inserted for row in patch_rows(sent)] == [True, False]
