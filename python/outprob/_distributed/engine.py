"""What an engine offers the planner (contract §9): one score column of a
distributed collection, over which it runs a pass of the core's plan
(``_core.Pass``) on every partition and returns the combined partial.
:mod:`outprob.dask` and :mod:`outprob._distributed.spark_engine` subclass
:class:`Engine`."""

from __future__ import annotations

from typing import Any


class Engine:
    """One score column of a distributed collection, as an engine runs
    passes over it (subclassed by each engine)."""

    #: Whether the engine runs a census without moments in itself (no
    #: Python per score): the plan then asks for moments only when the fit
    #: reads them.
    native_census = False

    def __init__(self) -> None:
        self.passes = 0
        self.bytes = 0

    def run(self, step: Any) -> Any:
        """The pass's partials of every partition, combined in order."""
        raise NotImplementedError
