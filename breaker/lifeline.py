"""The worker's tie to the shim's life: on Linux the kernel kills the worker once the shim's thread
that started it ends, even a stopped worker (SIGSTOP), which would never read the end of its input."""

from __future__ import annotations

import contextlib
import os
import signal
import sys

#: prctl(2): the signal the kernel sends this process when the thread that started it ends.
PR_SET_PDEATHSIG = 1


def die_with_the_shim(parent: int) -> None:
    """Linux: once the shim's thread that started this worker ends, the kernel kills the worker,
    even a stopped one (SIGSTOP), which would never read the end of its input. Asked for once the
    boot has its answer (ctypes is ~4% of the start before it); a shim (``parent``, the worker's
    parent when it started) that ended before then is noticed here."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the shim ended before the request was made
        os._exit(0)
