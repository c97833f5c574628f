"""What a tool's or an argument's name says a call holds: plain tables, read by the reading stage
(``shell``, ``paths``, ``resolved``, ``fingerprints``) and by ``groups``; the table of what a
call's group reads (``GROUPING``) goes to the shim in the worker's answer to ``configure``, before
it imports the rest of the core: nothing is imported here.
"""

from __future__ import annotations

from collections.abc import Mapping

#: Tools whose command argument is a shell line, and the names that argument goes by.
SHELL_TOOLS = frozenset({"bash", "pwsh", "shell"})
COMMAND_ARGS = ("command", "cmd", "script")

#: Name fragments of tools that take a URL. A name with only "search" in it (``file_search``)
#: counts as an HTTP fetch only when it is actually given a URL.
URL_TOOL_MARKERS = ("fetch", "browse", "web_", "search")

#: Argument names whose value is a path, whatever the tool; and any name ending in ``PATH_SUFFIX``.
PATH_ARGS = frozenset(
    {"path", "file_path", "filepath", "file", "filename", "notebook_path", "dir", "directory", "folder"}
)
PATH_SUFFIX = "_path"
#: Argument names whose value is a list of paths.
PATH_LIST_ARGS = frozenset({"paths", "file_paths", "files"})
#: Argument names that say which directory a call's relative paths are relative to.
WORKDIR_ARGS = ("cwd", "workdir", "working_dir", "working_directory")

#: Argument names whose value is a URL, and a list of URLs.
URL_ARGS = ("url", "href", "uri")
URL_LIST_ARGS = ("urls",)

#: A URL a call of a URL tool is grouped by (``groups.url_group``): written plainly, so that the path
#: it names is the path as written (no escape, dot segment or backslash to resolve). An http(s)
#: scheme or none, a host of letters, digits, dots and dashes, a port, a path of RFC 3986's path
#: characters (the first group), then anything printable after ``?`` or ``#``; whole, and ASCII.
PLAIN_URL = r"(?:[Hh][Tt][Tt][Pp][Ss]?://)?[A-Za-z0-9.-]+(?::[0-9]+)?((?:/[A-Za-z0-9._~!$&'()*+,;=:@-]*)*)(?:[?#][!-~]*)?"

#: What the shim needs to compute a call's group (``groups``; the configure reply's ``grouping``).
GROUPING: dict[str, object] = {
    "apart": sorted(SHELL_TOOLS),  # a tool of one of these names (lower-cased) has no group
    "urlMarks": list(URL_TOOL_MARKERS),  # a URL tool: its lower-cased name holds one of these
    "pathArgs": sorted(PATH_ARGS | set(WORKDIR_ARGS)),
    "pathSuffix": PATH_SUFFIX,
    "urlArgs": list(URL_ARGS),
    "urlListArgs": list(URL_LIST_ARGS),
    "plainUrl": PLAIN_URL,
}


def grouping(ignored: Mapping[str, tuple[str, ...]], urls: bool, window: int) -> dict[str, object]:
    """The configure reply's ``grouping``: ``GROUPING``, the configuration's ``ignoreArgs``,
    whether calls of URL tools have groups (``BreakerConfig.url_calls_grouped``) and the window's
    size (a promise by group counts the calls still in it: ``deciding.passes.by_group``)."""
    ignored_lists = {tool: list(names) for tool, names in ignored.items()}
    return {**GROUPING, "ignored": ignored_lists, "urls": urls, "window": window}
