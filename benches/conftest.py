"""The pytest-benchmark suite: ``python -m pytest benches --benchmark-only``.

Not part of the project's test run (``pytest tests python/outprob
README.md``, and ``testpaths = ["tests"]``): these files only time things.
The operations and baselines are those of ``compare.py``
(``operations.OPERATIONS``); each benchmark's group is the operation and N,
so ``pytest-benchmark compare --group-by=group`` puts outprob next to its
baselines. outprob runs on one thread, as in ``compare.py``'s main table.
"""

from __future__ import annotations

import sys
from pathlib import Path

# The suite's modules (operations, baselines, suite) live beside this file.
sys.path.insert(0, str(Path(__file__).parent))
