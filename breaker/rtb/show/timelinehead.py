"""The top of the timeline page: the settings a verdict depends on (one line, and in full beside
a second configuration's), and the list of the sessions with their counts."""

from __future__ import annotations

import html
from collections.abc import Sequence

from breaker.core.config import BreakerConfig
from breaker.core.wording.messages import format_number
from breaker.rtb.show import shown
from breaker.rtb.show.digest import Digest

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


def settings_line(config: BreakerConfig) -> str:
    caps = ", ".join(f"{kind} {_setting_text(cap)}" for kind, cap in config.limits.items() if cap is not None)
    line = f"window {config.window} \u00b7 caps: {caps or 'none'} \u00b7 localHosts {config.localHosts}"
    if config.onLimit != "deny":
        line += f" \u00b7 onLimit {config.onLimit}"
    if config.identity != "exact":
        line += f" \u00b7 identity {config.identity}"
    return line


def settings_table(
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


def session_list(replays: Sequence[Digest]) -> str:
    rows = "".join(
        f"<tr><td>{_e(shown.started(r.about.started))}</td>"
        f'<td><a href="#{anchor(r.session_id)}">{_e(shown.short_id(r.session_id))}</a></td>'
        f"<td>{r.calls:,}</td><td>{r.stops:,}</td>"
        f"<td>{_e(shown.inline(r.about.cwd or '-', 80))}</td>"
        f"<td>{_e(shown.inline(r.about.prompt or '-', 120))}</td></tr>"
        for r in replays
    )
    return (
        "<nav><h2>Sessions</h2><table><tr><th>started (UTC)</th><th>session</th><th>calls</th>"
        f"<th>stopped</th><th>directory</th><th>first prompt</th></tr>{rows}</table></nav>"
    )


def anchor(session_id: str) -> str:
    return "s-" + "".join(char if char.isalnum() or char in "-_" else "_" for char in session_id)


def _e(text: str) -> str:
    return html.escape(text, quote=True)
