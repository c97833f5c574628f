"""``rtb``, the offline tool: reads dsh sessions and config files, replays them through the core,
sweeps settings and prints tables. It may do I/O; the core never imports it.

Its parts, in the order a replay runs: ``read`` (logs into sessions), ``replay`` (the core over
them, and the sweep), ``show`` (the reports); ``config`` (which configuration, ``rtb check``) beside
them on ``read``. Each imports only the parts before it (tests/test_rtb_layers.py); at the top,
``cli`` (the command line), ``inputs`` (what a run reads) and ``replayrun`` (a replay streamed into
a report) may import any.
"""
