"""`rtb replay` at any session length: each call is handed out as soon as its result is in (so
memory holds the calls waiting for a result, not the session), the page sums up the calls far
from any stop and keeps to its row budget, and a progress line is drawn on a terminal only.
(The figures for a million calls are `npm run bench`'s: bench/rtb_scale.py.)"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from breaker.core.config import default_config
from breaker.rtb import replayrun
from breaker.rtb.cli import main
from breaker.rtb.inputs import replay_sources
from breaker.rtb.read.events import CallEvent, ResultEvent
from breaker.rtb.replay.replayer import Replayer
from breaker.rtb.show import timeline
from breaker.rtb.show.replaytext import TextReport
from tests.rtb_logs import Log


def _long_session(folder: Path, calls: int) -> None:
    log = Log("session-10a90000-0000-4000-8000-000000000001", started_ms=1_796_000_000_000, cwd="/w")
    log.prompt("a long one")
    for number in range(calls):
        if number % 100 < 7:  # 7 identical failing calls every 100: stopped from the 4th (failLimit 3)
            log.call("bash", {"command": f"make t{number // 100}"}, "(no output)\n[exit code: 2]")
        else:
            log.call("read", {"file_path": f"/w/f{number}"}, "x")
    log.write(folder)


def test_a_call_is_handed_out_as_soon_as_its_result_is_in() -> None:
    replayer = Replayer(default_config())
    from breaker.core.reading.fingerprints import ToolCall

    for number in range(2_000):
        call = ToolCall("read", {"file_path": f"/f{number % 3}"}, f"c{number}")
        assert list(replayer.feed(CallEvent("a", call, 2 * number))) == []
        [done] = replayer.feed(ResultEvent("a", f"c{number}", "text", False, 2 * number + 1))
        assert (done.number, done.recorded) == (number + 1, "executed")
    assert replayer.finish() == []


def test_a_long_session_is_summed_up_between_its_stops_within_the_page_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(timeline, "HEAD_ROWS", 20)
    monkeypatch.setattr(timeline, "PAGE_ROWS", 150)
    _long_session(tmp_path / "logs", 2_000)
    page = tmp_path / "page.html"
    assert main(["replay", "--html", str(page), str(tmp_path / "logs")]) == 0
    capsys.readouterr()
    text = page.read_text(encoding="utf-8")
    rows = len(re.findall(r'<tr class="call', text))
    summed = sum(int(n) for n in re.findall(r'<tr class="gap" data-rows="(\d+)"', text))
    assert rows + summed == 2_000
    assert rows <= 150
    assert 'data-verdict="denied"' in text
    assert f"{rows:,} calls are rows, {summed:,} are summed up in stretches" in text
    assert "2,000 calls, 80 stopped under" in text  # the summary counts every call and stop


def test_the_progress_line_is_drawn_on_a_terminal_only(tmp_path: Path) -> None:
    _long_session(tmp_path / "logs", 300)
    sources, _ = replay_sources([tmp_path / "logs"])
    terminal = io.StringIO()
    ticker = replayrun.Ticker(len(sources), terminal, active=True)
    replayrun.run(sources, default_config(), TextReport(markdown=False), counts=False, ticker=ticker)
    assert "rtb: session 1/1" in terminal.getvalue() and terminal.getvalue().endswith("\r\033[K")
    piped = io.StringIO()
    replayrun.run(
        sources,
        default_config(),
        TextReport(markdown=False),
        counts=False,
        ticker=replayrun.Ticker(len(sources), piped),
    )
    assert piped.getvalue() == ""


def test_the_docs_quote_the_pages_limits() -> None:
    docs = (Path(__file__).resolve().parent.parent / "docs" / "rtb.md").read_text(encoding="utf-8")
    assert f"each agent's first {timeline.HEAD_ROWS:,} calls are rows" in docs
    assert f"The page holds at most {timeline.PAGE_ROWS:,} call rows" in docs


def test_the_pages_policy_names_its_one_style_and_one_script_by_digest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import base64
    import hashlib

    _long_session(tmp_path / "logs", 50)
    page = tmp_path / "page.html"
    assert main(["replay", "--html", str(page), str(tmp_path / "logs")]) == 0
    capsys.readouterr()
    text = page.read_text(encoding="utf-8")
    [policy] = re.findall(r'http-equiv="Content-Security-Policy" content="([^"]*)"', text)
    [style] = re.findall(r"<style>(.*?)</style>", text, re.DOTALL)
    scripts = re.findall(r"<script>(.*?)</script>", text, re.DOTALL)
    assert len(scripts) == 1

    def digest(body: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(body.encode()).digest()).decode() + "'"

    assert f"style-src {digest(style)};" in policy
    assert f"script-src {digest(scripts[0])};" in policy
    assert policy.startswith("default-src 'none';") and "unsafe" not in policy
    assert " style=" not in text and " on" + "click=" not in text


def test_agents_whose_events_interleave_keep_one_table_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = Log("session-1e0f0000-0000-4000-8000-00000000000a", started_ms=1_796_000_000_000, cwd="/w")
    child = Log(
        "session-1e0f0000-0000-4000-8000-00000000000b",
        started_ms=1_796_000_000_025,  # its events fall between the root's
        cwd="/w",
        parent="session-1e0f0000-0000-4000-8000-00000000000a",
    )
    for number in range(30):
        root.call("read", {"file_path": f"/w/a{number}"}, "a")
        child.call("read", {"file_path": f"/w/b{number}"}, "b")
    root.write(tmp_path / "logs")
    child.write(tmp_path / "logs")
    page = tmp_path / "page.html"
    assert main(["replay", "--html", str(page), str(tmp_path / "logs")]) == 0
    capsys.readouterr()
    text = page.read_text(encoding="utf-8")
    assert text.count("<h3>agent ") == 2
    assert len(re.findall(r'<tr class="call', text)) == 60
