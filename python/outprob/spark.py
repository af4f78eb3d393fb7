"""Outlier probabilities on Apache Spark DataFrames (contract §9).

``fit(scaler, df, columns)`` fits an outprob scaler exactly — the same
center and scale as the in-memory fit of the same scores, with the
tolerances of :mod:`outprob.dask` — by the passes of
the planner (``outprob._distributed.planner``): each pass folds every partition's Arrow batches
into a small partial in the core (``mapInArrow``) and the driver combines
the partials; nothing is collected or shuffled but these partials. The
census runs as one native Spark SQL aggregate when the fit needs neither
exact moments nor a pretransform. ``method="sketch"`` fits from one native
aggregate of KLL sketches (``kll_sketch_agg_double``, whose bytes
:class:`outprob.streaming.KLLSketch` reads) with the error bounds of
:class:`outprob.streaming.StreamingFit`; a fit that reads the mean or the
SD takes them exactly in the same pass, in Python.

``transform(scaler, df, column, output_col="probability")`` adds the
probabilities as a column, computed by the Rust transform on Arrow batches
of the score column alone (a scalar Arrow UDF: a float column without nulls
is read without a copy, the GIL is released while the batch is mapped); it
works on batch and streaming DataFrames and for every fitted outprob scaler.

``score_stream(stream_df, scaler, column, sink, checkpoint=...)`` scores a
Structured Streaming query and keeps the fit current
(``outprob._distributed.spark_stream``).

A null is a missing score, as NaN is: fits omit it (or refuse it under
``nan_policy="raise"``), ``transform`` maps it to null.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ._common.optional import require

require("pyspark", "outprob.spark")
require("pyarrow", "outprob.spark")

from pyspark.sql import DataFrame  # noqa: E402

from ._distributed.planner import FitInfo, fit_exact, fit_sketch  # noqa: E402
from ._distributed.spark_engine import Columns, SparkColumnEngine, score_columns, transform  # noqa: E402
from ._distributed.spark_stream import load_stream_fit, score_stream  # noqa: E402

__all__ = ["fit", "transform", "score_stream", "load_stream_fit"]


def fit(scaler: Any, df: DataFrame, columns: Optional[Columns] = None, *, method: str = "exact",
        k: Optional[int] = None, collect_max: int = 1 << 20, return_info: bool = False) -> Any:
    """Fits ``scaler`` (unfitted or not; it is not modified) to score
    columns of a Spark DataFrame and returns the fitted scaler (and a
    :class:`outprob.dask.FitInfo`: passes, bytes the partitions returned, the sketch
    fit's bounds, with ``return_info=True``).

    Parameters
    ----------
    scaler : GaussianScaler or LinearScaler
        As for :func:`outprob.dask.fit`: the options exactly, ``window``
        and ``trim="auto"`` refused, other scalers refused with the reason.
    df : pyspark.sql.DataFrame
        Persist it first when its source is costly to read: a fit reads it
        once per pass (contract §9: 2 passes for median + nMAD).
    columns : str, list of str, or None
        One column name for a 1-D fit; a list (``None``: every column) for
        one fit per column, with ``feature_names_in_`` the names.
    method : "exact" or "sketch"
    k : int, optional
        The sketch's k of ``method="sketch"`` (default: the scaler's ``k``,
        800: ε = 0.35%).
    collect_max : int
        The most values a pass brings to the driver for a selection.

    Examples
    --------
    >>> s = outprob.spark.fit(outprob.GaussianScaler("median", "nmad"), df, "score")
    ... # doctest: +SKIP
    """
    if method not in ("exact", "sketch"):
        raise ValueError(f"method must be 'exact' or 'sketch', got {method!r}")
    names, ndim = score_columns(df, columns)
    engines = [SparkColumnEngine(df, name) for name in names]
    labels = np.asarray(names, dtype=object) if ndim == 2 else None
    if method == "sketch":
        fitted, info = fit_sketch(scaler, engines, ndim, labels, k)
    else:
        fitted, info = fit_exact(scaler, engines, ndim, labels, collect_max)
    return (fitted, info) if return_info else fitted
