"""Stage 4, wording: every text the model or the operator reads, and how quoted text is made safe.

The denial, the ask reasons and the notices (``messages``), and the one rule for showing text
that came from a model or a tool (``redaction``: secrets redacted, tool-call markup defused,
invisible and control characters dropped or shown; ``escapes`` lets it read a secret through
backslash escapes), which every ``rtb`` output follows too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # at run time ``from breaker.core.wording import messages`` imports it when asked
    from breaker.core.wording import messages as messages

__all__ = ["messages"]
