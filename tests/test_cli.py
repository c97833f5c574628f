"""The rtb command line: explain, replay and sweep, as a user types them."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from breaker.rtb.cli import main
from breaker.rtb.config.configfile import config_mapping
from breaker.rtb.show.tables import Progress

FIXTURES = Path(__file__).parent / "fixtures"
SESSIONS = FIXTURES / "sessions"
#: The seed's counting (preset: seed), which rtb sweep's window and cap grid varies.
SEED = ("--config", str(FIXTURES / "seed-config.yml"))


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _fingerprint_lines(out: str) -> dict[str, tuple[str, str]]:
    """KIND CAP FINGERPRINT rows of an explain table, keyed by fingerprint."""
    rows = {}
    for line in out.splitlines():
        kind, _, rest = line.partition(" ")
        if kind in ("exact", "cmd", "net", "site", "sink", "family", "verb"):
            cap, fingerprint = rest.split(maxsplit=1)
            rows[fingerprint] = (kind, cap)
    return rows


def test_explain_loop_a_the_verbatim_repeat_is_one_exact_fingerprint(
    capsys: pytest.CaptureFixture[str],
) -> None:
    call = json.dumps({"name": "read", "arguments": {"file_path": "/work/notes.md"}})
    status, out, _ = _run(capsys, "explain", "--json", call)
    assert status == 0
    assert _fingerprint_lines(out) == {'exact:read:{"file_path":"/work/notes.md"}': ("exact", "5")}
    assert "local call: no" in out


def test_explain_loop_b_strips_the_decoy_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    call = {
        "name": "bash",
        "arguments": json.dumps({"command": "echo hi", "description": "2nd", "timeoutMs": 1000}),
    }
    status, out, _ = _run(capsys, "explain", "--json", json.dumps(call))
    assert status == 0
    rows = _fingerprint_lines(out)
    assert rows['exact:bash:{"command":"echo hi"}'] == ("exact", "5")
    assert rows["cmd:echo:echo hi"] == ("cmd", "5")
    assert "stripped as decoy: description, timeoutMs" in out
    assert "2nd" not in "".join(rows)


def test_explain_loop_c_folds_the_host_and_drops_the_volatile_flags(
    capsys: pytest.CaptureFixture[str],
) -> None:
    command = "curl -sS --max-time 30 https://open-data.canada.ca/x -o /tmp/od.html"
    status, out, _ = _run(capsys, "explain", command)
    assert status == 0
    rows = _fingerprint_lines(out)
    assert rows["net:open.canada.ca/x"] == ("net", "5")
    assert rows["sink:/tmp/od.html"] == ("sink", "5")
    assert rows["site:canada.ca"] == ("site", "uncapped")
    assert rows["cmd:curl:curl open.canada.ca/x -o /tmp/od.html"] == ("cmd", "5")
    assert "volatile removed: -sS, --max-time 30" in out
    assert "aliases folded: open-data.canada.ca -> open.canada.ca" in out


def test_explain_json_carries_the_same_facts(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, "explain", "--format", "json", "curl -s http://localhost:8080/health")
    assert status == 0
    document = json.loads(out)
    assert document["local"] is True
    net = next(fp for fp in document["fingerprints"] if fp["kind"] == "net")
    assert net == {"kind": "net", "key": "net:localhost:8080/health", "cap": 5, "local": True}


def test_explain_a_command_for_a_tool_that_takes_none_is_refused_naming_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`rtb explain --tool read a.py` showed exact:read:{"command":"a.py"}, a fingerprint no read
    call has (a read's argument is file_path): COMMAND is a shell tool's command."""
    status, out, err = _run(capsys, "explain", "--tool", "read", "a.py")
    assert (status, out) == (2, "")
    assert err == (
        "rtb: --tool read takes no COMMAND: COMMAND is the command of a shell tool (bash, pwsh, shell); "
        'give a read call whole: --json \'{"name": "read", "arguments": {...}}\'\n'
    )
    status, out, _ = _run(capsys, "explain", "--tool", "Shell", "ls ./src")
    assert status == 0 and _fingerprint_lines(out)["cmd:ls:ls src"] == ("cmd", "5")


@pytest.mark.parametrize(
    ("config", "said"),
    [
        ({"include": ["bsh", "read"]}, "tool: bash (not counted: not in include: bsh, read)"),
        ({"exclude": ["ba*"]}, "tool: bash (not counted: in exclude)"),
        ({"include": ["bash"], "exclude": ["b*"]}, "tool: bash (not counted: in exclude)"),
    ],
)
def test_explain_says_which_list_leaves_a_tool_uncounted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], config: dict[str, list[str]], said: str
) -> None:
    """A tool outside a mistyped include list was said to be "excluded by config"."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    _, out, _ = _run(capsys, "explain", "--config", str(path), "ls")
    assert said + "\n" in out


def test_explain_reads_a_yaml_cordis_patch_and_a_json_mapping(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    patch = tmp_path / "cordis.patch.yml"
    patch.write_text(
        "- id: hmr\n  disabled: false\n"
        "- insert:\n    - id: repeat-tool-breaker\n      name: dsh-repeat-tool-breaker\n"
        "      config:\n        limits: {net: 3, site: 30}\n"
    )
    _, out, _ = _run(capsys, "explain", "--config", str(patch), "curl https://example.org/a")
    assert _fingerprint_lines(out)["net:example.org/a"] == ("net", "3")
    assert _fingerprint_lines(out)["site:example.org"] == ("site", "30")
    mapping = tmp_path / "breaker.json"
    mapping.write_text(json.dumps({"limits": {"verb:curl": 7}}))
    _, out, _ = _run(capsys, "explain", "--config", str(mapping), "curl https://example.org/a")
    assert _fingerprint_lines(out)["verb:curl"] == ("verb", "7")


def test_a_bad_config_fails_loud_with_the_config_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("windw: 8\n")
    status, out, err = _run(capsys, "explain", "--config", str(bad), "ls")
    assert status == 2
    assert out == ""
    assert "unknown config key 'windw'; did you mean 'window'?" in err
    removed = tmp_path / "old.json"
    removed.write_text('{"denyAfter": 3}')
    status, _, err = _run(capsys, "replay", "--config", str(removed), str(SESSIONS))
    assert status == 2
    assert "denyAfter is a key of the unrelated npm plugin" in err


def test_the_config_row_is_found_in_every_patch_shape() -> None:
    row = {"id": "repeat-tool-breaker", "config": {"window": 8}}
    assert config_mapping([{"insert": [row]}]) == {"window": 8}
    assert config_mapping([row]) == {"window": 8}
    assert config_mapping(row) == {"window": 8}
    assert config_mapping({"window": 8}) == {"window": 8}
    assert config_mapping(None) == {}


def test_replay_prints_per_session_what_was_recorded_and_what_this_config_stops(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = _run(capsys, "replay", str(SESSIONS))
    assert status == 0
    assert err == ""
    table = out.split("\n\n")[1].splitlines()
    summary = {name: line for line in table[1:] for name in line.split() if name.startswith(("loop", "ok-"))}
    assert "3 from #4" in summary["loop-a"]
    assert " - " in summary["ok-pagination"]
    blocks = {block.splitlines()[0].split()[-1]: block for block in out.split("\n\n")[2:]}
    assert "recorded: 4 executed, 2 blocked" in blocks["loop-a"]
    assert "replayed     3 denied, first at #4; differs from the recording on 1 call" in blocks["loop-a"]
    assert "#5    bash  denied   5/5 +2  executed  cmd:curl:curl open.canada.ca/ -o /tmp/o" in out
    assert out.rstrip().endswith("6 sessions, 40 calls, 10 stopped under defaults")
    assert "REPEAT_TOOL_BLOCKED" not in out
    assert max(len(line) for line in out.splitlines()) <= 100


def test_replay_says_under_its_tables_what_count_figures_mean(capsys: pytest.CaptureFixture[str]) -> None:
    """`6/5`, `3/3` and `+2` in the COUNT column come with a legend: once after the session tables,
    in text (wrapped to the width) and in markdown; not when no session table is printed."""
    _, out, _ = _run(capsys, "replay", str(SESSIONS))
    legend = " ".join(out.split("\n\n")[-2].splitlines())
    assert legend.startswith(
        "COUNT: the count that stopped a call, against its limit, and ON what it counted"
    )
    assert "(5/5, 6/5)" in legend and "for failLimit, the failures in a row of ON (3/3)" in legend
    assert "for sameResultLimit" in legend and "+2: two more fingerprints reached that limit" in legend
    assert "against the limit it stopped at, up to 2 below sameResultLimit" in " ".join(legend.split())
    assert "-: no capped fingerprint" in legend
    assert out.count("COUNT: ") == 1 and max(len(line) for line in out.splitlines()) <= 100
    _, out, _ = _run(capsys, "replay", "--format", "markdown", str(SESSIONS))
    assert "\n\nCOUNT: the count that stopped a call" in out and out.count("COUNT: ") == 1
    _, out, _ = _run(capsys, "replay", str(SESSIONS / "ok-pagination.jsonl"))
    assert "COUNT:" not in out


def test_replay_show_denials_and_formats(capsys: pytest.CaptureFixture[str]) -> None:
    loop_a = str(SESSIONS / "loop-a.jsonl")
    _, out, _ = _run(capsys, "replay", "--show-denials", loop_a)
    assert "    REPEAT_TOOL_BLOCKED: this `read` call was not run" in out
    _, out, _ = _run(capsys, "replay", "--format", "markdown", "--show-denials", loop_a)
    header = "| STARTED (UTC) | SESSION | CALLS | STOPPED | DIFFERS | DIRECTORY \u00b7 FIRST PROMPT |"
    assert out.startswith("config: defaults (") and "\n\n" + header + "\n| --- |" in out
    assert "```text\nREPEAT_TOOL_BLOCKED:" in out
    _, out, _ = _run(capsys, "replay", "--format", "json", loop_a)
    [session] = json.loads(out)["sessions"]
    assert (session["session"], session["calls"], session["stops"], session["differs"]) == ("loop-a", 6, 3, 1)
    assert session["verdicts"][4]["hits"][0]["fingerprint"] == 'exact:read:{"file_path":"/work/notes.md"}'


def test_an_unreadable_line_is_named_and_the_run_goes_on(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _run(capsys, "replay", str(FIXTURES / "broken.jsonl"), str(SESSIONS / "loop-a.jsonl"))
    assert status == 1
    assert f"rtb: {FIXTURES / 'broken.jsonl'}:2: not a JSON event" in err
    assert f"rtb: {FIXTURES / 'broken.jsonl'}:3: tool/call has no name" in err
    assert "broken" in out and "loop-a" in out


@pytest.mark.parametrize("command", ["replay", "sweep"])
def test_a_path_that_is_not_there_and_nothing_else_stops_in_its_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """Nothing to read: the one line naming the missing path, exit 2, no empty table after it."""
    missing = tmp_path / "nonexistent"
    status, out, err = _run(capsys, command, str(missing))
    assert (status, out, err) == (2, "", f"rtb: {missing}: no such file or folder\n")
    status, out, err = _run(capsys, command, str(missing), str(SESSIONS / "loop-a.jsonl"))
    reported = {"replay": "loop-a", "sweep": "1/1"}[command]  # the session that is there is read
    assert status == 1 and err == f"rtb: {missing}: no such file or folder\n" and reported in out


def test_sweep_prints_denials_and_sessions_touched_per_setting(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, "sweep", str(SESSIONS), "--window", "8,12", "--cap", "3,5", *SEED)
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == f"config: {SEED[1]} (--config)"
    assert lines[1].split() == ["WINDOW", "CAP", "DENIALS", "SESSIONS", "TOUCHED"]
    assert lines[2].split() == ["8", "3", "17", "5/6"]
    assert lines[5].split() == ["12", "5", "5", "3/6"]


def test_sweep_with_labels_marks_the_best_settings(capsys: pytest.CaptureFixture[str]) -> None:
    labels = str(FIXTURES / "labels.tsv")
    status, out, _ = _run(
        capsys, "sweep", str(SESSIONS), "--window", "12", "--cap", "3,5,9", "--labels", labels, *SEED
    )
    assert status == 0
    rows = [line.split() for line in out.splitlines()[2:5]]
    assert rows == [
        ["12", "3", "17", "5/6", "3/3", "2", "3.0"],
        ["12", "5", "5", "3/6", "3/3", "0", "5.0", "*"],
        ["12", "9", "0", "0/6", "0/3", "0", "-"],
    ]
    _, out, _ = _run(
        capsys, "sweep", str(SESSIONS), "--cap", "5", "--labels", labels, "--format", "json", *SEED
    )
    assert json.loads(out)["config"] == f"{SEED[1]} (--config)"
    [setting] = json.loads(out)["settings"]
    assert setting == {
        "window": 12,
        "cap": 5,
        "denials": 5,
        "sessionsTouched": 3,
        "loopsCaught": 3,
        "loops": 3,
        "falsePositives": 0,
        "meanCatch": 5.0,
        "best": True,
    }


def test_sweep_names_the_config_it_lays_its_grid_over(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, "sweep", str(SESSIONS), "--cap", "5")
    assert status == 0
    assert out.splitlines()[0] == "config: defaults (no --config given)"


def test_sweep_names_a_grid_point_the_config_refuses(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _run(capsys, "sweep", str(SESSIONS), "--cap", "1")
    assert status == 2
    assert "window 12, cap 1: limits.exact must be null or a finite number >= 2" in err


def test_sweep_with_a_labels_line_it_cannot_read_names_it_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As for a log: everything else still runs, and the exit status says a line was not read."""
    labels = tmp_path / "labels.tsv"
    labels.write_text("loop-a\tlop\twhy\nloop-b\tloop\tthe same call\n")
    status, out, err = _run(capsys, "sweep", str(SESSIONS), "--labels", str(labels), "--format", "json")
    assert status == 1
    assert f"rtb: {labels}:1: " in err
    assert [problem.startswith(f"{labels}:1: ") for problem in json.loads(out)["problems"]] == [True]


def test_sweep_names_a_labels_file_written_with_spaces_once_per_line_up_to_twenty(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A labels file with spaces for TABs (or not a labels file at all) printed one line for each
    of its lines, 209 for the README, each saying only what a line should be."""
    labels = tmp_path / "labels.tsv"
    labels.write_text("".join(f"loop-{n} loop the same read\n" for n in range(30)))
    status, out, err = _run(capsys, "sweep", str(SESSIONS), "--labels", str(labels), "--format", "json")
    assert status == 1
    lines = [line for line in err.splitlines() if line.startswith(f"rtb: {labels}")]
    assert len(lines) == 21
    assert lines[0] == (
        f"rtb: {labels}:1: expected '<session id> TAB <loop|ok> [TAB <reason> [TAB <loop start>]]': "
        "this line has no TAB (spaces do not separate the columns)"
    )
    assert lines[-1] == f"rtb: {labels}: 10 more lines could not be read (not listed)"
    assert len(json.loads(out)["problems"]) == 21


def test_progress_draws_on_a_terminal_only() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    progress = Progress(4, terminal)
    progress.advance()
    progress.close()
    assert terminal.getvalue().startswith("\r[" + "#" * 7 + "." * 23 + "] 1/4")
    piped = io.StringIO()
    progress = Progress(4, piped)
    progress.advance()
    progress.close()
    assert piped.getvalue() == ""


def test_python_dash_m_breaker_is_rtb() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "breaker", "explain", "ls -la"],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).parent.parent,
    )
    assert result.returncode == 0, result.stderr
    assert "cmd:ls:ls -la" in result.stdout or "exact:bash:" in result.stdout


# The script sits beside the interpreter running the tests (a venv's bin/), which need not be on PATH.
RTB_SCRIPT = shutil.which("rtb", path=str(Path(sys.executable).parent)) or shutil.which("rtb")


@pytest.mark.skipif(RTB_SCRIPT is None, reason="the package is not installed with its scripts")
def test_the_rtb_script_is_installed() -> None:
    assert RTB_SCRIPT is not None
    result = subprocess.run([RTB_SCRIPT, "--help"], capture_output=True, text=True, check=False)
    assert result.returncode == 0
    assert "explain" in result.stdout


@pytest.mark.parametrize(
    ("target", "said"),
    [
        ("", "is a folder: name the page's file, such as "),
        ("missing/out.html", ": no folder "),
    ],
    ids=["a-folder", "in-a-missing-folder"],
)
def test_replay_html_where_no_page_can_be_written_stops_first_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str, said: str
) -> None:
    status, out, err = _run(capsys, "replay", "--html", str(tmp_path / target), str(tmp_path))
    assert (status, out) == (2, "")
    assert err.startswith("rtb: --html ") and said in err and err.count("\n") == 1, err
    assert "Traceback" not in err


def test_rtb_help_prints_rtbs_help_or_a_commands(capsys: pytest.CaptureFixture[str]) -> None:
    """`npx --no rtb --help` is npx's own help: `rtb help` is the one npx leaves to rtb."""
    assert main(["help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: rtb [-h] COMMAND ...") and "explain" in out and "check" in out
    assert main(["help", "replay"]) == 0
    assert capsys.readouterr().out.startswith("usage: rtb replay [-h] [--show-denials]")
    with pytest.raises(SystemExit) as stopped:
        main(["help", "nosuch"])
    assert stopped.value.code == 2
    assert "invalid choice: 'nosuch'" in capsys.readouterr().err


@pytest.mark.parametrize(("module", "package"), [("pydantic", "pydantic"), ("pydantic_core", "pydantic")])
def test_an_interpreter_without_a_dependency_is_named_with_the_fix_not_a_traceback(
    module: str, package: str, tmp_path: Path
) -> None:
    """`RTB_PYTHON=/usr/bin/python3 npx --no rtb check` printed a ModuleNotFoundError traceback."""
    config = tmp_path / "config.yml"
    config.write_text("window: 8\n")
    hidden = f"import sys; sys.modules[{module!r}] = None; from breaker.rtb.cli import main; "
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            hidden + f"raise SystemExit(main(['explain', '--config', {str(config)!r}, 'ls']))",
        ],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parent.parent,
        timeout=120,
    )
    assert (run.returncode, run.stdout, "Traceback" in run.stderr) == (2, "", False)
    assert run.stderr == (
        f"rtb: this Python ({sys.executable}) cannot import {module}, which rtb needs (the package "
        f"{package}). Fix: `{sys.executable} -m pip install {package}`, or run `npx --no rtb` in a dsh "
        "profile with the plugin and RTB_PYTHON unset (it prepares the plugin's own environment)\n"
    )


@pytest.mark.parametrize(
    "option",
    [["--format", "json"], ["--format", "markdown"], ["--show-denials"], ["--calls"], ["--around", "3"]],
)
def test_html_with_an_option_of_the_report_it_replaces_is_refused(
    option: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--html page.html --format json` wrote the page and printed no JSON, without a word."""
    page = tmp_path / "page.html"
    status, out, err = _run(capsys, "replay", str(SESSIONS), "--html", str(page), *option)
    assert (status, out, page.exists()) == (2, "", False)
    assert err == (
        f"rtb: --html writes the page instead of the report, so {option[0]} does nothing with it: run "
        "rtb replay twice, once with --html and once with "
        f"{' '.join(option)}\n"
    )


def test_html_never_writes_over_a_file_that_is_not_a_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`rtb replay --html ~/.dsh/sessions/…/session.jsonl.zstd` (the log taken for --html's FILE)
    wrote the page over the session log: the recording was lost."""
    log = tmp_path / "session.jsonl.zstd"
    shutil.copyfile(
        Path(__file__).parent.parent / "examples" / "sessions" / "loop-a-identical.jsonl.zstd", log
    )
    kept = log.read_bytes()
    status, out, err = _run(capsys, "replay", "--html", str(log), str(SESSIONS))
    assert (status, out, log.read_bytes() == kept) == (2, "", True)
    assert err == (
        f"rtb: --html {log} is a file that is not a page rtb wrote (a session log?): name a new "
        f"file for the page, such as {log.parent / 'replay.html'}\n"
    )
    page = tmp_path / "page.html"
    for _ in range(2):  # a page it wrote before is written again
        assert _run(capsys, "replay", "--html", str(page), str(SESSIONS))[0] == 0
    assert page.read_text(encoding="utf-8").startswith("<!doctype html>")
