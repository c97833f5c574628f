"""`rtb replay --html` opened in a real browser (headless Chromium, driven over the DevTools
protocol by ``tests/cdp.py``): one row per call, the stops marked with their denial text, the
counts drawn, no console error, no request but the page itself; and a 10,000-call session opens
in a few seconds. Skipped, saying why, where Chromium is not installed (``tests/run-all.sh``
installs Debian's ``chromium`` where it can)."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from breaker.rtb.cli import main
from tests.cdp import Browser, chromium_binary
from tests.rtb_logs import SECRETS, Log, secret_session

CHROMIUM = chromium_binary()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no chromium on PATH: the page tests need a real browser "
    "(tests/run-all.sh installs Debian's chromium with apt-get where it can)",
)


@pytest.fixture
def browser() -> Iterator[Browser]:
    assert CHROMIUM is not None
    with Browser(CHROMIUM) as opened:
        for domain in ("Page", "Runtime", "Log", "Network"):
            opened.send(f"{domain}.enable")
        yield opened


def _open(browser: Browser, page: Path) -> float:
    """Load ``page`` and wait until a frame has been painted; the seconds it took."""
    started = time.perf_counter()
    browser.send("Page.navigate", url=page.as_uri())
    browser.wait_for("Page.loadEventFired")
    browser.evaluate("new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
    return time.perf_counter() - started


def _logs(folder: Path) -> int:
    """A session whose main agent loops on a command and whose helper repeats a read; calls in all."""
    main_log = Log(
        "session-0a1b2c3d-0000-4000-8000-00000000000a", started_ms=1_796_000_000_000, cwd="/work/demo"
    )
    main_log.prompt("make the tests pass")
    main_log.call("read", {"file_path": "/work/demo/README.md"}, "# demo")
    for attempt in range(7):
        main_log.call(
            "bash", {"command": "npm test", "description": f"try {attempt}"}, "1 failing\n[exit code: 1]"
        )
    main_log.call("bash", {"command": "git diff", "description": "look"}, "")
    main_log.write(folder)
    helper = Log(
        "session-0a1b2c3d-0000-4000-8000-00000000000b",
        started_ms=1_796_000_010_000,
        cwd="/work/demo",
        parent="session-0a1b2c3d-0000-4000-8000-00000000000a",
    )
    for _ in range(6):
        helper.call("read", {"file_path": "/work/demo/src/app.js"}, "export {}")
    helper.write(folder)
    return main_log.calls + helper.calls


def test_the_timeline_renders_one_row_per_call_with_stops_counts_and_denials(
    browser: Browser, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = _logs(tmp_path / "logs")
    secret_session(tmp_path / "logs")
    calls += 7
    page = tmp_path / "timeline.html"
    assert main(["replay", "--html", str(page), str(tmp_path / "logs")]) == 0
    capsys.readouterr()
    seconds = _open(browser, page)

    rows = browser.evaluate("document.querySelectorAll('tr.call').length")
    assert rows == calls
    verdicts = browser.evaluate("[...document.querySelectorAll('tr.call')].map(row => row.dataset.verdict)")
    # the failing loop stopped from its 4th call (failLimit 3), the helper's read from its 4th (three
    # alike answers to a read asked again right after itself)
    assert verdicts.count("denied") == 3 + 3 + 4
    marked = browser.evaluate(
        "[...document.querySelectorAll('tr.call')].filter(row => row.classList.contains('stop'))"
        ".map(row => getComputedStyle(row.cells[0]).boxShadow)"
    )
    assert len(marked) == verdicts.count("denied") and all("inset" in shadow for shadow in marked)
    denial = browser.evaluate("document.querySelector('pre.denial').innerText")
    shut = browser.evaluate(
        "(() => { const shut = document.querySelector('details[data-t]'); shut.open = true;"
        " return new Promise(done => setTimeout(() => done(shut.innerText), 50)); })()"
    )
    assert "REPEAT_TOOL_BLOCKED: this `bash` call was not run" in shut
    assert denial.startswith("REPEAT_TOOL_BLOCKED: this `bash` call was not run")
    assert "npm test" in denial
    counts = browser.evaluate(
        "[...document.querySelectorAll('tr.call')].slice(1, 6)"
        ".map(row => [...row.cells[4].querySelectorAll('.k')].map(bar => bar.innerText.trim()))"
    )
    # The window's count climbs to the cap; a stop shows what stopped it: three failures in a row
    # (failLimit 3) at the 4th, the cap and the failures at the 5th.
    assert [[bar for bar in row if "cmd " in bar] for row in counts] == [
        ["cmd 1/5"],
        ["cmd 2/5"],
        ["cmd 3/5"],
        ["failLimit: cmd 3/3"],
        ["cmd 5/5", "failLimit: cmd 3/3"],
    ]
    bars = browser.evaluate(
        "[...document.querySelectorAll('tr.call')[5].querySelectorAll('.k i')]"
        ".map(bar => [getComputedStyle(bar).getPropertyValue('--f').trim(),"
        " bar.getBoundingClientRect().width])"
    )
    assert bars and all(fill == "100%" and width > 20 for fill, width in bars)  # the stop's bars are full
    # every bar is shown whole: a cell of four (the caps and failLimit's) wraps, none is cut
    cut = browser.evaluate(
        "[...document.querySelectorAll('td.counts')].filter(cell => cell.scrollWidth > cell.clientWidth)"
        ".map(cell => cell.innerText)"
    )
    assert cut == []
    text = browser.evaluate("document.body.innerText")
    for secret in SECRETS:
        assert secret[:12] not in text
    assert browser.problems() == []
    assert browser.requests() == [page.as_uri()]
    browser.evaluate("document.getElementById('near').click()")
    hidden = browser.evaluate(
        "[...document.querySelectorAll('tr.call')].filter(row => row.offsetParent === null).length"
    )
    assert hidden > 0  # "only stops and the calls that led to them" hides the rest
    browser.evaluate("document.getElementById('near').click()")
    browser.screenshot(tmp_path / "timeline.png")
    assert (tmp_path / "timeline.png").stat().st_size > 10_000
    print(f"\nthe {calls}-call page opened in {seconds:.2f} s; screenshot {tmp_path / 'timeline.png'}")


def test_beside_another_setting_the_differences_are_marked(
    browser: Browser, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = _logs(tmp_path / "logs")
    config = tmp_path / "tight.json"
    config.write_text(json.dumps({"limits": {"exact": 3, "cmd": 3}}), encoding="utf-8")
    page = tmp_path / "compare.html"
    assert main(["replay", "--config", str(config), "--html", str(page), str(tmp_path / "logs")]) == 0
    capsys.readouterr()
    _open(browser, page)
    assert browser.evaluate("document.querySelectorAll('tr.call').length") == calls
    differing = browser.evaluate(
        "[...document.querySelectorAll('tr.call.differs')].map(row => row.dataset.call + ':' +"
        " row.querySelectorAll('.v')[0].innerText + '/' + row.querySelectorAll('.v')[1].innerText)"
    )
    assert "3:denied/ran" in differing and "4:denied/ran" in differing
    assert browser.evaluate("document.querySelectorAll('.settings td.differs').length") >= 2
    # In a 1400-pixel window the two settings' columns left the arguments ~100 px ("echo …"),
    # their heading running into the next one's: the table scrolls instead, the arguments kept.
    narrowest = browser.evaluate(
        "Math.min(...[...document.querySelectorAll('td.args')].map(c => c.clientWidth))"
    )
    assert narrowest >= 20 * 13, f"the arguments column is {narrowest} px wide"
    cut = browser.evaluate(
        "[...document.querySelectorAll('.calls th')]"
        ".filter(h => h.scrollWidth > h.clientWidth).map(h => h.title)"
    )
    assert "" not in cut, "a heading cut short (none but a setting's name) has its whole text in its title"
    assert browser.problems() == []


def test_a_10000_call_session_is_summed_up_between_its_stops_and_opens_in_a_few_seconds(
    browser: Browser, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = Log("session-10000000-0000-4000-8000-000000000000", started_ms=1_796_000_000_000, cwd="/work/big")
    log.prompt("a long session")
    for number in range(10_000):
        if number % 400 < 8:  # 8 identical failing calls every 400: stopped from the 4th (failLimit 3)
            log.call(
                "bash",
                {"command": f"make check-{number // 400}", "description": "x"},
                "(no output)\n[exit code: 2]",
            )
        else:
            log.call("read", {"file_path": f"/work/big/file-{number}.txt"}, "contents")
    log.write(tmp_path / "logs")
    page = tmp_path / "big.html"
    started = time.perf_counter()
    assert main(["replay", "--html", str(page), str(tmp_path / "logs")]) == 0
    written = time.perf_counter() - started
    capsys.readouterr()
    seconds = _open(browser, page)
    rows = browser.evaluate("document.querySelectorAll('tr.call').length")
    summed = browser.evaluate(
        "[...document.querySelectorAll('tr.gap')].reduce((n, row) => n + Number(row.dataset.rows), 0)"
    )
    assert rows + summed == 10_000
    assert rows < 2_000  # the first 500 calls, and each stop with the 12 calls before it
    assert browser.evaluate("document.querySelectorAll('tr.call[data-verdict=denied]').length") == 25 * 5
    last = browser.evaluate("[...document.querySelectorAll('tr.gap')].pop().textContent")
    assert last.startswith("#9609\u2013#10000: 392 calls (392 ran)")
    assert browser.problems() == []
    size = page.stat().st_size / 1e6
    with capsys.disabled():
        print(
            f"\n[timeline] 10,000 calls: rtb wrote the page in {written:.2f} s ({size:.1f} MB), "
            f"Chromium opened it in {seconds:.2f} s"
        )
    assert seconds < 10


def test_the_pages_script_runs_under_a_policy_without_unsafe_inline(
    browser: Browser, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _logs(tmp_path / "logs")
    page = tmp_path / "timeline.html"
    assert main(["replay", "--html", str(page), str(tmp_path / "logs")]) == 0
    capsys.readouterr()
    text = page.read_text(encoding="utf-8")
    assert "unsafe-inline" not in text and " style=" not in text
    _open(browser, page)
    browser.evaluate("document.getElementById('show-texts').click()")
    texts = "[...document.querySelectorAll('tr.text')]"
    hidden = browser.evaluate(f"{texts}.length > 0 && {texts}.every(row => row.offsetParent === null)")
    assert hidden  # the script ran: unchecking the box hid every text
    injected = browser.evaluate(
        "(() => { const s = document.createElement('script'); s.textContent = 'window.ran = 1';"
        " document.body.appendChild(s); return window.ran === undefined; })()"
    )
    assert injected  # any other script is refused


def test_the_browser_leaves_nothing_in_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chromium writes ~/.config/chromium and ~/.cache/dconf whatever --user-data-dir says: its
    home is its throwaway profile, so `npm test` leaves nothing in the user's."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    assert CHROMIUM is not None
    with Browser(CHROMIUM) as opened:
        opened.evaluate("1 + 1")
    assert list(home.iterdir()) == []


def test_the_browser_leaves_nothing_in_the_temporary_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chromium makes its singleton folder (`org.chromium.Chromium.*`) in the temporary folder and
    leaves it there: its temporary folder is its throwaway profile, removed with it. (A short
    folder: the singleton's socket path must fit in 108 bytes.)"""
    temporary = Path(tempfile.mkdtemp(prefix="rtb-tmp-"))
    try:
        monkeypatch.setenv("TMPDIR", str(temporary))
        assert CHROMIUM is not None
        with Browser(CHROMIUM) as opened:
            opened.evaluate("1 + 1")
        assert [path.name for path in temporary.iterdir()] == []
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
