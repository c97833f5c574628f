"""``python -m breaker``: the ``rtb`` command line."""

from breaker.cli import main

raise SystemExit(main())
