"""``rtb``, the offline tool: reads dsh sessions and config files, replays them through the core,
sweeps settings and prints tables. It may do I/O; the core never imports it.
"""
