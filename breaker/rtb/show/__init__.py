"""Showing, the last part: what a report keeps of each session as the replay hands it calls, the
reports themselves (text and markdown tables, JSON, the HTML timeline with its style and script)
and ``shown``, the one way every text from a log is redacted before it is printed. It imports the
core, ``read`` and ``replay`` (what it shows), never ``config`` (every report is handed its
configuration).
"""
