"""A scripted OpenAI-compatible chat-completions server for booting a real dsh.

The compat scenarios need a model whose every move is known in advance, so that the
only variable in a run is what the harness and the breaker do with each tool call.
The mock plays a script: one tool call per step, then a final text answer. It decides
which step it is on from the number of tool results in the conversation it is sent,
so a retried request replays the same step instead of skipping one. Everything it is
sent back (the tool results) is recorded for assertions.

It also serves `GET /health` and counts the hits: a local loop can aim at it, and the
count proves how many of those calls really ran.

Binds 127.0.0.1 only. Run standalone:

    python compat/mock_model.py --script script.json --port 0 --port-file port.txt \
        --record received.json
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

MODEL_ID = "mock-model"
TITLE_TEXT = "Compat session"


@dataclass(frozen=True)
class ScriptedCall:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Script:
    """What the model does: `calls` in order, one per step, then `final` as text."""

    calls: tuple[ScriptedCall, ...]
    final: str = "done"

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Script:
        calls = tuple(ScriptedCall(str(c["name"]), dict(c["arguments"])) for c in data["calls"])
        return cls(calls=calls, final=str(data.get("final", "done")))

    @classmethod
    def load(cls, path: Path) -> Script:
        return cls.from_json(json.loads(path.read_text()))


@dataclass
class Received:
    """What came back from the harness, in arrival order."""

    tool_results: list[dict[str, str]] = field(default_factory=list)
    chat_requests: int = 0
    side_requests: int = 0
    health_hits: int = 0

    def as_json(self) -> dict[str, Any]:
        return {
            "tool_results": self.tool_results,
            "chat_requests": self.chat_requests,
            "side_requests": self.side_requests,
            "health_hits": self.health_hits,
        }


def _message_text(content: object) -> str:
    """OpenAI content is either a string or a list of typed parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _tool_results(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    return [
        {"tool_call_id": str(m.get("tool_call_id", "")), "content": _message_text(m.get("content"))}
        for m in messages
        if m.get("role") == "tool"
    ]


class MockModel:
    """The scripted model plus the HTTP server that speaks for it."""

    def __init__(self, script: Script, port: int = 0, record_path: Path | None = None) -> None:
        self.script = script
        self.record_path = record_path
        self.received = Received()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler_for(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> MockModel:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def next_move(self, request: dict[str, Any]) -> dict[str, Any]:
        """The assistant message for this request: a scripted call, the final text, or a title."""
        messages = request.get("messages") or []
        with self._lock:
            if not request.get("tools"):
                self.received.side_requests += 1
                self._save()
                return {"role": "assistant", "content": TITLE_TEXT}
            self.received.chat_requests += 1
            results = _tool_results(messages)
            if len(results) >= len(self.received.tool_results):
                self.received.tool_results = results
            self._save()
        step = len(results)
        if step >= len(self.script.calls):
            return {"role": "assistant", "content": self.script.final}
        call = self.script.calls[step]
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{step + 1:03d}",
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                }
            ],
        }

    def count_health_hit(self) -> None:
        with self._lock:
            self.received.health_hits += 1
            self._save()

    def _save(self) -> None:
        if self.record_path is not None:
            self.record_path.write_text(json.dumps(self.received.as_json(), indent=1))


_USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def _completion(message: dict[str, Any]) -> dict[str, Any]:
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": "chatcmpl-mock",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": MODEL_ID,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": _USAGE,
    }


def _stream_chunks(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The same answer as SSE chunks: role, content or tool call, then finish and usage."""
    base = {
        "id": "chatcmpl-mock",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": MODEL_ID,
    }
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    if message.get("tool_calls"):
        deltas += [{"tool_calls": [{"index": i, **tc}]} for i, tc in enumerate(message["tool_calls"])]
        finish = "tool_calls"
    else:
        deltas.append({"content": message["content"]})
        finish = "stop"
    chunks = [{**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    chunks.append({**base, "choices": [], "usage": _USAGE})
    return chunks


def _handler_for(model: MockModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Silent: the harness's own output is what a reader wants to see."""

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0].rstrip("/")
            if path.endswith("/models"):
                self._send_json(
                    {
                        "object": "list",
                        "data": [{"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "compat"}],
                    }
                )
            elif path == "/health":
                model.count_health_hit()
                self._send(200, b"ok\n", "text/plain")
            else:
                self._send(404, b"not found\n", "text/plain")

        def do_POST(self) -> None:
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, b"not found\n", "text/plain")
                return
            length = int(self.headers.get("Content-Length") or 0)
            request = json.loads(self.rfile.read(length) or b"{}")
            message = model.next_move(request)
            if request.get("stream"):
                self._send_stream(_stream_chunks(message))
            else:
                self._send_json(_completion(message))

        def _send_json(self, payload: dict[str, Any]) -> None:
            self._send(200, json.dumps(payload).encode(), "application/json")

        def _send(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _send_stream(self, chunks: list[dict[str, Any]]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for chunk in chunks:
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--script", type=Path, required=True, help="JSON: {calls: [{name, arguments}], final}"
    )
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--port-file", type=Path, help="write the bound port here")
    parser.add_argument("--record", type=Path, help="keep the received tool results here (JSON)")
    args = parser.parse_args()
    model = MockModel(Script.load(args.script), port=args.port, record_path=args.record)
    if args.port_file is not None:
        args.port_file.write_text(f"{model.port}\n")
    print(f"mock model on http://127.0.0.1:{model.port}/v1", flush=True)
    model.serve_forever()


if __name__ == "__main__":
    main()
