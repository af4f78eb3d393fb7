"""The passes of the distributed fit as engines run them (contract §9).

The core's plan of a column (``_core.ColumnPlan``) asks for one pass at a
time (a ``_core.Pass``); an engine maps every partition (or batch) with
it, combines the partials of consecutive pieces in order (associative, so
an engine may fold a partition's batches first), and packs a partial as
bytes for its trip from a worker. Nothing here reads the scores in Python
or decides anything about the fit.
"""

from __future__ import annotations

from typing import Any, Sequence

from .. import _core


def combined(packed: Sequence[bytes]) -> Any:
    """The partials of consecutive pieces, unpacked and combined in order."""
    partials = [_core.Partial(p) for p in packed]
    total = partials[0]
    for p in partials[1:]:
        total = total.combine(p)
    return total


def run_plan(plan: Any, engine: Any) -> Any:
    """Runs every pass ``plan`` asks for on ``engine`` and returns the fit."""
    while True:
        step = plan.next_pass()
        if step is None:
            return plan.result()
        plan.feed(engine.run(step))
