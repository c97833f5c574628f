"""A worker that boots like the real one and answers its first guard, then answers the next guard
with 2 MB of stderr and silence.

Run by node-shim/test/stderr.test.js through a stand-in interpreter: it is what a hung worker
that logs looks like to the bridge.
"""

import os
import sys
import time

from breaker.protocol import FrameDecoder, Guard, encode_frame_parts
from breaker.streams import open_streams, stream_options
from breaker.worker import RequestHandler

handler = RequestHandler()
decoder = FrameDecoder()
streams = open_streams(*stream_options(sys.argv[1:]))  # its FIFOs, as the worker makes them
chunk = streams.first
guards = 0
while chunk := chunk or os.read(streams.input_fd, 1 << 16):
    requests, chunk = decoder.feed(chunk), b""
    for request in requests:
        guards += isinstance(request, Guard)
        if guards == 2:  # a warm worker's: the guard deadline alone applies
            sys.stderr.write("worker noise\n" * 160_000)
            sys.stderr.flush()
            time.sleep(600)
        os.write(streams.output_fd, b"".join(encode_frame_parts(handler.handle(request))))
