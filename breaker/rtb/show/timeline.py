"""``rtb replay --html FILE``: one self-contained HTML page with a timeline of the calls.

Per session and per agent, one table row per call: its number, tool and arguments in a few words,
the verdict (ran, denied, asked, notice, not counted, not run), what the recorded run did, and a
bar per capped fingerprint of the call showing how many entries of the agent's window hold it
against its cap once the call was decided, so the approach to a stop reads down the column; a
stopped call's bars are the limits it reached, each with its own count (a cap's, ``failLimit``'s
failures in a row, ``sameResultLimit``'s), as in every other format. A stopped call carries the
full text the model would have read; the settings are listed at the top.
Given a second configuration (``--config`` beside the defaults), each row shows both verdicts and
both count strips, and the rows where they differ are marked.

The page stays small and opens fast however long the session: each agent's first ``HEAD_ROWS``
calls are rows, and after them the stops (and the rows that differ between two configurations)
with the ``window`` calls before each; the calls between are summed up in one row per stretch
(how many, and their verdicts). The page holds at most ``PAGE_ROWS`` call rows; past them, every
call is summed up in stretches and a note at the top says so. The rows are written to a spool as
the calls are decided, so writing the page costs the same memory for any length.

The page needs nothing but itself and runs nothing but its own: its one style and one script are
named by their digests in its Content-Security-Policy (``pagestyle``). Every text from a log is
shown through ``shown`` (the denial's redaction) and escaped.
"""

from __future__ import annotations

import html
import json
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TextIO

from breaker.core.config import BreakerConfig
from breaker.core.judging.verdicts import Reached
from breaker.rtb.replay.replayer import CallReplay
from breaker.rtb.show import shown
from breaker.rtb.show.digest import Digest, Spool
from breaker.rtb.show.pagestyle import COLUMNS, COMPARED, POLICY, RECORDED, SCRIPT, STYLE, fill_class
from breaker.rtb.show.timelinehead import anchor, session_list, settings_line, settings_table

#: Rows per block the browser may skip laying out while it is off screen.
BLOCK_ROWS = 200
#: Each agent's first calls that are rows whatever they are.
HEAD_ROWS = 500
#: The most call rows in one page; past them, calls are summed up in stretches.
PAGE_ROWS = 10_000
#: How each verdict is labelled on the page.
_LABELS = {
    "allowed": "ran",
    "denied": "denied",
    "asked": "asked",
    "not-counted": "not counted",
    "not-run": "not run",
}

Pair = tuple[CallReplay, CallReplay | None]


#: The start of the page's title: how ``rtb replay --html`` knows a page it wrote, the one file it
#: writes over (``breaker.rtb.cli``).
PAGE_TITLE = "rtb replay"


@dataclass
class _Stretch:
    """Calls summed up in one row: their numbers and how many of each verdict."""

    first: int = 0
    last: int = 0
    calls: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)

    def add(self, pair: Pair) -> None:
        call = pair[0]
        if not self.calls:
            self.first = call.number
        self.last = call.number
        self.calls += 1
        label = _LABELS.get(call.verdict, call.verdict)
        self.verdicts[label] = self.verdicts.get(label, 0) + 1


class TimelineReport:
    """The page; hand it to ``replayrun.run``, then ``write`` it.

    ``setting`` names the configuration in headings and ``source`` says where it came from;
    ``other``, when given, is the second configuration every call is also replayed under."""

    def __init__(
        self,
        config: BreakerConfig,
        *,
        setting: str = "defaults",
        source: str | None = None,
        other: BreakerConfig | None = None,
        other_setting: str = "defaults",
    ) -> None:
        self.config = config
        self.setting = setting
        self.source = source or setting
        self.other = other
        self.other_setting = other_setting
        self.rows = Spool()
        self.texts = Spool()
        self.texts.begin()
        self.folded = 0
        self.shown_rows = 0
        self.summed_up = 0
        #: The session's agents' tables, in the order their first calls came.
        self._tables: dict[str, _AgentTable] = {}

    # -- handed the calls -------------------------------------------------------------------

    def begin(self, digest: Digest) -> None:
        self._tables = {}

    def call(self, call: CallReplay, other: CallReplay | None) -> None:
        table = self._tables.get(call.agent)
        if table is None:
            table = self._tables[call.agent] = _AgentTable(self, call.agent)
        table.add((call, other))

    def end(self, digest: Digest) -> None:
        """The session's tables, agent after agent, into the page's spool."""
        self.rows.begin()
        for table in self._tables.values():
            for chunk in table.close():
                self.rows.write(chunk)
        self.rows.end(digest.session_id)
        self._tables = {}

    def fold(self, parts: list[tuple[str, str]]) -> int:
        """Keep a call's texts for the script to show when its ``details`` is opened; their index."""
        self.texts.write(("," if self.folded else "") + _json(parts))
        self.folded += 1
        return self.folded - 1

    def columns(self) -> str:
        columns = [*COLUMNS, *(COMPARED if self.other is not None else ()), RECORDED]
        return "<colgroup>" + "".join(f'<col class="{name}">' for name, _ in columns) + "</colgroup>"

    def columns_count(self) -> int:
        return len(COLUMNS) + (len(COMPARED) if self.other is not None else 0) + 1

    def head(self) -> str:
        return (
            "<thead><tr><th>#</th><th>tool</th><th>arguments</th>"
            f"{_heading(self.setting)}<th>window counts / caps</th>"
            + (f"<th></th>{_heading(self.other_setting)}<th>counts / caps</th>" if self.other else "")
            + "<th>recorded</th></tr></thead>"
        )

    # -- the page ----------------------------------------------------------------------------

    def write(self, out: TextIO, digests: Sequence[Digest], *, empty: int = 0) -> None:
        """The page: ``digests`` (sorted, none empty), ``empty`` sessions without a call left out."""
        count = len(digests)
        out.write(
            '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{PAGE_TITLE}: {count} session{'s' if count != 1 else ''}</title>"
            f"<style>{STYLE}</style></head><body>"
            "<header><h1>rtb replay</h1>"
            f"<div>{self._summary(digests, empty)}</div>"
            f'<div class="about">{_e(settings_line(self.config))}</div>'
            '<label><input type="checkbox" id="near"> only stops and the calls that led to them</label>'
            '<label><input type="checkbox" id="show-texts" checked> denial and notice texts</label>'
            "</header><main>"
        )
        out.write(settings_table(self.config, self.setting, self.other, self.other_setting))
        out.write(session_list(digests))
        if self.summed_up:
            out.write(
                f'<p class="note">{self.shown_rows:,} calls are rows, {self.summed_up:,} are summed up in '
                f"stretches: each agent's first {HEAD_ROWS:,} calls and each stop with the "
                f"{self.config.window} calls before it are rows, up to {PAGE_ROWS:,} in the page. "
                "<code>rtb replay --calls --session ID</code> lists every call around each stop.</p>"
            )
        for digest in digests:
            out.write(self._section(digest))
            self.rows.copy(digest.session_id, out)
            out.write("</section>")
        self.texts.end("texts")
        out.write('</main><script type="application/json" id="texts">[')
        self.texts.copy("texts", out)
        out.write(f"]</script><script>{SCRIPT}</script></body></html>\n")
        self.rows.close()
        self.texts.close()

    def _summary(self, digests: Sequence[Digest], empty: int) -> str:
        calls = sum(digest.calls for digest in digests)
        stops = sum(digest.stops for digest in digests)
        sessions = f"{len(digests)} session{'' if len(digests) == 1 else 's'}"
        text = f"{sessions}, {calls:,} calls, {stops:,} stopped under {_e(shown.inline(self.source))}"
        if self.other is not None:
            text += f", compared with {_e(self.other_setting)}"
        if empty:
            text += f"; {empty} empty session{'s' if empty != 1 else ''} (no tool call) not shown"
        return text

    def _section(self, digest: Digest) -> str:
        about = digest.about
        differs = (
            f", {digest.differs_from_other} verdicts differ from {_e(self.other_setting)}"
            if self.other
            else ""
        )
        return (
            f'<section class="session" id="{anchor(digest.session_id)}">'
            f"<h2>{_e(shown.started(about.started))} UTC \u00b7 {_e(shown.inline(digest.session_id))}</h2>"
            f'<p class="about">{_e(shown.inline(about.cwd or "-"))}'
            f" \u00b7 {_e(shown.inline(about.prompt or '-'))}"
            f" \u00b7 {digest.calls:,} calls, {digest.stops:,} stopped{differs}</p>"
        )


class _AgentTable:
    """One agent's calls in one session, as rows and stretches, spooled on their own (a session's
    agents' events come interleaved; each agent keeps one table)."""

    def __init__(self, page: TimelineReport, agent: str) -> None:
        self.page = page
        self.window = page.config.window
        self.spool = Spool()
        self.spool.begin()
        self.head_left = HEAD_ROWS
        self.ring: deque[Pair] = deque()
        self.stretch = _Stretch()
        self.block_rows = 0
        self.last_had_texts = False
        compared = " compared" if page.other is not None else ""
        self.spool.write(
            f"<h3>agent {_e(shown.inline(agent))}</h3>"
            f'<div class="calls{compared}"><table class="head">{page.columns()}{page.head()}</table>'
        )
        self._open_block()

    def add(self, pair: Pair) -> None:
        call, other = pair
        page = self.page
        interesting = call.stopped or (other is not None and (other.stopped or other.verdict != call.verdict))
        if page.shown_rows >= PAGE_ROWS or (interesting and page.shown_rows + len(self.ring) >= PAGE_ROWS):
            while self.ring:
                self._to_stretch(self.ring.popleft())
            self._to_stretch(pair)
        elif self.head_left > 0:
            self.head_left -= 1
            self._show(pair, near=interesting)
        elif interesting:
            self._close_stretch()
            while self.ring:
                self._show(self.ring.popleft(), near=True)
            self._show(pair, near=True)
        else:
            self.ring.append(pair)
            if len(self.ring) > self.window:
                self._to_stretch(self.ring.popleft())

    def close(self) -> Iterator[str]:
        """The table's HTML, finished (its spool is removed once read)."""
        while self.ring:
            self._to_stretch(self.ring.popleft())
        self._close_stretch()
        self._close_block()
        self.spool.write("</div>")
        self.spool.end("table")
        yield from self.spool.chunks("table")
        self.spool.close()

    def _to_stretch(self, pair: Pair) -> None:
        self.stretch.add(pair)
        self.page.summed_up += 1
        self.last_had_texts = False

    def _close_stretch(self) -> None:
        stretch = self.stretch
        if not stretch.calls:
            return
        verdicts = ", ".join(f"{count:,} {label}" for label, count in stretch.verdicts.items())
        span = f"#{stretch.first}"
        if stretch.last != stretch.first:
            span += f"\u2013#{stretch.last}"
        self._row(
            f'<tr class="gap" data-rows="{stretch.calls}"><td colspan="{self.page.columns_count()}">{span}: '
            f"{stretch.calls:,} call{'s' if stretch.calls != 1 else ''} ({verdicts}), summed up</td></tr>"
        )
        self.stretch = _Stretch()

    def _show(self, pair: Pair, *, near: bool) -> None:
        page = self.page
        page.shown_rows += 1
        call, other = pair
        parts = _texts(call)
        theirs = [] if other is None else _texts(other)
        if other is not None and theirs != parts:
            # Two settings' texts, one after the other: each under its setting's name.
            parts = [*_named(page.setting, parts), *_named(page.other_setting, theirs)]
        columns = page.columns_count()
        row = _row(call, other, near, columns, shut=self.last_had_texts and bool(parts))
        if parts:
            if self.last_had_texts:
                summary = f"<summary>text of #{call.number}</summary>"
                texts = f'<details data-t="{page.fold(parts)}">{summary}</details>'
            else:
                texts = "".join(f'<pre class="{kind}">{_e(text)}</pre>' for kind, text in parts)
            classes = "text near" if near else "text"
            row += f'<tr class="{classes}"><td colspan="{columns}">{texts}</td></tr>'
        self.last_had_texts = bool(parts)
        self._row(row)

    def _row(self, html_row: str) -> None:
        self.spool.write(html_row)
        self.block_rows += 1
        if self.block_rows >= BLOCK_ROWS:
            self._close_block()
            self._open_block()

    def _open_block(self) -> None:
        self.block_rows = 0
        self.spool.write(f'<div class="block"><table>{self.page.columns()}<tbody>')

    def _close_block(self) -> None:
        self.spool.write("</tbody></table></div>")


def _json(value: object) -> str:
    """JSON to put inside a ``<script>``: no "<" in it, so nothing in it can close the element."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _row(
    call: CallReplay,
    other: CallReplay | None,
    near: bool,
    columns: int,
    *,
    shut: bool,
) -> str:
    """One call's row (``shut``: its texts come folded)."""
    stopped = call.stopped or (other is not None and other.stopped)
    classes = ["call"]
    if stopped:
        classes.append("stop")
    if near:
        classes.append("near")
    if other is not None and other.verdict != call.verdict:
        classes.append("differs")
    arguments = shown.short_arguments(call.arguments, 1000)
    cut = f' title="{_e(arguments)}"' if len(arguments) > 160 else ""
    short = arguments[:159] + "\u2026" if cut else arguments
    cells = [
        f"<td>#{call.number}</td>",
        f"<td>{_e(shown.inline(call.tool, 40))}</td>",
        f'<td class="args"{cut}>{_e(short)}</td>',
        f"<td>{_verdict(call)}</td>{_strip(call.measured, near)}",
    ]
    if other is not None:
        cells.append(f'<td class="diff"></td><td>{_verdict(other)}</td>{_strip(other.measured, near)}')
    cells.append(f"<td>{_e(call.recorded)}</td>")
    row = (
        f'<tr class="{" ".join(classes)}" data-verdict="{_e(call.verdict)}" '
        f'data-call="{call.number}">{"".join(cells)}</tr>'
    )
    return row


def _verdict(call: CallReplay) -> str:
    kind = "notice" if call.verdict == "allowed" and call.notices else call.verdict
    label = "notice" if kind == "notice" else _LABELS.get(call.verdict, call.verdict)
    return f'<span class="v v-{kind}">{label}</span>'


def _strip(counts: Sequence[Reached], titled: bool) -> str:
    """The counts cell (``CallReplay.measured``): one small bar per count, filled count/limit and
    coloured by how near the limit; ``titled``: what each counted in the cell's title (for the
    calls that led to a stop). A count under another rule than a cap names that rule."""
    parts = []
    for count in counts:
        ratio = min(count.count / count.limit, 1.0) if count.limit > 0 else 1.0
        level = 3 if ratio >= 1.0 else 2 if ratio >= 0.75 else 1 if ratio >= 0.5 else 0
        label = count.kind if count.rule == "limits" else f"{count.rule}: {count.kind}"
        parts.append(
            f'<span class="k c{level}"><i class="{fill_class(ratio)}"></i>'
            f"{_e(label)} {_e(shown.figure(count))}</span>"
        )
    title = ""
    if titled and counts:
        keys = "\n".join(f"{shown.counted(count, 300)}: {shown.figure(count)}" for count in counts)
        title = f' title="{_e(keys)}"'
    return f'<td class="counts"{title}>{"".join(parts)}</td>'


def _heading(setting: str) -> str:
    """A setting's verdict column heading, its whole name in its title (the column is narrow)."""
    return f'<th title="{_e(shown.inline(setting, 200))}">{_e(shown.inline(setting, 24))}</th>'


def _named(setting: str, parts: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """A setting's texts of a call after its name (``under ./seed.yml:``); none: nothing."""
    return [("setting", f"under {shown.inline(setting, 200)}:"), *parts] if parts else []


def _texts(call: CallReplay) -> list[tuple[str, str]]:
    """The texts a call returned, as (kind, text): its denial or ask reason, its notices."""
    parts = [("denial", shown.block(call.message))] if call.message else []
    parts.extend(("notice", shown.block(text)) for text in call.notices)
    return parts
