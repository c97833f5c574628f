"""What the guard answers when no worker can decide and ``onWorkerFailure`` is ``deny``.

The shim gives this text itself, with the plugin's name and why in place of ``{plugin}`` and
``{reason}``; the worker hands it over in its answer to ``configure``. It stands apart from
``messages`` (which quotes through ``redaction``) so that answering ``configure`` does not wait for
the redaction rules to be compiled.
"""

from __future__ import annotations

WORKER_FAILURE_DENIAL = (
    "{plugin}: this call was not run because the loop guard is unavailable ({reason}) "
    "and its onWorkerFailure setting is 'deny'."
)
