"""The timeline page's style, its script and the content policy that allows exactly those two.

The page runs no script but ``SCRIPT`` and applies no style but ``STYLE``: its
Content-Security-Policy names each by its SHA-256 (no ``'unsafe-inline'``), and the page has no
``style`` attribute (bar fills and column widths are classes), no request to anywhere
(``default-src 'none'``), no base URL and no form target.
"""

from __future__ import annotations

import base64
import hashlib

#: A count bar's fill is drawn in steps of this many percent (one class each).
FILL_STEP = 5
#: The columns of a call table: (class, width), the second replay's three only when compared.
COLUMNS = (("c-n", "4em"), ("c-t", "7em"), ("c-a", "auto"), ("c-v", "7em"), ("c-k", "31em"))
COMPARED = (("c-d", "1.5em"), ("c-v", "7em"), ("c-k", "31em"))
RECORDED = ("c-r", "10em")

#: The least width of the arguments column (the others are fixed): past it the table scrolls.
ARGUMENTS_LEAST_EM = 24


def _least_em(columns: tuple[tuple[str, str], ...]) -> float:
    """The width a call table needs to give the arguments ``ARGUMENTS_LEAST_EM``, in em."""
    return ARGUMENTS_LEAST_EM + sum(float(width[:-2]) for _, width in columns if width.endswith("em"))


_LEAST = (
    f".calls table{{min-width:{_least_em((*COLUMNS, RECORDED)):g}em}}"
    f".calls.compared table{{min-width:{_least_em((*COLUMNS, *COMPARED, RECORDED)):g}em}}"
)
_FILLS = "".join(f".f{percent}{{--f:{percent}%}}" for percent in range(0, 101, FILL_STEP))
_WIDTHS = "".join(
    f"col.{name}{{width:{width}}}" for name, width in dict.fromkeys((*COLUMNS, *COMPARED, RECORDED))
)

STYLE = (
    """
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
.note{background:#fff8e1;padding:6px 10px;border-left:3px solid var(--warn);margin:12px 0}
table{border-collapse:collapse;width:100%}
.calls table{table-layout:fixed}
td{overflow:hidden;text-overflow:ellipsis}
th,td{text-align:left;padding:2px 6px;border-bottom:1px solid var(--line);vertical-align:top;
white-space:nowrap}
th{font-weight:600;color:var(--muted);font-size:12px;overflow:hidden;text-overflow:ellipsis}
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
tr.gap td{color:var(--muted);background:#f9fafb;font-style:italic;white-space:normal}
td.counts{white-space:normal}
.k{display:inline-block;white-space:nowrap;margin-right:7px;font-size:11px;color:var(--muted)}
.k i{display:inline-block;width:28px;height:8px;margin-right:3px;border-radius:2px;vertical-align:middle;
background:linear-gradient(90deg,var(--c) var(--f),#eef0f3 0)}
.c0{--c:#9ccc65}.c1{--c:#fbc02d}.c2{--c:var(--warn)}.c3{--c:var(--stop)}
summary{cursor:pointer;color:var(--muted)}
tr.text td{white-space:normal;padding:0 6px 8px 28px}
pre{margin:4px 0;white-space:pre-wrap;word-break:break-word;
font:12px/1.35 ui-monospace,Menlo,Consolas,monospace;background:#fafafa;
border-left:3px solid var(--stop);padding:6px 8px;max-width:1100px}
pre.notice{border-left-color:var(--warn)}
pre.setting{background:none;border-left:0;padding:6px 0 0;font:600 12px/1.35 system-ui,sans-serif}
.settings td,.settings th{white-space:normal}
.settings td.differs{background:#fff8e1}
body.near-only tr.call:not(.near),body.near-only tr.text:not(.near){display:none}
body.no-texts tr.text{display:none}
nav table td{white-space:normal}
"""
    + _FILLS
    + _WIDTHS
    + _LEAST
    + "\n"
)

SCRIPT = """
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
document.getElementById('near').addEventListener('change', function (e) {
  document.body.classList.toggle('near-only', e.target.checked);
});
document.getElementById('show-texts').addEventListener('change', function (e) {
  document.body.classList.toggle('no-texts', !e.target.checked);
});
"""


def _digest(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


#: The page's Content-Security-Policy: nothing from anywhere, only this style and this script.
POLICY = (
    f"default-src 'none'; style-src {_digest(STYLE)}; script-src {_digest(SCRIPT)}; "
    "base-uri 'none'; form-action 'none'"
)


def fill_class(ratio: float) -> str:
    """The class of a bar filled ``ratio`` (0 to 1) of the way, to the nearest step."""
    return f"f{round(min(max(ratio, 0.0), 1.0) * 100 / FILL_STEP) * FILL_STEP}"
