"""Replaying, the second part: the live gate's ``Breaker`` run offline over the sessions ``read``
made, one event at a time as dsh logged them, each call handed out with its verdict; and the sweep,
the same replay over a grid of settings scored against labels. It imports the core and ``read``,
never ``config`` (a replay is given its configuration) nor ``show``.
"""
