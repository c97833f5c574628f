"""``python -m breaker``: the ``rtb`` command line."""

from breaker.rtb.cli import main

raise SystemExit(main())
