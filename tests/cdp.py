"""A tiny Chrome DevTools Protocol client for the page tests: starts headless Chromium on a private
profile and a loopback debugging port, opens one page, and speaks CDP over a WebSocket written
here (RFC 6455: the handshake, masked text frames out, unmasked frames in), standard library only.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

#: Flags for a browser that talks to nothing but the page it is given.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
)


def chromium_binary() -> str | None:
    """The Chromium on PATH (Debian's ``chromium``), or None."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    """One headless Chromium with one page; use as a context manager."""

    def __init__(self, binary: str, *, width: int = 1400, height: int = 1000) -> None:
        self.profile = tempfile.mkdtemp(prefix="rtb-chromium-")
        self.process = subprocess.Popen(
            [
                binary,
                *FLAGS,
                f"--user-data-dir={self.profile}",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            # Its home, XDG and temporary folders in the throwaway profile too: Debian's chromium
            # writes ~/.config/chromium whatever --user-data-dir says and leaves its singleton
            # folder (org.chromium.Chromium.*) in TMPDIR, and nothing may stay in either.
            env={
                **os.environ,
                "no_proxy": "*",
                "NO_PROXY": "*",
                "HOME": self.profile,
                "TMPDIR": self.profile,
                "XDG_CONFIG_HOME": os.path.join(self.profile, "config"),
                "XDG_CACHE_HOME": os.path.join(self.profile, "cache"),
                "XDG_DATA_HOME": os.path.join(self.profile, "data"),
            },
        )
        self.port = self._debugging_port()
        self.socket = self._connect(self._page_socket_url())
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.socket.close()
        finally:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            shutil.rmtree(self.profile, ignore_errors=True)

    # --- start-up ------------------------------------------------------------------------------

    def _debugging_port(self) -> int:
        assert self.process.stderr is not None
        deadline = time.monotonic() + 30
        seen = []
        while time.monotonic() < deadline:
            line = self.process.stderr.readline()
            if not line:
                break
            seen.append(line)
            found = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            if found:
                return int(found.group(1))
        self.process.kill()
        raise RuntimeError("chromium did not open its debugging port:\n" + "".join(seen[-20:]))

    def _page_socket_url(self) -> str:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with opener.open(f"http://127.0.0.1:{self.port}/json/list", timeout=5) as reply:
                targets = json.loads(reply.read())
            pages = [target for target in targets if target.get("type") == "page"]
            if pages:
                return str(pages[0]["webSocketDebuggerUrl"])
            time.sleep(0.1)
        raise RuntimeError("chromium opened no page")

    def _connect(self, url: str) -> socket.socket:
        found = re.match(r"ws://127\.0\.0\.1:(\d+)(/.*)", url)
        assert found, url
        connection = socket.create_connection(("127.0.0.1", int(found.group(1))), timeout=120)
        key = base64.b64encode(os.urandom(16)).decode()
        connection.sendall(
            (
                f"GET {found.group(2)} HTTP/1.1\r\nHost: 127.0.0.1:{found.group(1)}\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = connection.recv(1)
            if not chunk:
                raise RuntimeError("the debugging socket closed during the handshake")
            head += chunk
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise RuntimeError(f"no WebSocket upgrade: {head[:200]!r}")
        return connection

    # --- frames --------------------------------------------------------------------------------

    def _send_frame(self, text: str) -> None:
        payload = text.encode()
        mask = os.urandom(4)
        length = len(payload)
        if length < 126:
            header = struct.pack("!BB", 0x81, 0x80 | length)
        elif length < 1 << 16:
            header = struct.pack("!BBH", 0x81, 0x80 | 126, length)
        else:
            header = struct.pack("!BBQ", 0x81, 0x80 | 127, length)
        masked = bytes(byte ^ mask[index % 4] for index, byte in enumerate(payload))
        self.socket.sendall(header + mask + masked)

    def _read_exact(self, size: int) -> bytes:
        data = bytearray()
        while len(data) < size:
            chunk = self.socket.recv(size - len(data))
            if not chunk:
                raise RuntimeError("the debugging socket closed")
            data += chunk
        return bytes(data)

    def _read_message(self) -> dict[str, Any]:
        parts = bytearray()
        while True:
            first, second = self._read_exact(2)
            length = second & 0x7F
            if length == 126:
                (length,) = struct.unpack("!H", self._read_exact(2))
            elif length == 127:
                (length,) = struct.unpack("!Q", self._read_exact(8))
            payload = self._read_exact(length)
            opcode = first & 0x0F
            if opcode == 0x8:
                raise RuntimeError("the browser closed the debugging socket")
            if opcode in (0x9, 0xA):  # ping, pong: nothing to do for a short test
                continue
            parts += payload
            if first & 0x80:
                message: dict[str, Any] = json.loads(parts.decode())
                return message

    # --- the protocol --------------------------------------------------------------------------

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """Call ``method`` and wait for its reply; events that arrive meanwhile are kept."""
        self.next_id += 1
        ident = self.next_id
        self._send_frame(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = self._read_message()
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            self.events.append(message)

    def wait_for(self, method: str, timeout: float = 60) -> dict[str, Any]:
        """The first event ``method`` (kept or still to come)."""
        for event in self.events:
            if event.get("method") == method:
                return event
        self.socket.settimeout(timeout)
        while True:
            message = self._read_message()
            self.events.append(message)
            if message.get("method") == method:
                return message

    def evaluate(self, expression: str) -> Any:
        reply = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in reply:
            raise RuntimeError(f"{expression}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def screenshot(self, path: Path) -> None:
        reply = self.send("Page.captureScreenshot", format="png", captureBeyondViewport=False)
        path.write_bytes(base64.b64decode(reply["data"]))

    def problems(self) -> list[str]:
        """Console errors, uncaught exceptions and browser log errors seen so far."""
        found = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append(f"console.{params['type']}: {params.get('args')}")
            elif method == "Runtime.exceptionThrown":
                found.append(f"exception: {params.get('exceptionDetails')}")
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                found.append(f"log: {params['entry'].get('text')} {params['entry'].get('url', '')}")
        return found

    def requests(self) -> list[str]:
        """Every URL the page asked for (the page's own file included)."""
        return [
            event["params"]["request"]["url"]
            for event in self.events
            if event.get("method") == "Network.requestWillBeSent"
        ]
