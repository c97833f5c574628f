"""Where dsh keeps its session logs and profiles: ``$DSH_HOME/sessions`` and ``$DSH_HOME/profiles``
(under ``~/.dsh`` by default).

dsh writes each session to ``<DSH_HOME>/sessions/<working-directory slug>/session-<id>/
session.jsonl.zstd``; ``rtb replay`` with no path reads them there, wherever it is run from.
"""

from __future__ import annotations

import os
from pathlib import Path

from breaker.rtb.read.events import UsageError


def dsh_home() -> Path:
    """dsh's home: ``$DSH_HOME`` (blank counts as unset), else ``~/.dsh``."""
    home = os.environ.get("DSH_HOME", "").strip()
    return Path(home).expanduser() if home else Path.home() / ".dsh"


def sessions_folder() -> Path:
    """dsh's sessions folder: ``<dsh home>/sessions``."""
    return dsh_home() / "sessions"


def profile_folder(name: str) -> Path:
    """A profile's folder: ``<dsh home>/profiles/<name>`` (``--profile NAME``)."""
    return dsh_home() / "profiles" / name


def profile_names() -> list[str]:
    """The profiles of dsh's home, by name: the folders of ``<dsh home>/profiles`` but dsh's own
    ``node_modules`` (its links to the install's packages)."""
    folder = dsh_home() / "profiles"
    if not folder.is_dir():
        return []
    return sorted(
        entry.name
        for entry in folder.iterdir()
        if entry.is_dir() and entry.name != "node_modules" and not entry.name.startswith(".")
    )


def default_session_paths() -> list[Path]:
    """What ``rtb replay`` reads when given no path: dsh's sessions folder, which must exist."""
    folder = sessions_folder()
    if not folder.is_dir():
        raise UsageError(
            f"no SESSION given and no dsh sessions folder at {folder} (set DSH_HOME, or give a path)"
        )
    return [folder]
