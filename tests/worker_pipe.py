"""The shim's side of a real worker process's pipe (``python -m breaker.worker`` spawned as the
shim does), for the tests that talk to one: frames written, replies read."""

from __future__ import annotations

import os
import struct
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import msgpack  # type: ignore[import-untyped]
from anyio.abc import Process

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
#: How long a reply or an exit may take before the test calls it a hang: generous, because a busy
#: machine can take seconds to start a worker, and a deadline here only stops a test that hangs.
HANG_S = 60


def frame(message: object) -> bytes:
    body: bytes = msgpack.packb(message, use_bin_type=True)
    return struct.pack(">I", len(body)) + body


class WorkerPipe:
    """The shim's side of the pipe: write frames, read reply frames."""

    def __init__(self, process: Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.stdin = process.stdin
        self.stdout = process.stdout
        self.buffer = b""
        self.next_id = 1

    async def write(self, data: bytes) -> None:
        await self.stdin.send(data)

    async def send(self, op: str, **fields: Any) -> int:
        request_id = self.next_id
        self.next_id += 1
        await self.write(frame({"id": request_id, "op": op, **fields}))
        return request_id

    async def reply(self) -> dict[str, Any]:
        while len(self.buffer) < 4 or len(self.buffer) < 4 + struct.unpack(">I", self.buffer[:4])[0]:
            with anyio.fail_after(HANG_S):
                self.buffer += await self.stdout.receive()
        (length,) = struct.unpack(">I", self.buffer[:4])
        body, self.buffer = self.buffer[4 : 4 + length], self.buffer[4 + length :]
        reply: dict[str, Any] = msgpack.unpackb(body)
        return reply

    async def call(self, op: str, **fields: Any) -> dict[str, Any]:
        request_id = await self.send(op, **fields)
        reply = await self.reply()
        assert reply["id"] == request_id
        return reply

    async def exit_code(self) -> int:
        with anyio.fail_after(HANG_S):
            return await self.process.wait()


@asynccontextmanager
async def worker() -> AsyncIterator[WorkerPipe]:
    env = {**os.environ, "PYTHONPATH": str(PACKAGE_ROOT)}
    async with await anyio.open_process(
        [sys.executable, "-m", "breaker.worker"], cwd=PACKAGE_ROOT, env=env
    ) as process:
        yield WorkerPipe(process)


@asynccontextmanager
async def configured(config: dict[str, Any] | None = None) -> AsyncIterator[WorkerPipe]:
    async with worker() as pipe:
        assert (await pipe.call("configure", config=config))["ok"]
        yield pipe


def bash(agent: int, call: str, command: str, **extra: Any) -> dict[str, Any]:
    return {"agent": agent, "call": call, "name": "bash", "args": {"command": command, **extra}}
