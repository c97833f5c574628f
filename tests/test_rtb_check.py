"""`rtb check` validates a profile's config without booting dsh; `rtb replay` with no path reads
dsh's own sessions folder, wherever it is run from."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from breaker.rtb.cli import main

FIXTURES = Path(__file__).parent / "fixtures"
ROW = "repeat-tool-breaker"
PATCH_HEAD = "- id: hmr\n  disabled: false\n  config: { root: [] }\n"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _profile(tmp_path: Path, rows: str = "") -> Path:
    profile = tmp_path / "profiles" / "work"
    profile.mkdir(parents=True)
    (profile / "cordis.patch.yml").write_text(PATCH_HEAD + rows)
    return profile


def test_a_profile_with_a_bad_value_fails_naming_key_value_and_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = _profile(tmp_path, "- id: repeat-tool-breaker\n  config:\n    window: 2\n")
    status, out, _ = _run(capsys, "check", str(profile))
    assert status == 1
    assert out.count("\n") == 1, "one line"
    assert "repeat-tool-breaker: window must be a whole number >= 4, got 2. Fix: correct it" in out
    assert "cordis.patch.yml" in out


def test_a_valid_profile_and_a_profile_without_a_row_are_ok(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    valid = _profile(tmp_path, "- id: repeat-tool-breaker\n  config:\n    identity: state-aware\n")
    status, out, _ = _run(capsys, "check", str(valid))
    assert (status, out.startswith("OK:"), "keys set: identity" in out) == (0, True, True)
    bare = tmp_path / "bare" / "profiles" / "work"
    bare.mkdir(parents=True)
    (bare / "cordis.patch.yml").write_text("[]\n")
    status, out, _ = _run(capsys, "check", str(bare))
    assert status == 0 and "the defaults apply" in out


def test_the_last_layer_with_a_config_wins_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A --patch after the profile replaces the row's whole config, as in dsh."""
    profile = _profile(tmp_path, "- id: repeat-tool-breaker\n  config:\n    window: 2\n")
    overlay = tmp_path / "overlay.yml"
    overlay.write_text(
        "- insert:\n    - id: repeat-tool-breaker\n      config:\n        limits: { net: 8 }\n"
    )
    status, out, _ = _run(capsys, "check", str(profile), str(overlay))
    assert status == 0 and str(overlay) in out
    fixed_last = tmp_path / "last.yml"
    fixed_last.write_text("- id: repeat-tool-breaker\n  config:\n    limits: { exact: 1 }\n")
    status, out, _ = _run(capsys, "check", str(overlay), str(fixed_last))
    assert status == 1 and "limits.exact" in out and "got 1" in out


def test_a_row_without_config_keeps_the_one_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = _profile(
        tmp_path,
        "- id: repeat-tool-breaker\n  config:\n    windw: 12\n- id: repeat-tool-breaker\n  disabled: false\n",
    )
    status, out, _ = _run(capsys, "check", str(profile))
    assert status == 1 and "did you mean 'window'" in out


def test_a_disabled_row_says_dsh_does_not_load_the_plugin_until_a_later_layer_enables_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = _profile(tmp_path, "- id: repeat-tool-breaker\n  disabled: true\n")
    status, out, _ = _run(capsys, "check", str(profile))
    assert status == 0 and "row is disabled" in out and "defaults apply" not in out
    enabled = tmp_path / "enable.yml"
    enabled.write_text("- id: repeat-tool-breaker\n  disabled: false\n  config:\n    window: 2\n")
    status, out, _ = _run(capsys, "check", str(profile), str(enabled))
    assert status == 1 and "window must be a whole number" in out


@pytest.mark.parametrize(("written", "read"), [("'false'", "true"), ("'no'", "true"), ("''", "false")])
def test_a_quoted_disabled_value_is_named_with_how_dsh_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], written: str, read: str
) -> None:
    """dsh reads `disabled:` by JavaScript truthiness: `disabled: 'false'` switches the plugin off,
    and rtb check said "the defaults apply"."""
    profile = _profile(tmp_path, f"- id: repeat-tool-breaker\n  disabled: {written}\n")
    status, out, _ = _run(capsys, "check", str(profile))
    assert status == 1 and out.count("\n") == 1
    said = f"repeat-tool-breaker: the row's disabled: {written} is a string, which dsh reads as {read}"
    assert said in out
    assert out.rstrip().endswith("Fix: write disabled: true or disabled: false, without quotes")


def test_a_disabled_number_is_read_as_dsh_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = _run(
        capsys, "check", str(_profile(tmp_path / "1", "- id: repeat-tool-breaker\n  disabled: 1\n"))
    )
    assert status == 0 and "row is disabled (disabled: 1)" in out
    status, out, _ = _run(
        capsys, "check", str(_profile(tmp_path / "0", "- id: repeat-tool-breaker\n  disabled: 0\n"))
    )
    assert status == 0 and "the defaults apply" in out


def test_the_bundle_a_profile_lists_is_no_layer_named_in_the_ok_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = _profile(tmp_path)
    (profile / "package.json").write_text('{"dsh": {"profile": {"bundles": ["dsh-repeat-tool-breaker"]}}}')
    status, out, _ = _run(capsys, "check", str(profile))
    assert (status, out) == (
        0,
        f"OK: {profile / 'cordis.patch.yml'}: no config for repeat-tool-breaker, so the defaults apply\n",
    )


def test_a_bare_config_file_and_an_unreadable_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bare = tmp_path / "config.json"
    bare.write_text('{"localHosts": "sometimes"}')
    status, out, _ = _run(capsys, "check", str(bare))
    assert status == 1 and "localHosts must be one of" in out
    status, out, _ = _run(capsys, "check", str(tmp_path / "missing.yml"))
    assert status == 2 and "missing.yml" in out


def test_check_reads_the_folder_it_is_run_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    profile = _profile(tmp_path, "- id: repeat-tool-breaker\n  config:\n    previewChars: 0\n")
    monkeypatch.chdir(profile)
    status, out, _ = _run(capsys, "check")
    assert status == 1 and "previewChars" in out


def test_replay_without_a_path_reads_dsh_sessions_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "dsh-home"
    session = home / "sessions" / "work-slug" / "session-1"
    session.mkdir(parents=True)
    shutil.copyfile(
        Path(__file__).parent.parent / "examples" / "sessions" / "loop-a-identical.jsonl.zstd",
        session / "session.jsonl.zstd",
    )
    monkeypatch.setenv("DSH_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    status, out, _ = _run(capsys, "replay")
    assert status == 0 and "2 denied, first at #5" in out
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "nowhere"))
    status, _, err = _run(capsys, "replay")
    assert status == 2 and "no dsh sessions folder" in err


def test_a_misspelt_row_id_is_a_configuration_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """dsh gives the config of `- id: repeat-tool-braker` to nothing; rtb check says so and the fix."""
    profile = _profile(tmp_path, "- id: repeat-tool-braker\n  config:\n    limits: { exact: 3 }\n")
    status, out, _ = _run(capsys, "check", str(profile))
    assert status == 1 and out.count("\n") == 1
    assert "the row 'repeat-tool-braker' is not this plugin's row 'repeat-tool-breaker'" in out
    assert "Fix: write its id as repeat-tool-breaker" in out and "cordis.patch.yml" in out


def test_this_plugins_keys_under_another_row_are_a_configuration_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = _profile(tmp_path, "- id: repeat-tool-reminder\n  config:\n    failLimit: 4\n    window: 20\n")
    status, out, _ = _run(capsys, "check", str(profile))
    assert (
        status == 1
        and "'repeat-tool-reminder' carries keys of this plugin's config (failLimit, window)" in out
    )
    # the reminder's own keys (include and exclude are ours too) are its business
    other = tmp_path / "other"
    other.mkdir()
    (other / "cordis.patch.yml").write_text(
        "- id: repeat-tool-reminder\n  config:\n    thresholds: [3, 5]\n    exclude: [read]\n"
    )
    status, out, _ = _run(capsys, "check", str(other))
    assert status == 0 and out.startswith("OK:")


def test_a_row_that_mounts_this_plugin_under_another_id_is_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    overlay = tmp_path / "overlay.yml"
    overlay.write_text(
        "- insert:\n    - id: rtb\n      name: dsh-repeat-tool-breaker\n      config:\n        window: 20\n"
    )
    status, out, _ = _run(capsys, "check", str(overlay))
    assert status == 0 and out.startswith("OK:")


def test_a_profile_inserting_the_plugin_beside_its_bundle_runs_it_twice_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A profile that lists the bundle (which inserts the row) and inserts another row of the
    plugin gets two of it: the bundle's on the defaults stops calls whatever the other says."""
    inserted = "- insert:\n    - id: repeat-tool-breaker\n      name: dsh-repeat-tool-breaker\n"
    profile = _profile(tmp_path, inserted + "      config: { limits: { exact: 9 } }\n")
    status, out, _ = _run(capsys, "check", str(profile))
    assert status == 0 and out.startswith("OK:")  # no bundle listed: the overlay route, one plugin
    (profile / "package.json").write_text(
        '{"dsh": {"profile": {"bundles": ["@deepseek-ai/dsh-base", "dsh-repeat-tool-breaker"]}}}'
    )
    status, out, _ = _run(capsys, "check", str(profile))
    assert status == 1 and out.startswith(
        f"{profile / 'cordis.patch.yml'}: repeat-tool-breaker: 2 rows insert"
    )
    assert "so dsh runs it 2 times" in out and "Fix: keep one" in out
    (profile / "cordis.patch.yml").write_text(
        PATCH_HEAD + "- id: repeat-tool-breaker\n  config: { window: 8 }\n"
    )
    status, out, _ = _run(capsys, "check", str(profile))
    assert status == 0 and out.startswith("OK:")


@pytest.mark.parametrize(
    ("python", "why"),
    [
        ("/nonexistent/bin/python3", "no such file"),
        ("/", "not an executable file"),
        ("no-such-python-rtb-check", "not found on PATH"),
    ],
)
def test_a_python_key_no_boot_could_run_fails_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], python: str, why: str
) -> None:
    """The boot stops on an interpreter it cannot run; rtb check said OK."""
    profile = _profile(tmp_path, f"- id: repeat-tool-breaker\n  config:\n    python: {python}\n")
    status, out, _ = _run(capsys, "check", str(profile))
    assert status == 1 and out.count("\n") == 1
    said = f"cannot run the Python interpreter {python!r} from the `python` config key: {why}"
    assert f"repeat-tool-breaker: {said}" in out
    assert out.rstrip().endswith(
        "Fix: point the `python` config key at an installed Python, or unset it to let the plugin "
        "prepare its own environment"
    )


def test_a_python_key_naming_an_interpreter_that_is_there_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for python in (sys.executable, "python3", "./venv/bin/python"):  # a relative path: from where dsh runs
        profile = _profile(
            tmp_path / python.replace("/", "_"),
            f"- id: repeat-tool-breaker\n  config:\n    python: {python}\n",
        )
        status, out, _ = _run(capsys, "check", str(profile))
        assert (status, out.startswith("OK:")) == (0, True), out


def test_a_suggestion_ending_in_a_question_mark_takes_no_stray_period(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = _profile(tmp_path, "- id: repeat-tool-breaker\n  config:\n    identity: exactt\n")
    status, out, _ = _run(capsys, "check", str(profile))
    assert status == 1 and "did you mean 'exact'? Fix: correct it" in out


def test_a_config_key_beside_the_rows_config_is_a_configuration_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = _run(
        capsys, "check", str(_profile(tmp_path, "- id: repeat-tool-breaker\n  window: 8\n"))
    )
    named = "the row 'repeat-tool-breaker' holds window beside its config:"
    assert (status, named in out, out.rstrip().endswith("Fix: indent it under config: in that row")) == (
        1,
        True,
        True,
    )


def test_the_dsh_homes_patch_is_read_after_the_profiles_as_dsh_applies_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """dsh applies ``<home>/cordis.patch.yml`` over every profile of that home: a bad value there
    stops the boot, so checking the profile folder must find it (it read OK, "defaults apply")."""
    profile = _profile(tmp_path)
    home_patch = tmp_path / "cordis.patch.yml"
    home_patch.write_text("- id: repeat-tool-breaker\n  config:\n    window: 2\n")
    status, out, _ = _run(capsys, "check", str(profile))
    assert status == 1
    assert out.startswith(f"{home_patch}: repeat-tool-breaker: window must be a whole number >= 4, got 2.")
    assert "the dsh home's" in out
    row = "- id: repeat-tool-breaker\n  config:\n    window: {}\n"
    home_patch.write_text(row.format(8))
    (profile / "cordis.patch.yml").write_text(PATCH_HEAD + row.format(2))
    status, out, _ = _run(capsys, "check", str(profile))
    assert (status, out) == (0, f"OK: {home_patch}: the {ROW} config is valid (keys set: window)\n")


def test_a_folder_that_is_no_profile_is_named_with_where_profiles_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`rtb check` run where there is no profile (npx --prefix from another folder) said "OK: .:
    no config …, so the defaults apply", as if it had checked one."""
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    status, out, _ = _run(capsys, "check")
    assert status == 2
    assert out == (
        "rtb check: .: not a dsh profile folder (no cordis.patch.yml, no package.json). Fix: run it "
        "in a profile's folder ($DSH_HOME/profiles/NAME, else ~/.dsh/profiles/NAME), or give "
        "--profile NAME or the folder's path\n"
    )


def test_a_profile_name_that_names_none_lists_the_profiles_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    _profile(tmp_path)
    (tmp_path / "profiles" / "node_modules").mkdir()
    status, out, _ = _run(capsys, "check", "--profile", "wrok")
    assert status == 2
    wrong = tmp_path / "profiles" / "wrok"
    assert out == f"rtb check: no dsh profile 'wrok' at {wrong} (profiles there: work)\n"
    status, _, err = _run(capsys, "replay", "--profile", "wrok", str(tmp_path))
    assert status == 2 and "(profiles there: work)" in err


def test_a_profile_that_does_not_mount_the_plugin_fails_saying_dsh_does_not_load_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A profile whose package.json lists other bundles only: dsh never loads the plugin there, so
    its config is read by no one (it said "the defaults apply")."""
    profile = _profile(tmp_path, "- id: repeat-tool-breaker\n  config:\n    window: 8\n")
    manifest = profile / "package.json"
    manifest.write_text('{"dsh": {"profile": {"bundles": ["@deepseek-ai/dsh-base"]}}}')
    status, out, _ = _run(capsys, "check", str(profile))
    assert status == 1
    assert out == (
        f"{manifest}: lists no dsh-repeat-tool-breaker among its dsh.profile.bundles, and no row "
        "inserts repeat-tool-breaker, so dsh does not load the plugin in this profile and reads no "
        "config for it. Fix: dsh plugin --profile work add <this plugin's checkout, tarball or git URL>\n"
    )
    monkeypatch.chdir(profile)
    assert _run(capsys, "check")[1].endswith(
        "Fix: dsh plugin --profile work add <this plugin's checkout, tarball or git URL>\n"
    )
    overlay = tmp_path / "overlay.yml"
    overlay.write_text("- insert:\n    - id: repeat-tool-breaker\n      name: /p/node-shim/index.js\n")
    status, out, _ = _run(capsys, "check", str(profile), str(overlay))
    valid = f"OK: {profile / 'cordis.patch.yml'}: the {ROW} config is valid (keys set: window)\n"
    assert (status, out) == (0, valid)


def test_a_file_holding_the_rows_config_key_is_read_as_that_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file written as the row's `config:` (config: then its keys) was refused as "unknown config
    key 'config'": a config file holds the config: mapping, and this is one, under its key."""
    path = tmp_path / "config.yml"
    path.write_text("config:\n  window: 2\n")
    status, out, _ = _run(capsys, "check", str(path))
    assert status == 1 and "window must be a whole number >= 4, got 2" in out
    path.write_text("config:\n  window: 8\n")
    assert _run(capsys, "check", str(path))[:2] == (
        0,
        f"OK: {path}: the {ROW} config is valid (keys set: window)\n",
    )
    status, out, _ = _run(capsys, "explain", "--config", str(path), "ls")
    assert status == 0 and out.startswith(f"config: {path} (--config)")


@pytest.mark.parametrize(
    ("patch", "got"), [("window: 8\n", "a mapping"), ("", "nothing"), ("- id: hmr\n- 5\n", "entry 2 is 5")]
)
def test_a_profiles_patch_dsh_refuses_is_named_as_dsh_refuses_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, patch: str, got: str
) -> None:
    """dsh refuses a cordis.patch.yml that is not a list of rows ("must be a top-level YAML array
    of loader patch entries"); rtb check read a mapping there as the config and said OK."""
    profile = _profile(tmp_path)
    (profile / "cordis.patch.yml").write_text(patch)
    status, out, _ = _run(capsys, "check", str(profile))
    assert status == 2
    assert out == (
        f"rtb check: {profile / 'cordis.patch.yml'}: dsh refuses it and does not boot: a cordis.patch.yml "
        f"is a list of rows (- id: …), each a mapping; got {got}. Fix: write the plugin's keys under "
        "its row: - id: repeat-tool-breaker, then config: and the keys under it\n"
    )
    monkeypatch.chdir(profile)
    status, _, err = _run(capsys, "replay", str(FIXTURES / "sessions"))
    assert status == 2 and "dsh refuses it and does not boot" in err


def test_a_patch_file_after_a_profile_is_read_as_dsh_reads_a_patch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """After a profile a file is a --patch overlay, which dsh refuses unless it is a list of rows;
    alone it may be a bare config."""
    profile = _profile(tmp_path)
    overlay = tmp_path / "overlay.yml"
    overlay.write_text("window: 8\n")
    status, out, _ = _run(capsys, "check", str(profile), str(overlay))
    assert status == 2 and out.startswith(f"rtb check: {overlay}: dsh refuses it and does not boot")
    assert _run(capsys, "check", str(overlay))[:2] == (
        0,
        f"OK: {overlay}: the {ROW} config is valid (keys set: window)\n",
    )
