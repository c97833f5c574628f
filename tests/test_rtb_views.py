"""What `rtb replay` shows a user (issue 23): sessions sorted by start with their directory and
first prompt, empty sessions counted, --session/--agent/--calls, 100 columns, JSON with integer
caps and the command; and no output format printing a secret."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from breaker.rtb.cli import main
from tests.rtb_logs import SECRETS, Log, secret_session


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _loop(log: Log, times: int, command: str = "make test") -> Log:
    for _ in range(times):
        log.call("bash", {"command": command, "description": "run"}, "1 failed\n[exit code: 1]")
    return log


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Three sessions with calls started out of order, two empty ones, and a subagent."""
    logs = tmp_path / "logs"
    _loop(
        Log(
            "session-bbbbbbbb-0000-4000-8000-000000000002", started_ms=1_796_000_600_000, cwd="/work/b"
        ).prompt("second session\nmore detail"),
        7,
    ).write(logs)
    _loop(
        Log(
            "session-aaaaaaaa-0000-4000-8000-000000000001", started_ms=1_796_000_000_000, cwd="/work/a"
        ).prompt("first session"),
        3,
    ).write(logs)
    root = Log("session-cccccccc-0000-4000-8000-000000000003", started_ms=1_796_001_200_000, cwd="/work/c")
    _loop(root.prompt("third, with a helper"), 2, "ls").write(logs)
    helper = Log(
        "session-dddddddd-0000-4000-8000-000000000004",
        started_ms=1_796_001_210_000,
        cwd="/work/c",
        parent="session-cccccccc-0000-4000-8000-000000000003",
    )
    _loop(helper, 6, "git status").write(logs)
    Log("session-eeeeeeee-0000-4000-8000-000000000005", started_ms=1_796_000_300_000, cwd="/x").prompt(
        "hi"
    ).write(logs)
    Log("session-ffffffff-0000-4000-8000-000000000006", started_ms=None, cwd=None).write(logs)
    return logs


def test_sessions_are_sorted_by_start_with_directory_and_prompt_and_empty_ones_counted(
    capsys: pytest.CaptureFixture[str], folder: Path
) -> None:
    status, out, _ = _run(capsys, "replay", str(folder))
    assert status == 0
    summary = out.split("\n\n")[1].splitlines()
    assert [row.split()[2] for row in summary[1:]] == ["aaaaaaaa", "bbbbbbbb", "cccccccc"]
    assert summary[1].startswith("2026-11-30 ")
    assert "/work/a \u00b7 first session" in summary[1]
    assert "second session" in summary[2] and "more detail" not in out
    assert "eeeeeeee" not in out and "ffffffff" not in out
    assert out.rstrip().endswith(
        "3 sessions, 18 calls, 7 stopped under defaults; 2 empty sessions (no tool call) not listed"
    )
    assert max(len(line) for line in out.splitlines()) <= 100


def test_session_and_agent_filters(capsys: pytest.CaptureFixture[str], folder: Path) -> None:
    _, out, _ = _run(capsys, "replay", "--session", "bbbb", str(folder))
    assert "bbbbbbbb" in out and "aaaaaaaa" not in out and "cccccccc" not in out
    _, out, _ = _run(capsys, "replay", "--agent", "session-dddddddd", "--format", "json", str(folder))
    [session] = json.loads(out)["sessions"]
    assert session["session"].startswith("session-cccccccc")
    assert {call["agent"] for call in session["verdicts"]} == {"session-dddddddd-0000-4000-8000-000000000004"}
    assert _run(capsys, "replay", "--session", "nothing-like-it", str(folder))[0] == 2


@pytest.mark.parametrize("page", [False, True], ids=["text", "html"])
def test_an_agent_filter_matching_no_agent_is_an_error_not_an_empty_report(
    capsys: pytest.CaptureFixture[str], folder: Path, tmp_path: Path, page: bool
) -> None:
    """As --session: a mistyped --agent printed "0 sessions, 0 calls" and exit 0."""
    html = ["--html", str(tmp_path / "page.html")] if page else []
    status, out, err = _run(capsys, "replay", "--agent", "zzzz", *html, str(folder))
    assert (status, out) == (2, "")
    assert (
        err == "rtb: no call of an agent matches --agent zzzz (a session's or subagent's id, or its start)\n"
    )
    assert not (tmp_path / "page.html").exists()


def test_calls_lists_the_run_up_to_each_stop(capsys: pytest.CaptureFixture[str], folder: Path) -> None:
    seed = ("--config", str(Path(__file__).parent / "fixtures" / "seed-config.yml"))  # its counting
    _, stops_only, _ = _run(capsys, "replay", "--session", "bbbb", *seed, str(folder))
    _, out, _ = _run(capsys, "replay", "--session", "bbbb", "--calls", *seed, str(folder))
    rows = [line.split() for line in out.splitlines() if re.match(r"  #\d", line)]
    assert [row[0] for row in rows] == [f"#{n}" for n in range(1, 8)]
    assert [row[2] for row in rows] == ["allowed"] * 4 + ["denied"] * 3
    assert [row[3] for row in rows[:5]] == ["1/5", "2/5", "3/5", "4/5", "5/5"]
    assert len([line for line in stops_only.splitlines() if re.match(r"  #\d", line)]) == 3
    _, around, _ = _run(capsys, "replay", "--session", "bbbb", "--calls", "--around", "1", *seed, str(folder))
    numbers = [line.split()[0] for line in around.splitlines() if re.match(r"  (#\d|\u2026)", line)]
    assert numbers == ["\u2026", "#4", "#5", "#6", "#7"]
    assert max(len(line) for line in out.splitlines()) <= 100


def test_json_has_integer_caps_the_command_and_the_session_facts(
    capsys: pytest.CaptureFixture[str], folder: Path
) -> None:
    _, out, _ = _run(capsys, "replay", "--format", "json", str(folder))
    document = json.loads(out)
    assert document["emptySessions"] == 2
    first = document["sessions"][0]
    assert (first["started"], first["cwd"], first["prompt"]) == (
        "2026-11-30T00:53:20Z",
        "/work/a",
        "first session",
    )
    denied = next(call for call in document["sessions"][1]["verdicts"] if call["verdict"] == "denied")
    assert denied["command"] == "make test"
    assert all(type(hit["cap"]) is int for hit in denied["hits"])
    stopped = document["sessions"][1]["verdicts"][3]["counts"][0]  # three failures in a row
    assert (stopped["rule"], stopped["count"], stopped["cap"]) == ("failLimit", 3, 3)
    assert [count["count"] for count in document["sessions"][1]["verdicts"][2]["counts"]][:1] == [3]


# --- one redaction for every output --------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        ["--format", "table"],
        ["--format", "table", "--show-denials", "--calls"],
        ["--format", "markdown", "--show-denials", "--calls"],
        ["--format", "json"],
        ["--format", "json", "--show-denials"],
    ],
    ids=["table", "table-denials-calls", "markdown", "json", "json-denials"],
)
def test_no_format_prints_a_secret(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, options: list[str]
) -> None:
    secret_session(tmp_path / "logs")
    status, out, err = _run(capsys, "replay", *options, str(tmp_path / "logs"))
    assert status == 0, err
    assert "denied" in out  # the calls carrying the secrets are listed
    for secret in SECRETS:
        assert secret[:12] not in out, secret
    assert "[REDACTED" in out


def test_the_html_page_prints_no_secret(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    secret_session(tmp_path / "logs")
    page = tmp_path / "out.html"
    _run(capsys, "replay", "--html", str(page), str(tmp_path / "logs"))
    text = page.read_text(encoding="utf-8")
    assert "REPEAT_TOOL_BLOCKED" in text
    for secret in SECRETS:
        assert secret[:12] not in text, secret


def test_explain_prints_no_secret(capsys: pytest.CaptureFixture[str]) -> None:
    command = f"curl -H 'Authorization: Bearer {SECRETS[0]}' https://u:{SECRETS[1]}@example.org/x"
    for options in ([], ["--format", "json"], ["--format", "markdown"]):
        _, out, _ = _run(capsys, "explain", command, *options)
        assert "example.org" in out
        for secret in SECRETS[:2]:
            assert secret[:12] not in out


def test_notices_show_in_json_and_on_the_page(capsys: pytest.CaptureFixture[str], folder: Path) -> None:
    config = folder.parent / "warn.json"
    config.write_text(json.dumps({"warnAt": 3}), encoding="utf-8")
    _, out, _ = _run(
        capsys, "replay", "--config", str(config), "--format", "json", "--session", "bbbb", str(folder)
    )
    verdicts = json.loads(out)["sessions"][0]["verdicts"]
    assert [bool(call.get("notices")) for call in verdicts[:4]] == [False, False, True, False]
    assert verdicts[2]["notices"][0].startswith("REPEAT_TOOL_NOTICE:")
    page = folder.parent / "warn.html"
    _run(capsys, "replay", "--config", str(config), "--html", str(page), "--session", "bbbb", str(folder))
    text = page.read_text(encoding="utf-8")
    assert text.count('class="v v-notice"') == 1  # under warnAt; the defaults beside it have none
    assert "REPEAT_TOOL_NOTICE:" in text
    under = f"under {config}:"
    assert text.count(f'<pre class="setting">{html.escape(under)}</pre><pre class="notice">') == 1, (
        "the notice, which the defaults beside it do not give, is named for its setting"
    )


@pytest.mark.parametrize("form", ["table", "markdown"])
def test_show_denials_shows_the_notices_the_model_read_too(
    capsys: pytest.CaptureFixture[str], folder: Path, form: str
) -> None:
    """Under warnAt the text report's --show-denials printed the denials only: the notice the
    model read at the third call was in the JSON and on the page, not in the text."""
    config = folder.parent / "warn.json"
    config.write_text(json.dumps({"warnAt": 3}), encoding="utf-8")
    argv = ["--config", str(config), "--session", "bbbb", "--format", form, str(folder)]
    _, out, _ = _run(capsys, "replay", "--show-denials", *argv)
    assert out.count("REPEAT_TOOL_NOTICE:") == 1
    assert re.search(r"#3 bash \(\S+\) notice:", out)
    assert out.index("REPEAT_TOOL_NOTICE:") < out.index("REPEAT_TOOL_BLOCKED:"), "in call order"
    _, out, _ = _run(capsys, "replay", *argv)
    assert "REPEAT_TOOL_NOTICE:" not in out, "only with --show-denials"
    quiet = folder.parent / "quiet.json"
    quiet.write_text(json.dumps({"warnAt": 2, "failLimit": None, "sameResultLimit": None}), encoding="utf-8")
    quiet_log = Log("session-a0000000-0000-4000-8000-00000000000a", started_ms=None, cwd=None)
    log = _loop(quiet_log, 3).write(folder.parent / "unstopped")
    _, out, _ = _run(capsys, "replay", "--show-denials", "--config", str(quiet), "--format", form, str(log))
    assert "no stop" in out and "REPEAT_TOOL_NOTICE:" in out, "a session with a notice and no stop"


# --- one count for a stopped call in every view ---------------------------------------------------

SESSIONS = Path(__file__).parent / "fixtures" / "sessions"
#: What a view shows of a call, by (session, call): its COUNT cell and what the count was of.
Rows = dict[tuple[str, str], tuple[str, str]]
#: A listed row of the text report (one agent: no AGENT column) and of the markdown report.
_TEXT_ROW = re.compile(r"  (#\d+) +\S+ +\S+ +(\S+(?: \+\d+)?) +\S+ +(\S.*?)  ")
_MARKDOWN_ROW = re.compile(r"\| (#\d+) \| [^|]* \| [^|]* \| ([^|]*) \| [^|]* \| ([^|]*) \|")
#: The rules other than a cap, as an ON cell names them before what they counted.
_OTHER_RULES = ("failLimit: ", "sameResultLimit: ")


def _rule(on: str) -> str:
    return on.partition(": ")[0] if on.startswith(_OTHER_RULES) else "limits"


def _cell(counts: list[tuple[str, str]]) -> tuple[str, str]:
    """A stopped call's COUNT and ON from its counts as (figure, what it counted): the first, and
    how many more counted under the same rule."""
    (figure, on), others = counts[0], counts[1:]
    more = sum(1 for _, other in others if _rule(other) == _rule(on))
    return figure + (f" +{more}" if more else ""), on


def _text_rows(capsys: pytest.CaptureFixture[str], options: list[str]) -> Rows:
    markdown = "markdown" in options
    _, out, _ = _run(capsys, "replay", *options, str(SESSIONS))
    rows: Rows = {}
    session, several = "", False
    for line in out.splitlines():
        title = re.fullmatch(r"(?:### )?([\w-]+)", line)
        if title is not None:
            session, several = title.group(1), False
        several = several or "CALL  AGENT" in line or "CALL | AGENT" in line  # read by call number
        row = (_MARKDOWN_ROW if markdown else _TEXT_ROW).match(line + "  ")
        if row is not None and not several:
            rows[session, row.group(1)] = (row.group(2).strip(), row.group(3).strip())
    return rows


def _json_rows(
    capsys: pytest.CaptureFixture[str], options: list[str]
) -> tuple[Rows, dict[tuple[str, str], list[tuple[str, str]]]]:
    """The stopped calls' rows, and each other call's counts (a text row shows one of them)."""
    _, out, _ = _run(capsys, "replay", "--format", "json", *options, str(SESSIONS))
    stopped: Rows = {}
    ran: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for session in json.loads(out)["sessions"]:
        if len(session["agents"]) > 1:
            continue  # the text reports' rows are read by call number
        for call in session["verdicts"]:
            counts = [
                (
                    f"{count['count']}/{count['cap']}",
                    (
                        count["fingerprint"]
                        if count["rule"] == "limits"
                        else f"{count['rule']}: {count['fingerprint'] or count['kind']}"
                    ),
                )
                for count in call["counts"]
            ]
            key = (session["session"], f"#{call['call']}")
            if call["verdict"] in ("denied", "asked"):
                stopped[key] = _cell(counts)
            else:
                ran[key] = counts
    return stopped, ran


def _page_rows(capsys: pytest.CaptureFixture[str], page: Path) -> Rows:
    """The stopped calls' rows of the --html page, read from their count bars' titles."""
    assert _run(capsys, "replay", "--html", str(page), str(SESSIONS))[0] == 0
    rows: Rows = {}
    for section in page.read_text(encoding="utf-8").split('<section class="session"')[1:]:
        if section.count("<h3>agent ") > 1:
            continue
        session = re.findall(r"<h2>[^<]* \u00b7 ([^<]*)</h2>", section)[0]
        stops = re.findall(
            r'data-verdict="(?:denied|asked)" data-call="(\d+)">.*?<td class="counts" title="([^"]*)"',
            section,
        )
        for number, title in stops:
            counts = [line.rpartition(": ") for line in html.unescape(title).splitlines()]
            rows[session, f"#{number}"] = _cell([(figure, on) for on, _, figure in counts])
    return rows


def _same_on(one: str, other: str) -> bool:
    """Two ON cells name the same thing (a text table cuts its cells with "…")."""
    one, other = one.removesuffix("\u2026"), other.removesuffix("\u2026")
    return one.startswith(other) or other.startswith(one)


def test_a_stopped_call_shows_the_count_that_stopped_it_in_every_view(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Caps, failLimit and sameResultLimit stops (tests/fixtures/sessions) through the text and
    markdown reports and JSON, each with and without --calls, and the --html page: every view shows a
    stopped call's own count against the limit that stopped it, the same one; a listed call that
    ran shows one of the window counts JSON gives it."""
    views: dict[str, Rows] = {}
    for calls in ([], ["--calls"]):
        name = " ".join(calls)
        views[f"text {name}"] = _text_rows(capsys, calls)
        views[f"markdown {name}"] = _text_rows(capsys, ["--format", "markdown", *calls])
        views[f"json {name}"], ran = _json_rows(capsys, calls)
    views["html"] = _page_rows(capsys, tmp_path / "page.html")  # the page takes no --calls: it has every call
    stopped = views["json "]
    assert stopped["loop-c", "#4"] == ("3/3 +2", "failLimit: cmd:curl:curl open.canada.ca/ -o /tmp/od.html")
    assert stopped["loop-b", "#3"] == ("2/2", "sameResultLimit: same")
    assert stopped["loop-a", "#5"] == ("5/5", 'exact:read:{"file_path":"/work/notes.md"}')
    for name, view in views.items():
        assert {key for key in view if key in stopped} == stopped.keys(), name
        for key, (count, on) in view.items():
            if key in stopped:
                assert count == stopped[key][0] and _same_on(on, stopped[key][1]), (name, key, count, on)
            else:  # a call that ran, listed by --calls
                assert any(count == figure and _same_on(on, what) for figure, what in ran[key]), (name, key)


@pytest.mark.parametrize("around", ["-1", "two"])
def test_around_refuses_what_is_not_a_count(around: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``--around -1`` read as 0 without a word; it is refused naming what is wanted (exit 2)."""
    with pytest.raises(SystemExit) as stopped:
        main(["replay", "--calls", "--around", around, "."])
    assert stopped.value.code == 2
    assert f"argument --around: expected a whole number >= 0, got '{around}'" in capsys.readouterr().err


def test_beside_another_setting_each_text_on_the_page_names_its_setting(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """With --config the page shows a call's denial under both settings one after the other: it
    did not say which text was whose (the window's 12 and 16 calls told them apart, if anything)."""
    page = tmp_path / "page.html"
    seed = Path(__file__).parent / "fixtures" / "seed-config.yml"
    _run(capsys, "replay", "--config", str(seed), "--html", str(page), "--session", "loop-a", str(SESSIONS))
    text = page.read_text(encoding="utf-8")
    shown_rows = re.findall(r'<tr class="text[^"]*"><td colspan="\d+">(.*?)</td></tr>', text, re.S)
    script = re.search(r'<script type="application/json" id="texts">(.*?)</script>', text, re.S)
    assert script is not None
    folded = json.loads(script[1])
    blocks = [re.findall(r'<pre class="([a-z]+)">([^<]*)</pre>', row) for row in shown_rows]
    blocks = [parts for parts in blocks if parts]  # the rest are folded
    blocks += [[(kind, html.escape(said)) for kind, said in parts] for parts in folded]
    under = f"under {seed}:"
    assert [[said for kind, said in parts if kind == "setting"] for parts in blocks] == [
        ["under defaults:"],  # #4: only the defaults stop it (sameResultLimit)
        [under, "under defaults:"],  # #5 (folded): both, each its own text
        [under, "under defaults:"],  # #6
    ]
    for parts in blocks:
        kinds = [kind for kind, _ in parts]
        assert kinds[0] == "setting" and kinds[-1] != "setting", "each text comes after its setting's name"
        assert "setting" not in {kinds[i] for i in range(1, len(kinds)) if kinds[i - 1] == "setting"}


def test_a_session_given_as_a_path_to_session_is_told_how_to_give_it(
    capsys: pytest.CaptureFixture[str], folder: Path
) -> None:
    """`--session` takes an id; a log's path there matched nothing and said only that."""
    log = next(folder.rglob("*.jsonl"))
    status, out, err = _run(capsys, "replay", "--session", str(log), str(folder))
    assert (status, out) == (2, "")
    assert err == (
        f"rtb: no session matches --session {log}: --session takes a session's id or its start "
        f"({log.parent.name}); a log's path is given as SESSION, without --session\n"
    )
    status, _, err = _run(capsys, "replay", "--session", "zzzz", str(folder))
    assert (status, err) == (2, "rtb: no session matches --session zzzz\n")
