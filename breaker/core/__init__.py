"""The pure core: a call and a state in, a verdict out.

Nothing under ``breaker.core`` does I/O, reads a clock or starts a thread (tests/test_layers.py
holds it to that), so every decision replays the same from a recorded sequence of calls. The
public names are re-exported by ``breaker`` itself.
"""
