"""``rtb replay --html FILE``: one self-contained HTML page with a timeline of every call.

Per session and per agent, one table row per call: its number, tool and arguments in a few words,
the verdict (ran, denied, asked, notice, not counted, not run), what the recorded run did, and a
bar per capped fingerprint of the call showing how many entries of the agent's window hold it
against its cap once the call was decided, so the approach to a stop reads down the column. A
stopped call carries the full text the model would have read; the settings are listed at the top.
Given a second replay of the same sessions (``--config`` beside the defaults), each row shows both
verdicts and both count strips, and the rows where they differ are marked.

The page needs nothing but itself: inline CSS, a few lines of inline JavaScript (two toggles), no
font, image, script or request from anywhere (a Content-Security-Policy says so to the browser).
Every text from a log is shown through ``shown`` (the denial's redaction) and escaped. Rows are
grouped in blocks of ``BLOCK_ROWS`` that the browser lays out only when they scroll into view
(``content-visibility``), so a 10,000-call session opens as fast as a short one.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence

from breaker.core.config import BreakerConfig, load_config
from breaker.core.judging.verdicts import Hit
from breaker.core.wording.messages import format_number
from breaker.rtb import shown
from breaker.rtb.replay import CallReplay, SessionReplay

#: Rows per block the browser may skip laying out while it is off screen.
BLOCK_ROWS = 200
#: An agent with more calls than this gets its first block in the page and the others as data,
#: each turned into rows when it comes near the screen: a 10,000-call session opens in a second
#: or two instead of building 10,000 rows first.
LAZY_FROM = 1000
#: The height a lazy block is given until its rows are made (about one row of the table).
ROW_PIXELS = 21
#: The settings a verdict depends on, in the order the page lists them.
_SETTINGS = (
    "window",
    "limits",
    "localHosts",
    "onLimit",
    "identity",
    "warnAt",
    "summarizeAt",
    "failWarnAt",
    "failLimit",
    "sameResultLimit",
    "includeLocal",
    "include",
    "exclude",
    "ignoreArgs",
    "hostAliases",
    "maxAgents",
    "previewChars",
    "resultPreviewChars",
)
#: How each verdict is labelled on the page.
_LABELS = {
    "allowed": "ran",
    "denied": "denied",
    "asked": "asked",
    "not-counted": "not counted",
    "not-run": "not run",
}

_STYLE = """
:root{--ok:#2e7d32;--warn:#ef8f00;--stop:#c62828;--muted:#6b7280;--line:#e5e7eb;--bg:#fff;--fg:#111827}
*{box-sizing:border-box}
body{margin:0;font:13px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);
background:var(--bg)}
header{padding:12px 20px;border-bottom:1px solid var(--line);position:sticky;top:0;background:#f9fafb;
z-index:2}
header h1{font-size:16px;margin:0 0 4px}
header label{margin-right:16px;color:var(--muted)}
main{padding:0 20px 40px}
h2{font-size:15px;margin:28px 0 2px}
h3{font-size:13px;margin:14px 0 4px;color:var(--muted)}
.about{color:var(--muted);margin:0 0 6px}
table{border-collapse:collapse;width:100%}
.calls table{table-layout:fixed}
td{overflow:hidden;text-overflow:ellipsis}
th,td{text-align:left;padding:2px 6px;border-bottom:1px solid var(--line);vertical-align:top;
white-space:nowrap}
th{font-weight:600;color:var(--muted);font-size:12px}
td.args{max-width:520px;overflow:hidden;text-overflow:ellipsis;font-family:ui-monospace,Menlo,Consolas,monospace}
.block{content-visibility:auto;contain-intrinsic-size:auto 4400px}
table.head{margin-bottom:-1px}
.v{display:inline-block;min-width:64px;padding:0 6px;border-radius:8px;font-size:12px;text-align:center}
.v-allowed{background:#e8f5e9;color:var(--ok)}
.v-notice{background:#fff4e0;color:#9a5b00}
.v-denied{background:var(--stop);color:#fff}
.v-asked{background:var(--warn);color:#fff}
.v-not-counted,.v-not-run{background:#f3f4f6;color:var(--muted)}
tr.stop>td:first-child{box-shadow:inset 4px 0 var(--stop)}
tr.differs>td{background:#fff8e1}
tr.differs>td.diff::before{content:"\\2260";color:var(--stop);font-weight:700}
.k{margin-right:7px;font-size:11px;color:var(--muted)}
.k i{display:inline-block;width:28px;height:8px;margin-right:3px;border-radius:2px;vertical-align:middle;
background:linear-gradient(90deg,var(--c) var(--f),#eef0f3 0)}
.c0{--c:#9ccc65}.c1{--c:#fbc02d}.c2{--c:var(--warn)}.c3{--c:var(--stop)}
summary{cursor:pointer;color:var(--muted)}
tr.text td{white-space:normal;padding:0 6px 8px 28px}
pre{margin:4px 0;white-space:pre-wrap;word-break:break-word;
font:12px/1.35 ui-monospace,Menlo,Consolas,monospace;background:#fafafa;
border-left:3px solid var(--stop);padding:6px 8px;max-width:1100px}
pre.notice{border-left-color:var(--warn)}
.settings td,.settings th{white-space:normal}
.settings td.differs{background:#fff8e1}
body.near-only tr.call:not(.near),body.near-only tr.text:not(.near){display:none}
body.no-texts tr.text{display:none}
nav table td{white-space:normal}
"""

_SCRIPT = """
var texts = null;
document.addEventListener('toggle', function (e) {
  var shut = e.target;
  if (!shut.open || shut.dataset.t === undefined || shut.dataset.filled) return;
  if (texts === null) texts = JSON.parse(document.getElementById('texts').textContent);
  texts[Number(shut.dataset.t)].forEach(function (part) {
    var pre = document.createElement('pre');
    pre.className = part[0];
    pre.textContent = part[1];
    shut.appendChild(pre);
  });
  shut.dataset.filled = '1';
}, true);
var blocks = null;
var watcher = new IntersectionObserver(function (entries) {
  entries.forEach(function (entry) {
    if (!entry.isIntersecting) return;
    var body = entry.target;
    if (blocks === null) blocks = JSON.parse(document.getElementById('blocks').textContent);
    body.innerHTML = blocks[Number(body.dataset.b)];
    body.className = 'block';
    body.style.height = '';
    watcher.unobserve(body);
  });
}, {rootMargin: '1500px 0px'});
document.querySelectorAll('.lazy').forEach(function (body) { watcher.observe(body); });
document.getElementById('near').addEventListener('change', function (e) {
  document.body.classList.toggle('near-only', e.target.checked);
});
document.getElementById('show-texts').addEventListener('change', function (e) {
  document.body.classList.toggle('no-texts', !e.target.checked);
});
"""


def timeline_page(
    replays: Sequence[SessionReplay],
    config: BreakerConfig,
    *,
    setting: str = "defaults",
    other: Sequence[SessionReplay] | None = None,
    other_setting: str = "defaults",
    empty: int = 0,
    source: str | None = None,
) -> str:
    """The whole page. ``setting`` names the configuration in headings and ``source`` says where
    it came from (default: ``setting``); ``other``, when given, is the same sessions replayed under
    another setting (same order); ``empty`` is how many sessions without a call were left out."""
    paired = list(zip(replays, other, strict=True)) if other is not None else [(r, None) for r in replays]
    other_config = load_config(None) if other is not None else None
    out = [
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">',
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>rtb replay: {len(replays)} session{'s' if len(replays) != 1 else ''}</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<header><h1>rtb replay</h1>",
        f"<div>{_summary(replays, empty, source or setting, other is not None, other_setting)}</div>",
        f'<div class="about">{_e(_settings_line(config))}</div>',
        '<label><input type="checkbox" id="near"> only stops and the calls that led to them</label>',
        '<label><input type="checkbox" id="show-texts" checked> denial and notice texts</label>',
        "</header><main>",
        _settings_table(config, setting, other_config, other_setting),
        _session_list(replays),
    ]
    folded: list[list[tuple[str, str]]] = []
    blocks: list[str] = []
    for replay, against in paired:
        out.append(_session(replay, against, config, setting, other_setting, folded, blocks))
    out.append(f'</main><script type="application/json" id="texts">{_json(folded)}</script>')
    out.append(f'<script type="application/json" id="blocks">{_json(blocks)}</script>')
    out.append(f"<script>{_SCRIPT}</script></body></html>\n")
    return "".join(out)


def _json(value: object) -> str:
    """JSON to put inside a ``<script>``: no "<" in it, so nothing in it can close the element."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _summary(
    replays: Sequence[SessionReplay], empty: int, setting: str, compared: bool, other_setting: str
) -> str:
    calls = sum(len(replay.calls) for replay in replays)
    stops = sum(len(replay.stops) for replay in replays)
    sessions = f"{len(replays)} session{'' if len(replays) == 1 else 's'}"
    text = f"{sessions}, {calls} calls, {stops} stopped under {_e(shown.inline(setting))}"
    if compared:
        text += f", compared with {_e(other_setting)}"
    if empty:
        text += f"; {empty} empty session{'s' if empty != 1 else ''} (no tool call) not shown"
    return text


def _settings_line(config: BreakerConfig) -> str:
    caps = ", ".join(f"{kind} {_setting_text(cap)}" for kind, cap in config.limits.items() if cap is not None)
    line = f"window {config.window} \u00b7 caps: {caps or 'none'} \u00b7 localHosts {config.localHosts}"
    if config.onLimit != "deny":
        line += f" \u00b7 onLimit {config.onLimit}"
    if config.identity != "exact":
        line += f" \u00b7 identity {config.identity}"
    return line


def _settings_table(
    config: BreakerConfig, setting: str, other: BreakerConfig | None, other_setting: str
) -> str:
    values = config.values()
    others = other.values() if other is not None else None
    head = f"<th>{_e(shown.inline(setting))}</th>" + (f"<th>{_e(other_setting)}</th>" if others else "")
    rows = []
    for key in _SETTINGS:
        mine = _setting_text(values.get(key))
        cells = f"<td>{_e(mine)}</td>"
        if others is not None:
            theirs = _setting_text(others.get(key))
            mark = ' class="differs"' if theirs != mine else ""
            cells = f"<td{mark}>{_e(mine)}</td><td{mark}>{_e(theirs)}</td>"
        rows.append(f"<tr><th>{key}</th>{cells}</tr>")
    return (
        '<details class="settings"><summary>settings used</summary><table class="settings">'
        f"<tr><th>key</th>{head}</tr>{''.join(rows)}</table></details>"
    )


def _setting_text(value: object) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{key}: {_setting_text(item)}" for key, item in value.items()) or "-"
    if isinstance(value, list | tuple):
        return ", ".join(_setting_text(item) for item in value) or "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return format_number(value)
    return "-" if value is None else shown.inline(str(value))


def _session_list(replays: Sequence[SessionReplay]) -> str:
    rows = "".join(
        f"<tr><td>{_e(shown.started(r.about.started))}</td>"
        f'<td><a href="#{_anchor(r.session_id)}">{_e(shown.short_id(r.session_id))}</a></td>'
        f"<td>{len(r.calls)}</td><td>{len(r.stops)}</td>"
        f"<td>{_e(shown.inline(r.about.cwd or '-', 80))}</td>"
        f"<td>{_e(shown.inline(r.about.prompt or '-', 120))}</td></tr>"
        for r in replays
    )
    return (
        "<nav><h2>Sessions</h2><table><tr><th>started (UTC)</th><th>session</th><th>calls</th>"
        f"<th>stopped</th><th>directory</th><th>first prompt</th></tr>{rows}</table></nav>"
    )


def _anchor(session_id: str) -> str:
    return "s-" + "".join(char if char.isalnum() or char in "-_" else "_" for char in session_id)


def _session(
    replay: SessionReplay,
    against: SessionReplay | None,
    config: BreakerConfig,
    setting: str,
    other_setting: str,
    folded: list[list[tuple[str, str]]],
    blocks: list[str],
) -> str:
    about = replay.about
    differs = 0
    if against is not None:
        differs = sum(1 for a, b in zip(replay.calls, against.calls, strict=True) if a.verdict != b.verdict)
    out = [
        f'<section class="session" id="{_anchor(replay.session_id)}">',
        f"<h2>{_e(shown.started(about.started))} UTC \u00b7 {_e(shown.inline(replay.session_id))}</h2>",
        f'<p class="about">{_e(shown.inline(about.cwd or "-"))}'
        f" \u00b7 {_e(shown.inline(about.prompt or '-'))}"
        f" \u00b7 {len(replay.calls)} calls, {len(replay.stops)} stopped"
        + (f", {differs} verdicts differ from {_e(other_setting)}" if against is not None else "")
        + "</p>",
    ]
    agents = list(dict.fromkeys(call.agent for call in replay.calls))
    partners: Sequence[CallReplay | None] = (
        against.calls if against is not None else [None] * len(replay.calls)
    )
    for agent in agents:
        pairs = [
            (call, other) for call, other in zip(replay.calls, partners, strict=True) if call.agent == agent
        ]
        near = _near([call for call, _ in pairs], config.window)
        if against is not None:
            near |= _near([other for _, other in pairs if other is not None], config.window)
        out.append(f"<h3>agent {_e(shown.inline(agent))} \u00b7 {len(pairs)} calls</h3>")
        out.append(
            _calls_table(pairs, near, setting, other_setting, folded, blocks, compared=against is not None)
        )
    out.append("</section>")
    return "".join(out)


def _near(calls: Sequence[CallReplay], window: int) -> set[int]:
    """Indexes of the stops and of the ``window`` calls before each (those that filled it)."""
    near: set[int] = set()
    for index, call in enumerate(calls):
        if call.stopped:
            near.update(range(max(0, index - window), index + 1))
    return near


def _calls_table(
    pairs: Sequence[tuple[CallReplay, CallReplay | None]],
    near: set[int],
    setting: str,
    other_setting: str,
    folded: list[list[tuple[str, str]]],
    blocks: list[str],
    *,
    compared: bool,
) -> str:
    """The calls of one agent; the texts of a call that follows one with texts are kept in
    ``folded`` and shown when its ``details`` is opened, so a run of denials costs one text; past
    ``LAZY_FROM`` calls, every block but the first is kept in ``blocks`` until it is needed."""
    columns = 6 + (3 if compared else 0)
    head = (
        "<thead><tr><th>#</th><th>tool</th><th>arguments</th>"
        f"<th>{_e(shown.inline(setting, 24))}</th><th>window counts / caps</th>"
        + (f"<th></th><th>{_e(other_setting)}</th><th>counts / caps</th>" if compared else "")
        + "<th>recorded</th></tr></thead>"
    )
    widths = ["4em", "7em", "auto", "7em", "31em", *(["1.5em", "7em", "31em"] if compared else []), "10em"]
    cols = "<colgroup>" + "".join(f'<col style="width:{width}">' for width in widths) + "</colgroup>"
    out = [f'<div class="calls"><table class="head">{cols}{head}</table>']
    lazy = len(pairs) > LAZY_FROM
    for start in range(0, len(pairs), BLOCK_ROWS):
        rows = []
        for index in range(start, min(start + BLOCK_ROWS, len(pairs))):
            call, other = pairs[index]
            shut = folded if index > 0 and _has_texts(*pairs[index - 1]) else None
            rows.append(_row(call, other, index in near, columns, shut))
        table = f"<table>{cols}<tbody>{''.join(rows)}</tbody></table>"
        if lazy and start > 0:
            blocks.append(table)
            out.append(
                f'<div class="block lazy" data-b="{len(blocks) - 1}" data-rows="{len(rows)}"'
                f' style="height:{len(rows) * ROW_PIXELS}px"></div>'
            )
        else:
            out.append(f'<div class="block" data-rows="{len(rows)}">{table}</div>')
    out.append("</div>")
    return "".join(out)


def _row(
    call: CallReplay,
    other: CallReplay | None,
    near: bool,
    columns: int,
    folded: list[list[tuple[str, str]]] | None,
) -> str:
    """One call's row, and below it the texts it returned (into ``folded`` when given: shut)."""
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
        f"<td>{_verdict(call)}</td>{_strip(call.counts, near)}",
    ]
    if other is not None:
        cells.append(f'<td class="diff"></td><td>{_verdict(other)}</td>{_strip(other.counts, near)}')
    cells.append(f"<td>{_e(call.recorded)}</td>")
    row = (
        f'<tr class="{" ".join(classes)}" data-verdict="{_e(call.verdict)}" '
        f'data-call="{call.number}">{"".join(cells)}</tr>'
    )
    parts = _texts(call)
    if other is not None and other.message != call.message:
        parts += _texts(other)
    if not parts:
        return row
    if folded is None:
        shown_texts = "".join(f'<pre class="{kind}">{_e(text)}</pre>' for kind, text in parts)
    else:
        folded.append(parts)
        shown_texts = (
            f'<details data-t="{len(folded) - 1}"><summary>text of #{call.number}</summary></details>'
        )
    return row + f'<tr class="text{" near" if near else ""}"><td colspan="{columns}">{shown_texts}</td></tr>'


def _has_texts(call: CallReplay, other: CallReplay | None) -> bool:
    return bool(call.message or call.notices or (other is not None and (other.message or other.notices)))


def _verdict(call: CallReplay) -> str:
    kind = "notice" if call.verdict == "allowed" and call.notices else call.verdict
    label = "notice" if kind == "notice" else _LABELS.get(call.verdict, call.verdict)
    return f'<span class="v v-{kind}">{label}</span>'


def _strip(counts: Sequence[Hit], titled: bool) -> str:
    """The counts cell: one small bar per capped fingerprint, filled count/cap and coloured by how
    near the cap; ``titled``: the keys in the cell's title (for the calls that led to a stop)."""
    parts = []
    for hit in counts:
        ratio = min(hit.count / hit.cap, 1.0) if hit.cap > 0 else 1.0
        level = 3 if ratio >= 1.0 else 2 if ratio >= 0.75 else 1 if ratio >= 0.5 else 0
        parts.append(
            f'<span class="k c{level}"><i style="--f:{round(ratio * 100)}%"></i>'
            f"{_e(hit.fingerprint.kind)} {hit.count}/{_e(format_number(hit.cap))}</span>"
        )
    title = ""
    if titled and counts:
        keys = "\n".join(
            f"{shown.inline(hit.fingerprint.key, 300)}: {hit.count}/{format_number(hit.cap)}"
            for hit in counts
        )
        title = f' title="{_e(keys)}"'
    return f'<td class="counts"{title}>{"".join(parts)}</td>'


def _texts(call: CallReplay) -> list[tuple[str, str]]:
    """The texts a call returned, as (kind, text): its denial or ask reason, its notices."""
    parts = [("denial", shown.block(call.message))] if call.message else []
    parts.extend(("notice", shown.block(text)) for text in call.notices)
    return parts
