"""What a tool's or an argument's name says a call holds: plain tables, read by the reading stage
(``shell``, ``paths``, ``resolved``, ``fingerprints``) and by ``groups``, whose table the worker
sends the shim in its answer to ``configure``, before it imports the rest of the core. No imports.
"""

from __future__ import annotations

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
