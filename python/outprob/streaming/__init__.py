"""Streaming fitting with stated error bounds (contract §9).

* :class:`KLLSketch` — a mergeable quantile sketch whose serialized bytes
  are Apache DataSketches' ``kll_doubles_sketch`` / ``kll_floats_sketch``
  bytes: a sketch built by DataSketches (its Python package ``datasketches``,
  Java ``KllDoublesSketch``, Spark's ``kll_sketch_agg_double``) can be read,
  updated and merged here, and vice versa.
* :class:`StreamingFit` — the running state of a Gaussian or linear fit:
  exact for the mean, SD and extremes, from a KLL sketch (with guaranteed
  value intervals) for order statistics, or exact over a window of the most
  recent scores. It is what the scalers' ``partial_fit`` builds on.

>>> import numpy as np
>>> from outprob.streaming import StreamingFit
>>> fit = StreamingFit(center="mean", scale="std")
>>> for batch in np.array_split(np.arange(10.0), 3):
...     _ = fit.update(batch)
>>> r = fit.result()
>>> float(r.center), round(float(r.scale), 6)
(4.5, 2.872281)
"""

from __future__ import annotations

from .._common.public import doctest_table
from ._fit import StreamingFit
from ._sketch import DEFAULT_K, KLLSketch, _kll_from_bytes, normalized_rank_error
from ._state import StreamingResult

__all__ = [
    "KLLSketch",
    "StreamingFit",
    "StreamingResult",
    "normalized_rank_error",
    "DEFAULT_K",
]

# Pickles name a class or function by its ``__module__``: the public one,
# so that a pickle outlives a move of the code inside the package.
for _obj in (KLLSketch, StreamingFit, StreamingResult, _kll_from_bytes):
    _obj.__module__ = __name__
del _obj
__test__ = doctest_table([KLLSketch, StreamingFit, StreamingResult])
