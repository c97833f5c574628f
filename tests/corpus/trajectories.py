"""Writing trajectories by hand, in the replay format: the events dsh logs, cut to what is read.

A labelled corpus needs many small sessions written on purpose (a loop, an edit/test cycle, a
human turn in the middle). ``Trajectory`` builds them as the minimal subset of dsh's own event
shapes, so ``breaker.rtb.read.sessions`` reads a written file and a recorded ``session.jsonl.zstd`` the same
way::

    trajectory = Trajectory()
    trajectory.human("fetch the dataset")
    trajectory.call("bash", {"command": "curl -sS https://example.org/x"}, "[exit code: 6]")
    path.write_text(trajectory.to_jsonl())
"""

from __future__ import annotations

import json
from typing import Any


class Trajectory:
    """An ordered list of events; call ids are numbered ``call-1``, ``call-2``, ...

    With a ``session_id`` the file starts with dsh's session header, which names the agent; with
    a ``parent`` too, it is that session's subagent (write each agent to its own file).
    """

    def __init__(self, session_id: str | None = None, *, parent: str | None = None) -> None:
        self.events: list[dict[str, Any]] = []
        self._calls = 0
        if session_id is not None:
            header: dict[str, Any] = {"type": "session", "version": 0, "id": session_id, "createdAt": 0}
            if parent is not None:
                header.update(parentSession=parent, origin="subagent", delegationDepth=1)
            else:
                header["delegationDepth"] = 0
            self.events.append(header)
        elif parent is not None:
            raise ValueError("a subagent's trajectory needs its own session_id")

    def human(self, text: str = "") -> None:
        """A message the human typed (it clears the window)."""
        self.events.append(
            {
                "type": "user/message",
                "data": {"source": {"kind": "user"}, "content": [{"type": "text", "text": text}]},
            }
        )

    def step(self) -> None:
        """The model begins a new turn (dsh's ``step/start``): the calls after it were sent together."""
        self.events.append({"type": "step/start", "data": {}})

    def call(self, name: str, arguments: object, result: str | None = "", *, is_error: bool = False) -> str:
        """A tool call and, unless ``result`` is None, its result right after; returns its id."""
        call_id = self.call_only(name, arguments)
        if result is not None:
            self.result(call_id, result, is_error=is_error)
        return call_id

    def call_only(self, name: str, arguments: object) -> str:
        """A tool call whose result comes later (parallel calls) or never; returns its id."""
        self._calls += 1
        call_id = f"call-{self._calls}"
        self.events.append(
            {
                "type": "tool/call",
                "data": {"callId": call_id, "name": name, "arguments": json.dumps(arguments)},
            }
        )
        return call_id

    def result(self, call_id: str, text: str, *, is_error: bool = False) -> None:
        """The result the model read for ``call_id``."""
        part = {
            "type": "tool-result",
            "toolCallId": call_id,
            "isError": is_error,
            "content": [{"type": "text", "text": text}],
        }
        self.events.append({"type": "tool/result", "data": {"message": {"content": [part]}}})

    def to_jsonl(self) -> str:
        """The file's text: one JSON event a line."""
        return "".join(json.dumps(event, ensure_ascii=False) + "\n" for event in self.events)
