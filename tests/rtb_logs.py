"""Writing dsh session logs for the rtb report tests: the header (``createdAt``, ``cwd``), the human
prompt, and calls with their results, in the event shapes dsh writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class Log:
    """One session log under construction; ``write`` puts it where dsh would."""

    def __init__(
        self, session_id: str, *, started_ms: int | None, cwd: str | None, parent: str | None = None
    ):
        self.session_id = session_id
        self.time = started_ms or 0
        header: dict[str, Any] = {"type": "session", "id": session_id}
        if started_ms is not None:
            header["createdAt"] = started_ms
        if cwd is not None:
            header["cwd"] = cwd
        if parent is not None:
            header["parentSession"] = parent
        self.lines: list[dict[str, Any]] = [header]
        self.calls = 0

    def _event(self, kind: str, data: dict[str, Any]) -> None:
        self.time += 50
        self.lines.append({"type": kind, "seq": len(self.lines) - 1, "time": self.time, "data": data})

    def prompt(self, text: str) -> Log:
        message = {"content": [{"type": "text", "text": text}], "source": {"kind": "user"}, "role": "user"}
        self._event("user/message", message)
        return self

    def call(self, tool: str, arguments: dict[str, Any], result: str, *, is_error: bool = False) -> Log:
        self.calls += 1
        call_id = f"{self.session_id}-c{self.calls}"
        self._event("tool/call", {"callId": call_id, "name": tool, "arguments": json.dumps(arguments)})
        part = {
            "type": "tool-result",
            "toolCallId": call_id,
            "isError": is_error,
            "content": [{"type": "text", "text": result}],
        }
        self._event("tool/result", {"message": {"content": [part]}})
        return self

    def write(self, folder: Path) -> Path:
        path = folder / self.session_id / "session.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines), encoding="utf-8")
        return path


#: Secrets the reports must never print, and where each one hides in the session below.
BEARER = "ghp_R3dactM3" + "x7Kq2Lm9Np4Rs6Tv8Wy0Za1" * 2
URL_PASSWORD = "hunter2-Pa55w0rd-zq81"
PRIVATE_KEY_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" * 3
SECRETS = (BEARER, URL_PASSWORD, PRIVATE_KEY_BODY)


def secret_session(folder: Path, *, calls: int = 7) -> Path:
    """A session whose command carries a bearer token and a URL password and whose result holds a
    private key; the identical call repeats until it is denied."""
    command = (
        f"curl -sS -H 'Authorization: Bearer {BEARER}' "
        f"https://deploy:{URL_PASSWORD}@git.example.com/api/status"
    )
    result = (
        "status ok\n-----BEGIN RSA PRIVATE KEY-----\n"
        + PRIVATE_KEY_BODY
        + "\n-----END RSA PRIVATE KEY-----\n[exit code: 0]"
    )
    log = Log("session-5ec2e7aa-0000-4000-8000-000000000001", started_ms=1_796_000_000_000, cwd="/work/app")
    log.prompt(f"deploy with token {BEARER}\nsecond line")
    for _ in range(calls):
        log.call("bash", {"command": command, "description": "check"}, result)
    return log.write(folder)
