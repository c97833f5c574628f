"""``RTB_AUDIT=1``: once the worker serves, an audit hook ends the process (exit 70) at the first
attempt to start a process, open a file or use a socket, which would mean it acts on what it is
given. Everything the worker imports is imported before the hook is set (an import opens files).
"""

from __future__ import annotations

import os
import sys

#: Audit events that would mean the worker acts on what it is given (``os.exec*``, ``os.spawn*``
#: and ``os.posix_spawn*`` are matched by prefix).
FORBIDDEN_EVENTS = frozenset(
    {
        "open",
        "subprocess.Popen",
        "os.system",
        "os.fork",
        "os.forkpty",
        "socket.__new__",
        "socket.bind",
        "socket.connect",
        "socket.getaddrinfo",
        "socket.gethostbyname",
        "socket.gethostbyaddr",
        "socket.getnameinfo",
    }
)
FORBIDDEN_PREFIXES = ("os.exec", "os.spawn", "os.posix_spawn")


def forbid_side_effects() -> None:
    """From now on, end the process at the first attempt to run, open or connect anything."""

    def audit(event: str, _args: tuple[object, ...]) -> None:
        if event in FORBIDDEN_EVENTS or event.startswith(FORBIDDEN_PREFIXES):
            os.write(2, f"repeat-tool-breaker worker: audit: forbidden {event}\n".encode())
            os._exit(70)  # not an exception: the request handler would turn that into a reply

    sys.addaudithook(audit)
