"""`rtb replay` as text or markdown, written as the calls go by.

First a line naming the configuration, then one line per session (sorted by start), then each
session with a stop (or every listed session, with ``--calls``) in detail: its facts and a row per
listed call. The rows are spooled as they are decided and the table is fitted to ``WIDTH`` from
the spool, so a session of any length costs the same memory.
"""

from __future__ import annotations

import json
import textwrap
from collections import deque
from collections.abc import Iterator, Sequence
from typing import TextIO

from breaker.rtb.replay.replayer import CallReplay
from breaker.rtb.show import shown
from breaker.rtb.show.digest import Digest, Spool
from breaker.rtb.show.tables import WIDTH, fitted_line, fitted_table, fitted_widths, markdown_table

#: How a recorded outcome reads in the text report's session lines.
_RECORDED_WORDS = {
    "approval-required": "approval refused",
    "not-dispatched": "not dispatched",
    "no-result": "no result",
}
#: The most of a fingerprint key a table cell starts from (it is then fitted to the width).
INLINE_KEY = 200
#: A row standing for calls left out.
_GAP = "\u2026"
_HEADER = ["CALL", "AGENT", "TOOL", "VERDICT", "COUNT", "RECORDED", "ON", "ARGUMENTS"]
#: After a stop, how many calls of its agent ``--calls`` lists.
_AFTER = 2
#: What the ``COUNT`` column's figures mean, said under the session tables.
LEGEND = (
    "COUNT: the count that stopped a call, against its limit, and ON what it counted: for a cap, "
    "how many calls in the agent's window share the fingerprint ON, this one included (5/5, 6/5); "
    "for failLimit, the failures in a row of ON (3/3); for sameResultLimit, the count of the rule "
    "ON names (same: the same result; failed: the same error; cycle: its rounds; reworded: "
    "identical answers on one target; variants: one tool's calls failing alike) against the "
    "limit it stopped at, up to 2 below "
    "sameResultLimit for an answer that comes back the same every time (an error, a settled "
    "answer, no output). +2: two more fingerprints reached that limit too. A call "
    "that ran (--calls): its fingerprint nearest to its cap, as the window stood after it. "
    "-: no capped fingerprint."
)


class TextReport:
    """The text (or markdown) report; hand it to ``replayrun.run``, then ``write`` it.

    Lists each session's stops; with ``calls``, every call from ``around`` calls before a stop of
    its agent to two after (all of a session without a stop); ``show_denials``: the texts too."""

    def __init__(
        self,
        *,
        markdown: bool,
        show_denials: bool = False,
        calls: bool = False,
        around: int = 12,
        config: str = "defaults",
        config_short: str = "defaults",
    ) -> None:
        self.markdown = markdown
        self.show_denials = show_denials
        self.calls = calls
        self.around = around
        self.config = config
        self.config_short = config_short
        self.rows = Spool()
        self.denials = Spool()
        #: Per session (with ``calls``): one byte per call, 1 where it is listed.
        self.kept: dict[str, bytearray] = {}
        self._kept = bytearray()
        self._recent: dict[str, deque[int]] = {}
        self._after: dict[str, int] = {}
        #: The sessions whose texts (``show_denials``) hold a notice: listed, stopped or not.
        self.noticed: set[str] = set()
        self._noticed = False

    def begin(self, digest: Digest) -> None:
        self.rows.begin()
        self.denials.begin()
        self._kept = bytearray()
        self._recent = {}
        self._after = {}
        self._noticed = False

    def call(self, call: CallReplay, other: CallReplay | None) -> None:
        if self.show_denials and (call.stopped or call.notices):
            self.denials.write(_denial_text(call, markdown=self.markdown))
            self._noticed = self._noticed or bool(call.notices)
        if self.calls:
            self._mark(call)
        elif not call.stopped:
            return
        self.rows.write(json.dumps(_cells(call)) + "\n")

    def _mark(self, call: CallReplay) -> None:
        index = len(self._kept)
        self._kept.append(0)
        recent = self._recent.setdefault(call.agent, deque(maxlen=max(self.around, 0) or 1))
        if call.stopped:
            for earlier in recent if self.around > 0 else ():
                self._kept[earlier] = 1
            self._kept[index] = 1
            self._after[call.agent] = _AFTER
        elif self._after.get(call.agent, 0) > 0:
            self._kept[index] = 1
            self._after[call.agent] -= 1
        recent.append(index)

    def end(self, digest: Digest) -> None:
        self.rows.end(digest.session_id)
        self.denials.end(digest.session_id)
        if self._noticed:
            self.noticed.add(digest.session_id)
        if self.calls:
            self.kept[digest.session_id] = self._kept

    def write(self, out: TextIO, digests: Sequence[Digest], *, empty: int) -> None:
        """The report: ``digests`` sorted and without the ``empty`` sessions (counted in the footer)."""
        table = markdown_table if self.markdown else fitted_table
        header = ["STARTED (UTC)", "SESSION", "CALLS", "STOPPED", "DIFFERS", "DIRECTORY \u00b7 FIRST PROMPT"]
        rows = [
            [
                shown.started(digest.about.started),
                shown.short_id(digest.session_id),
                str(digest.calls),
                "-" if digest.first_stop is None else f"{digest.stops} from #{digest.first_stop}",
                str(digest.differences),
                _where(digest),
            ]
            for digest in digests
        ]
        out.write(f"config: {shown.inline(self.config)}\n\n")
        out.write(table(header, rows, flex={5: 24}))
        detailed = [
            digest
            for digest in digests
            if digest.stops or (self.calls and digest.calls) or digest.session_id in self.noticed
        ]
        for digest in detailed:
            self._session(out, digest)
        if detailed:
            out.write("\n" + (LEGEND if self.markdown else textwrap.fill(LEGEND, WIDTH)) + "\n")
        total_calls = sum(digest.calls for digest in digests)
        total_stops = sum(digest.stops for digest in digests)
        footer = (
            f"\n{_plural(len(digests), 'session')}, {_plural(total_calls, 'call')}, "
            f"{total_stops} stopped under {shown.inline(self.config_short)}"
        )
        if empty:
            footer += f"; {empty} empty session{'s' if empty != 1 else ''} (no tool call) not listed"
        out.write(footer + "\n")
        self.rows.close()
        self.denials.close()

    def _session(self, out: TextIO, digest: Digest) -> None:
        about = digest.about
        title = shown.inline(digest.session_id)
        if about.started is not None:
            title = f"{shown.started(about.started)} UTC  {title}"
        recorded = ", ".join(
            f"{count} {_RECORDED_WORDS.get(outcome, outcome)}" for outcome, count in digest.recorded.items()
        )
        differs = _plural(digest.differences, "call")
        facts = [
            ("directory", shown.inline(about.cwd) if about.cwd else "-"),
            ("prompt", shown.inline(about.prompt) if about.prompt else "-"),
            ("calls", f"{digest.calls}, recorded: {recorded or '-'}"),
            (
                "replayed",
                f"{_stops_summary(digest)}; differs from the recording on {differs}",
            ),
        ]
        several = len(digest.agents) > 1
        header = [name for name in _HEADER if several or name != "AGENT"]
        if self.markdown:
            out.write(f"\n### {title}\n\n" + "".join(f"- {name}: {value}\n" for name, value in facts) + "\n")
            out.write(markdown_table(header, []))
            for row in self._listed(digest, several):
                out.write(markdown_table([], [row]))
        else:
            out.write(f"\n{title}\n")
            out.write("".join(f"  {name:<12} {shown.inline(value, WIDTH - 15)}\n" for name, value in facts))
            flex = {5 + several: 40 - 10 * several, 6 + several: 16}  # AGENT takes 10 of ON's
            lengths = [len(name) for name in header]
            for row in self._listed(digest, several):
                lengths = [max(length, len(cell)) for length, cell in zip(lengths, row, strict=True)]
            widths = fitted_widths(lengths, flex=flex, indent="  ")
            out.write(fitted_line(header, widths, indent="  "))
            for row in self._listed(digest, several):
                out.write(fitted_line(row, widths, indent="  "))
        self.denials.copy(digest.session_id, out)

    def _listed(self, digest: Digest, several: bool) -> Iterator[list[str]]:
        """The session's listed rows in order, a ``…`` row where calls were left out."""
        kept = self.kept.get(digest.session_id)
        every = kept is None or not digest.stops
        gap = False
        for index, line in enumerate(self.rows.lines(digest.session_id)):
            if not every and kept is not None and not kept[index]:
                if not gap:
                    yield [_GAP, *([""] if several else []), "", "", "", "", "", ""]
                gap = True
                continue
            gap = False
            row: list[str] = json.loads(line)
            yield row if several else [row[0], *row[2:]]
        if gap:
            return


def _cells(call: CallReplay) -> list[str]:
    count, key = _on(call)
    return [
        f"#{call.number}",
        shown.short_id(call.agent),
        shown.inline(call.tool, 16),
        call.verdict,
        count,
        call.recorded,
        key,
        shown.short_arguments(call.arguments),
    ]


def _on(call: CallReplay) -> tuple[str, str]:
    """A stopped call's first limit reached (``+N``: more fingerprints reached that one too), any
    other call's fingerprint nearest to its cap: ``count/limit`` and what it counted."""
    measured = call.measured
    if not measured:
        return "-", "-"
    if call.stopped:
        first = measured[0]
        others = sum(1 for count in measured[1:] if count.rule == first.rule)
    else:
        first, others = max(measured, key=lambda count: count.count / count.limit if count.limit else 0.0), 0
    more = f" +{others}" if others else ""
    return shown.figure(first) + more, shown.counted(first, INLINE_KEY)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _where(digest: Digest) -> str:
    """The working directory's last folders and the first prompt line, for a summary row."""
    about = digest.about
    cwd = shown.inline(about.cwd) if about.cwd else ""
    if len(cwd) > 28:
        tail = cwd[-27:]
        cwd = "\u2026" + (tail[tail.index("/") :] if "/" in tail else tail)
    parts = [cwd, shown.inline(about.prompt) if about.prompt else ""]
    return " \u00b7 ".join(part for part in parts if part) or "-"


def _stops_summary(digest: Digest) -> str:
    if digest.first_stop is None:
        return "no stop"
    kinds = " + ".join(sorted(digest.stop_kinds))
    return f"{digest.stops} {kinds}, first at #{digest.first_stop}"


def _denial_text(call: CallReplay, *, markdown: bool) -> str:
    """What the model read of a call the breaker stopped or gave a notice: its denial or ask
    reason, then its notices."""
    verdict = "notice" if call.verdict == "allowed" else call.verdict
    heading = f"#{call.number} {shown.inline(call.tool)} ({shown.inline(call.call_id)}) {verdict}:"
    message = "\n".join(shown.block(text) for text in (call.message, *call.notices) if text)
    if markdown:
        fenced = message.replace("```", "`\u02cb`")
        return f"\n{heading}\n\n```text\n{fenced}\n```\n"
    body = "\n".join(
        wrapped
        for line in message.splitlines()
        for wrapped in textwrap.wrap(
            line, WIDTH, initial_indent="    ", subsequent_indent="      ", break_on_hyphens=False
        )
        or [""]
    )
    return f"\n  {shown.inline(heading, WIDTH - 2)}\n{body}\n"
