"""Reading, the first part of a replay: where dsh keeps its logs, one log file as a stream of
lines in bounded memory, each line into the events a replay needs (human turns, calls, results,
approvals), and the logs folded into sessions. It imports the core and nothing else of rtb.
"""
