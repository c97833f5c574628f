"""Where dsh keeps its session logs: ``$DSH_HOME/sessions`` (``~/.dsh/sessions`` by default).

dsh writes each session to ``<DSH_HOME>/sessions/<working-directory slug>/session-<id>/
session.jsonl.zstd``; ``rtb replay`` with no path reads them there, wherever it is run from.
"""

from __future__ import annotations

import os
from pathlib import Path

from breaker.rtb.inputs import UsageError


def sessions_folder() -> Path:
    """dsh's sessions folder: ``$DSH_HOME`` (blank counts as unset) or ``~/.dsh``, then ``sessions``."""
    home = os.environ.get("DSH_HOME", "").strip()
    root = Path(home).expanduser() if home else Path.home() / ".dsh"
    return root / "sessions"


def default_session_paths() -> list[Path]:
    """What ``rtb replay`` reads when given no path: dsh's sessions folder, which must exist."""
    folder = sessions_folder()
    if not folder.is_dir():
        raise UsageError(
            f"no SESSION given and no dsh sessions folder at {folder} (set DSH_HOME, or give a path)"
        )
    return [folder]
