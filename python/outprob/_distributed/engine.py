"""What an engine offers the planner (contract §9): one score column of a
distributed collection, over which it runs a :class:`~.steps.Step` on every
partition and returns the combined partial. :mod:`outprob.dask` and
:mod:`outprob._distributed.spark_engine` subclass :class:`Engine`."""

from __future__ import annotations

from typing import Any, Optional

from .steps import CensusPart, Step, census_step


class Engine:
    """One score column of a distributed collection, as an engine runs
    passes over it (subclassed by each engine)."""

    #: Whether :meth:`census` runs in the engine itself (no Python per score).
    native_census = False

    def __init__(self) -> None:
        self.passes = 0
        self.bytes = 0

    def run(self, step: Step) -> Any:
        """The step's partials of every partition, combined in order."""
        raise NotImplementedError

    def census(self, negate: bool, sketch_k: int, moments_ddof: Optional[int],
               pre: Optional[str], pre_min: float) -> CensusPart:
        return self.run(census_step(negate, sketch_k, moments_ddof, pre, pre_min))
