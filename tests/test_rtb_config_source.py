"""Which configuration `rtb replay` and `rtb explain` use, and that every output says so: run in a
profile folder they read its cordis.patch.yml (as `rtb check` does); `--profile NAME` reads a
profile of `$DSH_HOME`; `--config` wins; elsewhere the defaults, named as such. And a replayed
denial quotes a tool's output as "the earlier attempt", never a denial the recording logged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from breaker.rtb.cli import main
from tests.rtb_logs import Log

PROFILE_PATCH = """\
- id: repeat-tool-breaker
  config:
    window: 16
    limits:
      exact: 4
      cmd: 4
"""
RECORDED_DENIAL = (
    "Error: REPEAT_TOOL_BLOCKED: this `read` call was not run: it repeats an action this agent "
    "already took within its last 16 tool calls."
)


def _recorded_under_the_profile(folder: Path) -> None:
    """Seven identical reads; the recording (window 16, caps 4) ran three and denied four."""
    log = Log("session-c0f19000-0000-4000-8000-000000000001", started_ms=1_796_000_000_000, cwd="/w")
    log.prompt("read the notes")
    for number in range(1, 8):
        if number <= 3:
            log.call("read", {"file_path": "/w/notes.md"}, f"NOTES-OUTPUT at 10:00:0{number}")
        else:
            log.call("read", {"file_path": "/w/notes.md"}, RECORDED_DENIAL, is_error=True)
    log.write(folder)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    status = main(list(argv))
    return status, capsys.readouterr().out


@pytest.fixture
def profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A profile folder with its patch, the folder rtb runs in; the logs beside it."""
    folder = tmp_path / "profiles" / "work"
    folder.mkdir(parents=True)
    (folder / "cordis.patch.yml").write_text(PROFILE_PATCH, encoding="utf-8")
    _recorded_under_the_profile(tmp_path / "logs")
    monkeypatch.chdir(folder)
    return folder


def test_replay_in_a_profile_folder_replays_under_its_config_in_every_format(
    capsys: pytest.CaptureFixture[str], profile: Path, tmp_path: Path
) -> None:
    logs = str(tmp_path / "logs")
    label = "./cordis.patch.yml (profile folder)"

    _, out = _run(capsys, "replay", "--format", "json", logs)
    document = json.loads(out)
    assert document["config"] == {"label": label, "source": "cordis.patch.yml", "origin": "profile folder"}
    [session] = document["sessions"]
    assert [call["verdict"] for call in session["verdicts"]] == ["allowed"] * 3 + ["denied"] * 4
    assert session["differs"] == 0
    assert "within its last 16 tool calls" in session["verdicts"][3]["message"]

    _, out = _run(capsys, "replay", logs)
    assert out.startswith(f"config: {label}\n")
    assert "replayed     4 denied, first at #4; differs from the recording on 0 calls" in out
    assert out.rstrip().endswith("4 stopped under ./cordis.patch.yml")
    _, out = _run(capsys, "replay", "--format", "markdown", logs)
    assert out.startswith(f"config: {label}\n")

    page = tmp_path / "page.html"
    assert main(["replay", "--html", str(page), logs]) == 0
    html = page.read_text(encoding="utf-8")
    assert f"stopped under {label}" in html
    assert "under defaults" not in html


def test_explain_in_a_profile_folder_uses_its_caps_and_says_so(
    capsys: pytest.CaptureFixture[str], profile: Path
) -> None:
    _, out = _run(capsys, "explain", "make test")
    assert out.startswith("config: ./cordis.patch.yml (profile folder)\n")
    assert [line.split()[1] for line in out.splitlines() if line.startswith("cmd ")] == ["4"]
    _, out = _run(capsys, "explain", "--format", "json", "make test")
    document = json.loads(out)
    assert document["config"]["origin"] == "profile folder"
    assert {fp["kind"]: fp["cap"] for fp in document["fingerprints"]}["cmd"] == 4


def test_config_wins_over_the_profile_folder_and_says_where_it_came_from(
    capsys: pytest.CaptureFixture[str], profile: Path, tmp_path: Path
) -> None:
    loose = tmp_path / "loose.json"
    loose.write_text(json.dumps({"limits": {"exact": 9, "cmd": 9}}), encoding="utf-8")
    _, out = _run(capsys, "replay", "--config", str(loose), "--format", "json", str(tmp_path / "logs"))
    document = json.loads(out)
    assert document["config"]["label"] == f"{loose} (--config)"
    assert document["sessions"][0]["stops"] == 0


@pytest.mark.parametrize(
    "argv",
    [["replay", "{logs}"], ["explain", "make test"], ["sweep", "{logs}"]],
    ids=["replay", "explain", "sweep"],
)
def test_an_invalid_config_file_is_named_with_its_fix(
    capsys: pytest.CaptureFixture[str], profile: Path, tmp_path: Path, argv: list[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"window": 3}), encoding="utf-8")
    logs = str(tmp_path / "logs")
    status = main([argv[0], "--config", str(bad), *(arg.format(logs=logs) for arg in argv[1:])])
    assert status == 2
    named = f"rtb: {bad}: repeat-tool-breaker: window must be a whole number >= 4, got 3. Fix: "
    assert capsys.readouterr().err.startswith(named)


def test_profile_names_a_profile_of_dsh_home(
    capsys: pytest.CaptureFixture[str], profile: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    _, out = _run(capsys, "replay", "--profile", "work", "--format", "json", str(tmp_path / "logs"))
    document = json.loads(out)
    assert document["config"]["origin"] == "profile"
    assert document["config"]["source"] == str(profile / "cordis.patch.yml")
    assert document["sessions"][0]["stops"] == 4
    assert main(["replay", "--profile", "nosuch", str(tmp_path / "logs")]) == 2
    assert "no dsh profile 'nosuch' at " + str(tmp_path / "profiles" / "nosuch") in capsys.readouterr().err
    assert main(["check", "--profile", "work"]) == 0
    assert (
        "profiles/work/cordis.patch.yml: the repeat-tool-breaker config is valid" in capsys.readouterr().out
    )


def test_outside_a_profile_the_defaults_are_named_as_defaults(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _recorded_under_the_profile(tmp_path / "logs")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    _, out = _run(capsys, "replay", str(tmp_path / "logs"))
    assert out.startswith("config: defaults (no configuration found)\n")
    assert out.rstrip().endswith("stopped under defaults")
    _, out = _run(capsys, "replay", "--format", "json", str(tmp_path / "logs"))
    assert json.loads(out)["config"] == {
        "label": "defaults (no configuration found)",
        "source": None,
        "origin": "defaults",
    }
    page = tmp_path / "page.html"
    main(["replay", "--html", str(page), str(tmp_path / "logs")])
    assert "stopped under defaults (no configuration found)" in page.read_text(encoding="utf-8")


def test_a_denial_quotes_the_tools_output_never_a_recorded_denial(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _recorded_under_the_profile(tmp_path / "logs")
    monkeypatch.chdir(tmp_path)
    _, out = _run(capsys, "replay", "--format", "json", str(tmp_path / "logs"))  # the defaults: cap 5
    [session] = json.loads(out)["sessions"]
    first = next(call for call in session["verdicts"] if call["verdict"] == "denied")
    assert first["call"] == 5  # #4 runs here though the recording denied it: its output is unknown
    quoted = first["message"].split("The earlier attempt returned", 1)[1]
    assert "NOTES-OUTPUT at 10:00:03" in quoted
    assert "REPEAT_TOOL_BLOCKED" not in quoted


def test_a_profile_folder_replays_under_its_dsh_homes_patch_when_that_sets_the_config(
    capsys: pytest.CaptureFixture[str], profile: Path, tmp_path: Path
) -> None:
    """dsh applies the home's ``cordis.patch.yml`` after the profile's: its config is the one the
    live plugin ran under, so the replay names and uses it."""
    home_patch = tmp_path / "cordis.patch.yml"
    home_patch.write_text("- id: repeat-tool-breaker\n  config:\n    limits: {exact: 9, cmd: 9}\n")
    _, out = _run(capsys, "replay", "--format", "json", str(tmp_path / "logs"))
    document = json.loads(out)
    assert document["config"]["source"] == str(home_patch)
    assert document["sessions"][0]["stops"] == 0
