"""Outlier probabilities on Apache Spark DataFrames (contract §9).

``fit(scaler, df, columns)`` fits an outprob scaler exactly — the same
center and scale as the in-memory fit of the same scores, with the
tolerances of :mod:`outprob.dask` — by the passes of
the planner (``outprob._planner``): each pass folds every partition's Arrow batches
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
(``outprob._spark_stream``).

A null is a missing score, as NaN is: fits omit it (or refuse it under
``nan_policy="raise"``), ``transform`` maps it to null.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from ._optional import require

require("pyspark", "outprob.spark")
require("pyarrow", "outprob.spark")

import pyarrow as pa  # noqa: E402
from pyspark.sql import DataFrame  # noqa: E402
from pyspark.sql import types as T  # noqa: E402

from ._planner import FitInfo, fit_exact, fit_sketch  # noqa: E402
from ._spark_engine import Columns, SparkColumn, arrow_map, as_floats, score_columns  # noqa: E402
from ._spark_stream import load_stream_fit, score_stream  # noqa: E402

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
        once per pass (contract §9: 3 passes for median + nMAD).
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
    engines = [SparkColumn(df, name) for name in names]
    labels = np.asarray(names, dtype=object) if ndim == 2 else None
    if method == "sketch":
        fitted, info = fit_sketch(scaler, engines, ndim, labels, k)
    else:
        fitted, info = fit_exact(scaler, engines, ndim, labels, collect_max)
    return (fitted, info) if return_info else fitted


def _fitted_width(scaler: Any) -> int:
    """How many score columns the fitted scaler maps at once (1 for a 1-D fit)."""
    if not hasattr(scaler, "_fitted_state"):
        raise TypeError(f"expected a fitted outprob scaler, got {type(scaler).__name__}")
    state = scaler._fitted_state()  # NotFittedError when it is not fitted
    return int(state.n_features) if state.ndim == 2 else 1


def transform(scaler: Any, df: DataFrame, column: Columns, *,
              output_col: Columns = "probability") -> DataFrame:
    """``df`` with the outlier probabilities of ``column`` added as
    ``output_col`` (lazy; batch or streaming DataFrames).

    The score column alone goes to Python, as Arrow batches (a scalar
    Arrow UDF, ``arrow_udf``), and is mapped by the Rust transform without
    the GIL; a float column without nulls is read without a copy. A scaler
    fitted on 1-D scores maps each of the given columns on its own; one
    fitted on k columns maps a list of k columns at once (in its fitted
    order; checked against ``feature_names_in_`` when it has names). There
    is one output name per column. The output is a double column (float for
    a float column: the transform of float32 scores is float32); null stays
    null, NaN stays NaN.

    Examples
    --------
    >>> scored = outprob.spark.transform(scaler, df, "score")  # doctest: +SKIP
    """
    cols = [column] if isinstance(column, str) else list(column)
    outs = [output_col] if isinstance(output_col, str) else list(output_col)
    names, _ = score_columns(df, cols)
    width = _fitted_width(scaler)
    if len(outs) != len(names) or (width > 1 and len(names) != width):
        raise ValueError(
            f"the scaler maps {width} score column(s) at once: pass "
            f"{'the columns' if width == 1 else width} and one output name per column, "
            f"got {len(names)} column(s) and {len(outs)} output name(s)"
        )
    fitted_names = getattr(scaler, "feature_names_in_", None)
    if width > 1 and fitted_names is not None and list(fitted_names) != names:
        raise ValueError(f"the scaler was fitted on columns {list(fitted_names)}, got {names}")
    clash = [o for o in outs if o in df.columns]
    if clash or len(set(outs)) != len(outs):
        raise ValueError(f"output column(s) {clash or outs} already exist: choose other names")
    if width == 1:
        types = {f.name: f.dataType for f in df.schema.fields}
        return df.withColumns({
            o: arrow_map(_one_column(scaler, isinstance(types[n], T.FloatType)), [n],
                         T.FloatType() if isinstance(types[n], T.FloatType) else T.DoubleType())
            for n, o in zip(names, outs)
        })
    struct = T.StructType([T.StructField(f"p{j}", T.DoubleType(), True) for j in range(width)])
    packed = "__outprob_probabilities"
    while packed in df.columns:
        packed += "_"
    out = df.withColumn(packed, arrow_map(_columns(scaler, width), names, struct))
    return out.withColumns({o: out[packed][f"p{j}"] for j, o in enumerate(outs)}).drop(packed)


def _one_column(scaler: Any, single: bool) -> Callable[[Any], Any]:
    arrow_type = pa.float32() if single else pa.float64()

    def apply(arr: Any) -> Any:
        x, mask = as_floats(arr)
        return pa.array(scaler.transform(x), type=arrow_type, mask=mask)

    return apply


def _columns(scaler: Any, width: int) -> Callable[..., Any]:
    def apply(*arrs: Any) -> Any:
        xs = [as_floats(a) for a in arrs]
        p = scaler.transform(np.column_stack([x for x, _ in xs]).astype(np.float64))
        return pa.StructArray.from_arrays(
            [pa.array(p[:, j], mask=m) for j, (_, m) in enumerate(xs)],
            names=[f"p{j}" for j in range(width)],
        )

    return apply
