"""Which configuration a run uses, beside the reading: a ``config:`` mapping from a file (bare or
inside a cordis patch), the one a command chooses (``--config``, ``--profile``, the profile folder
it runs in, the defaults) and ``rtb check``'s verdict on a profile's, all validated by the core's
``load_config``. It imports the core and ``read`` (where dsh keeps its profiles), nothing later.
"""
