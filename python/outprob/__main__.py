"""``python -m outprob``: the ``outprob`` command."""

import sys

from .cli import main

sys.exit(main())
