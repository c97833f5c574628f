"""Which tools only read: a call of any other tool may change what later calls read.

The breaker knows dsh's tools. Those that only read (a file, a listing, a search, the web) change
nothing; a shell line is read command by command (``history.identity``). Any other tool, one the
breaker does not know (a function of an API, a tool of an MCP server), may change the state later
calls read: whether it did is told by its answer (``history.identity``, ``history.progress``),
which may report a state (``reports_state``) or list items (``lists_items``).
"""

from __future__ import annotations

import json

from breaker.core.reading.shell import SHELL_TOOLS

#: dsh's tools that only read.
READ_ONLY_TOOLS = frozenset({"read", "grep", "glob", "web_fetch", "web_search", "notebook_read"})
#: Name fragments of tools that fetch from the network: what they read is remote, never changed here.
FETCH_MARKERS = ("fetch", "browse", "web_")


def may_change(tool: str) -> bool:
    """Whether a call of ``tool`` (not a shell: its command line says) may change what later calls read."""
    name = tool.lower()
    if name in READ_ONLY_TOOLS or name in SHELL_TOOLS:
        return False
    return not any(marker in name for marker in FETCH_MARKERS)


#: An answer this long or longer is data, not a report of a state.
_STATE_CHARS = 512
_NOTHING = frozenset({"", "None", "null", "{}", "true", "ok", "OK"})


def reports_state(text: str) -> bool:
    """Whether an answer reads as a report of what a call did, not data it found: nothing at all
    (``None``, ``{}``: the call was made for its effect) or a short object of plain values (a
    status, the state it set). A list of matches, a file's text or a long answer is data."""
    stripped = text.strip()
    if stripped in _NOTHING:
        return True
    if len(stripped) >= _STATE_CHARS or not stripped.startswith("{"):
        return False
    try:
        value = json.loads(stripped)
    except ValueError:
        return False
    return isinstance(value, dict) and all(
        item is None or isinstance(item, (bool, int, float)) or (isinstance(item, str) and "\n" not in item)
        for item in value.values()
    )


#: An answer longer than this is not parsed to tell whether it is a listing.
_LISTING_CHARS = 16384


def lists_items(text: str) -> bool:
    """Whether an answer is a listing: a JSON array, or a JSON object one of whose values is an
    array (the items there are: files, matches, rows), not a report of what a call did."""
    stripped = text.strip()
    if len(stripped) > _LISTING_CHARS or stripped[:1] not in ("{", "["):
        return False
    try:
        value = json.loads(stripped)
    except ValueError:
        return False
    if isinstance(value, dict):
        return any(isinstance(item, list) for item in value.values())
    return isinstance(value, list)
