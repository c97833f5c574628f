"""`rtb replay --format json`: every session and every call, written as the calls go by.

Each call's object is written to a spool as it is decided; the document is put together at the
end, the sessions sorted by start, each with its counts before its calls. Every text in it is
redacted (``shown``); caps and counts are integers. A call's ``counts`` are what every view shows:
a stopped call's limits reached, each with its own count; another call's window counts.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TextIO

from breaker.core.judging.verdicts import Hit, Reached
from breaker.rtb.read.events import ReadProblem
from breaker.rtb.replay.replayer import CallReplay
from breaker.rtb.show import shown
from breaker.rtb.show.digest import Digest, Spool


class JsonReport:
    """The JSON report; hand it to ``replayrun.run``, then ``write`` it."""

    def __init__(self) -> None:
        self.spool = Spool()
        self._first = True

    def begin(self, digest: Digest) -> None:
        self.spool.begin()
        self._first = True

    def call(self, call: CallReplay, other: CallReplay | None) -> None:
        self.spool.write(("\n      " if self._first else ",\n      ") + json.dumps(call_json(call)))
        self._first = False

    def end(self, digest: Digest) -> None:
        self.spool.end(digest.session_id)

    def write(
        self,
        out: TextIO,
        digests: Sequence[Digest],
        *,
        config: dict[str, Any],
        empty: int,
        problems: Sequence[ReadProblem],
    ) -> None:
        """The document: ``config``, the sessions (``digests``, sorted, none empty), ``empty``
        (how many sessions had no call) and the problems."""
        out.write('{\n  "config": ' + json.dumps(config) + ',\n  "sessions": [')
        for index, digest in enumerate(digests):
            head = json.dumps(session_json(digest))[:-1]  # its calls go in before the "}"
            out.write(("\n    " if index == 0 else ",\n    ") + head + ', "verdicts": [')
            self.spool.copy(digest.session_id, out)
            out.write("\n    ]}")
        out.write("\n  ],\n" if digests else "],\n")
        out.write(f'  "emptySessions": {empty},\n')
        out.write('  "problems": ' + json.dumps([shown.inline(str(problem)) for problem in problems]))
        out.write("\n}\n")
        self.spool.close()


def session_json(digest: Digest) -> dict[str, Any]:
    """One session's facts and counts (its calls are written after them)."""
    about = digest.about
    return {
        "session": shown.inline(digest.session_id),
        "path": shown.inline(str(digest.path)),
        "started": shown.started_iso(about.started),
        "cwd": None if about.cwd is None else shown.inline(about.cwd),
        "prompt": None if about.prompt is None else shown.inline(about.prompt),
        "agents": [shown.inline(agent) for agent in digest.members],
        "calls": digest.calls,
        "recorded": digest.recorded,
        "stops": digest.stops,
        "differs": digest.differences,
    }


def call_json(call: CallReplay) -> dict[str, Any]:
    document: dict[str, Any] = {
        "call": call.number,
        "callId": shown.inline(call.call_id),
        "agent": shown.inline(call.agent),
        "tool": shown.inline(call.tool),
        "command": shown.command(call.tool, call.arguments),
        "arguments": shown.arguments_text(call.arguments),
        "recorded": call.recorded,
        "verdict": call.verdict,
        "hits": [_hit_json(hit) for hit in call.hits],
        "counts": [_count_json(count) for count in call.measured],
        "message": shown.block(call.message),
    }
    if call.notices:
        document["notices"] = [shown.block(text) for text in call.notices]
    return document


def _count_json(count: Reached) -> dict[str, Any]:
    """One count as the views show it: a stopped call's limit reached, another call's window count."""
    fingerprint = None if count.rule == "sameResultLimit" else shown.inline(count.key)
    return {
        "rule": count.rule,
        "fingerprint": fingerprint,
        "kind": count.kind,
        "count": count.count,
        "cap": shown.number(count.limit),
    }


def _hit_json(hit: Hit) -> dict[str, Any]:
    return {
        "fingerprint": shown.inline(hit.fingerprint.key),
        "kind": hit.fingerprint.kind,
        "count": hit.count,
        "cap": shown.number(hit.cap),
    }
