"""A worker that boots like the real one, then answers a guard with 2 MB of stderr and silence.

Run by node-shim/test/stderr.test.js through a stand-in interpreter: it is what a hung worker
that logs looks like to the bridge.
"""

import os
import sys
import time

from breaker.protocol import FrameDecoder, Guard, encode_frame_parts
from breaker.worker import RequestHandler

handler = RequestHandler()
decoder = FrameDecoder()
while chunk := os.read(0, 1 << 16):
    for request in decoder.feed(chunk):
        if isinstance(request, Guard):
            sys.stderr.write("worker noise\n" * 160_000)
            sys.stderr.flush()
            time.sleep(600)
        os.write(1, b"".join(encode_frame_parts(handler.handle(request))))
