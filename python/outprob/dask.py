"""Exact fitting on Dask collections (contract §9).

``fit(scaler, collection)`` fits an outprob scaler to a ``dask.array``
(1-D, or 2-D with one score column per column) or a ``dask.dataframe``
(Series or DataFrame; every column a score column) and returns the fitted
scaler: the same center and scale as the in-memory fit of the same scores —
order statistics bit for bit, mean bit for bit, SD and trimmed SD within
1e-15 relative, M-estimates within 1e-12 relative — using only map steps
over partitions and small reductions on the client (no shuffle). The
passes and their bound are those of the planner ``outprob._distributed.planner`` (contract §9),
which this module runs with Dask: one delayed task per partition and pass,
the partials combined on the client in partition order. ``method="sketch"``
fits in one pass from merged per-partition KLL sketches, with the error
bounds of :class:`outprob.streaming.StreamingFit` instead of exactness.

``transform(scaler, collection)`` is lazy (``map_blocks`` /
``map_partitions``).
"""

from __future__ import annotations

import pickle
from typing import Any, List, Optional, Tuple

import numpy as np

from ._common.optional import require

require("dask.array", "outprob.dask")  # the extra this module is for
import dask  # noqa: E402
import dask.array as da  # noqa: E402

from ._common.validation import as_float_array
from ._distributed.steps import combined
from ._distributed.engine import Engine
from ._distributed.planner import FitInfo, fit_exact, fit_sketch

__all__ = ["fit", "transform", "FitInfo"]


def _is_dataframe(c: Any) -> bool:
    return hasattr(c, "map_partitions") and not isinstance(c, da.Array)


def _partitions(collection: Any) -> Tuple[List[Any], int, int]:
    """Delayed partitions (whole rows), their dimensionality, columns."""
    if isinstance(collection, da.Array):
        if collection.ndim == 1:
            return list(collection.to_delayed().ravel()), 1, 1
        if collection.ndim != 2:
            raise ValueError(f"scores must be 1-D or 2-D, got {collection.ndim}-D")
        arr = collection.rechunk({1: -1})
        return list(arr.to_delayed().ravel()), 2, arr.shape[1]
    if _is_dataframe(collection):
        collection = _unconverted(collection)
        _check_text(collection)
        ncols = 1 if collection.ndim == 1 else len(collection.columns)
        return list(collection.to_delayed()), collection.ndim, ncols
    raise TypeError(f"expected a dask array or dataframe, got {type(collection).__name__}")


def _unconverted(frame: Any) -> Any:
    """The collection as its pandas data hold it: Dask turns the object
    columns behind ``from_pandas`` into text (its option
    'dataframe.convert-string'), numbers included, so such a collection is
    read from its pandas data unconverted — an object column of numbers
    then fits as the in-memory fit fits it, and one of text is still
    refused as text."""
    try:
        from dask.dataframe.dask_expr import new_collection
        from dask.dataframe.dask_expr.io.io import FromPandas
    except ImportError:  # a Dask without expressions: the collection as it is
        return frame
    expr = getattr(frame, "expr", None)
    if type(expr) is not FromPandas or not expr.operand("pyarrow_strings_enabled"):
        return frame
    return new_collection(expr.substitute_parameters({"pyarrow_strings_enabled": False}))


def _check_text(frame: Any) -> None:
    """Text columns are refused before any pass, as the in-memory fit
    refuses text; Dask turns object columns into text by default, which
    the message explains (an object column of numbers fits once Dask
    keeps it as objects)."""
    import pandas as pd

    dtypes = [frame.dtype] if frame.ndim == 1 else list(frame.dtypes)
    names = [getattr(frame, "name", None)] if frame.ndim == 1 else list(frame.columns)
    text = [n for n, t in zip(names, dtypes) if isinstance(t, pd.StringDtype)]
    if text:
        from ._common.exceptions import InputError

        where = "" if text[0] is None else f" (column {text[0]!r})"
        raise InputError(
            f"the Dask collection holds text{where}, and scores must be real "
            "numbers: text is never parsed. Dask stores the object columns of pandas data as "
            "text (its option 'dataframe.convert-string'): cast the numbers before building the "
            "collection (e.g. series.astype(float)), or build it with "
            "dask.config.set({'dataframe.convert-string': False})"
        )


def _column(part: Any, j: int, ndim: int) -> np.ndarray:
    a = np.asarray(part)
    if ndim == 2:
        a = a[:, j] if a.ndim == 2 else a.reshape(-1, 1)[:, j]
    # as_float_array also aligns buffers that arrive over the wire unaligned.
    return as_float_array(a.reshape(-1))


class _DaskColumnEngine(Engine):
    """One score column of a Dask collection: a pass is one delayed task
    per partition, the partials combined on the client."""

    def __init__(self, parts: List[Any], ndim: int, j: int) -> None:
        super().__init__()
        self.parts, self.ndim, self.j = parts, ndim, j

    def run(self, step: Any) -> Any:
        ndim, j = self.ndim, self.j

        def task(part: Any) -> Any:
            return step.map(_column(part, j, ndim)).to_bytes()

        out = list(dask.compute(*[dask.delayed(task)(p) for p in self.parts]))
        self.passes += 1
        self.bytes += len(pickle.dumps(out, protocol=5))
        return combined(out)


def _names(collection: Any, ndim: int) -> Any:
    """The column names a DataFrame fit records (as scikit-learn would)."""
    if not _is_dataframe(collection) or ndim != 2:
        return None
    from ._common.validation import feature_names

    return feature_names(collection)


def fit(scaler: Any, collection: Any, *, method: str = "exact", k: Optional[int] = None,
        collect_max: int = 1 << 20, return_info: bool = False) -> Any:
    """Fits ``scaler`` (unfitted or not; it is not modified) to a Dask
    collection and returns the fitted scaler (and a :class:`FitInfo` with
    ``return_info=True``). See the module docstring for exactness and
    contract §9 for the passes.

    Parameters
    ----------
    scaler : GaussianScaler or LinearScaler
        Every option of :class:`~outprob.GaussianScaler` is fitted exactly
        (``pretransform``, ``fixed_center``, ``lam``); ``window`` and
        ``trim="auto"`` are refused (``ValueError``), as are scalers whose
        fit reads every score (``TypeError``, naming why).
    collection : dask.array.Array or dask.dataframe.DataFrame/Series
    method : "exact" or "sketch"
    k : int, optional
        The sketch's k of ``method="sketch"`` (default: the scaler's ``k``).
    collect_max : int
        The most values a pass collects to the client for a selection.

    >>> import dask.array as da, numpy as np, outprob, outprob.dask
    >>> x = da.from_array(np.arange(10.0), chunks=3)
    >>> s = outprob.dask.fit(outprob.GaussianScaler("median", "nmad"), x)
    >>> float(s.center_), float(s.scale_) == float(outprob.stats.nmad(np.arange(10.0)))
    (4.5, True)
    """
    if method not in ("exact", "sketch"):
        raise ValueError(f"method must be 'exact' or 'sketch', got {method!r}")
    parts, ndim, ncols = _partitions(collection)
    engines = [_DaskColumnEngine(parts, ndim, j) for j in range(ncols)]
    names = _names(collection, ndim)
    if method == "sketch":
        fitted, info = fit_sketch(scaler, engines, ndim, names, k)
    else:
        size = collection.shape[0] if isinstance(collection, da.Array) else None
        n_hint = int(size) if size is not None and np.isfinite(size) else None
        fitted, info = fit_exact(scaler, engines, ndim, names, collect_max, n_hint)
    return (fitted, info) if return_info else fitted


def transform(scaler: Any, collection: Any) -> Any:
    """Lazily applies a fitted scaler to every block/partition.

    >>> import dask.array as da, numpy as np, outprob, outprob.dask
    >>> s = outprob.GaussianScaler().fit(np.arange(10.0))
    >>> p = outprob.dask.transform(s, da.from_array(np.arange(10.0), chunks=4))
    >>> bool(np.array_equal(p.compute(), s.transform(np.arange(10.0))))
    True
    """
    if isinstance(collection, da.Array):
        arr = collection if collection.ndim == 1 else collection.rechunk({1: -1})
        dtype = np.float32 if arr.dtype == np.float32 else np.float64

        def apply_block(block: np.ndarray) -> Any:
            # transform aligns blocks that arrive over the wire unaligned.
            return scaler.transform(block)

        return da.map_blocks(apply_block, arr, dtype=dtype)
    if _is_dataframe(collection):
        def apply(df: Any) -> Any:
            named = hasattr(scaler, "feature_names_in_")
            out = scaler.transform(df if named else np.asarray(df))
            return type(df)(out, index=df.index, **({"columns": df.columns} if df.ndim == 2 else {"name": df.name}))
        return collection.map_partitions(apply)
    raise TypeError(f"expected a dask array or dataframe, got {type(collection).__name__}")
