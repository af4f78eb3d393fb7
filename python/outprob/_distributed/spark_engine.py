"""The Spark engine of outprob's distributed fits (contract §9): score
columns of a DataFrame as Arrow batches, a pass that folds each partition
into a small partial (``mapInArrow``; nothing is shuffled, only the
partials reach the driver), and the native census (counts, extremes and a
KLL sketch in one Spark SQL aggregate, no Python per score).
"""

from __future__ import annotations

import pickle
import warnings
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from .. import _core
from .engine import Engine
from .spark_workers import lacking
from .steps import combined

Columns = Union[str, Sequence[str]]


def column_ref(name: str) -> Column:
    """A top-level column by its exact name (dots and backticks allowed)."""
    return F.col("`" + name.replace("`", "``") + "`")


def score_columns(df: DataFrame, columns: Optional[Columns]) -> Tuple[List[str], int]:
    """The score columns and the dimensionality of the fit: one name is a
    1-D fit, a list (or ``None``: every column) a 2-D fit with names."""
    if not isinstance(df, DataFrame):
        raise TypeError(f"expected a pyspark.sql.DataFrame, got {type(df).__name__}")
    if isinstance(columns, str):
        names, ndim = [columns], 1
    else:
        names, ndim = list(df.columns if columns is None else columns), 2
        if not names:
            raise ValueError("no score columns: pass the name of at least one column")
    fields = {f.name: f.dataType for f in df.schema.fields}
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"column names must be str, got {name!r}")
        if name not in fields:
            raise ValueError(f"no column {name!r}; its columns: {', '.join(df.columns)}")
        if not isinstance(fields[name], T.NumericType):
            raise TypeError(
                f"column {name!r} holds {fields[name].simpleString()}, not numbers: "
                "scores must be a numeric column"
            )
    if len(set(names)) != len(names):
        raise ValueError(f"a score column is named twice: {names}")
    return names, ndim


def as_floats(arr: Any) -> Tuple[np.ndarray, Optional[np.ndarray]]:
    """An Arrow column as a float64 (float32 for float32) NumPy array, and
    its null mask (``None`` without nulls). A float column without nulls is
    viewed, not copied; integers and decimals are rounded to the nearest
    double; nulls become NaN."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if not (pa.types.is_float64(arr.type) or pa.types.is_float32(arr.type)):
        # Rounded to the nearest double, as NumPy and Spark's cast round:
        # a safe cast refuses integers beyond 2^53 (contract §9).
        arr = pc.cast(arr, pa.float64(), safe=False)
    mask = None
    if arr.null_count:
        mask = arr.is_null().to_numpy(zero_copy_only=False)
        arr = arr.fill_null(pa.scalar(float("nan"), arr.type))
    return arr.to_numpy(zero_copy_only=True), mask


def map_in_arrow(df: DataFrame, fn: Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]],
                 schema: Any) -> DataFrame:
    """``df.mapInArrow(fn, schema)`` without PySpark's warning about the
    pandas version (Arrow batches involve no pandas)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "PySpark does not yet fully support pandas", FutureWarning)
        return df.mapInArrow(fn, schema)


def arrow_map(fn: Callable[..., Any], columns: List[str], return_type: T.DataType) -> Column:
    """``fn`` applied to Arrow arrays of ``columns`` (a scalar Arrow UDF:
    only these columns go to Python and one comes back)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "PySpark does not yet fully support pandas", FutureWarning)
        # The function's arity varies with the scaler's columns: no type hints to read.
        warnings.filterwarnings("ignore", "It is preferred to specify type hints", UserWarning)
        udf = F.arrow_udf(fn, return_type, F.ArrowUDFType.SCALAR)
    return udf(*[column_ref(c) for c in columns])


def fold(df: DataFrame, columns: List[str], start: Callable[[], Any],
         step: Callable[[Any, List[np.ndarray]], Any], finish: Callable[[Any], Any]) -> List[bytes]:
    """One pass over the score columns: each partition folds its Arrow
    batches (``acc = step(acc, columns)`` from ``start()``) and returns
    ``finish(acc)`` pickled; the results come back in partition order (a
    fixed order makes merges of sketches reproducible)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        acc = start()
        for cols in _chunks(batches):
            acc = step(acc, cols)
        ctx = TaskContext.get()
        part = ctx.partitionId() if ctx is not None else 0
        out = pickle.dumps(finish(acc), protocol=5)
        yield pa.RecordBatch.from_arrays(
            [pa.array([part], pa.int64()), pa.array([out], pa.binary())], names=["part", "out"]
        )

    selected = df.select(*[column_ref(c) for c in columns])
    try:
        rows = map_in_arrow(selected, run, "part long, out binary").collect()
    except Exception as exc:
        missing = lacking(exc, df.sparkSession)
        if missing is None:
            raise
        raise missing from None
    return [bytes(r["out"]) for r in sorted(rows, key=lambda r: r["part"])]


_EMPTY = np.empty(0)

#: Scores a pass maps at once: Spark's Arrow batches (10⁴ rows by default)
#: are joined up to this many, so that a partial whose combine costs its
#: full size (a dense bucket summary, ~10 MB) is combined a few dozen
#: times per partition, not once per batch; 32 MB of doubles per worker.
CHUNK = 1 << 22


def _chunks(batches: Iterator[pa.RecordBatch]) -> Iterator[List[np.ndarray]]:
    """The batches' columns as float arrays, consecutive batches joined
    (in order) into pieces of about :data:`CHUNK` scores."""
    held: List[List[np.ndarray]] = []
    rows = 0
    for b in batches:
        if not b.num_rows:
            continue
        held.append([as_floats(b.column(i))[0] for i in range(b.num_columns)])
        rows += b.num_rows
        if rows >= CHUNK:
            yield _joined(held)
            held, rows = [], 0
    if held:
        yield _joined(held)


def _joined(held: List[List[np.ndarray]]) -> List[np.ndarray]:
    if len(held) == 1:
        return held[0]
    return [np.concatenate(cols) for cols in zip(*held)]


class SparkColumnEngine(Engine):
    """One score column of a Spark DataFrame: a pass folds every
    partition's Arrow batches with the pass (``mapInArrow``) and combines
    the partials on the driver; a census without moments or pretransform
    is one native aggregate."""

    native_census = True

    def __init__(self, df: DataFrame, name: str) -> None:
        super().__init__()
        self.df, self.name = df, name

    def run(self, step: Any) -> Any:
        native = step.native_census
        if native is not None:
            return self._census(*native)

        def add(acc: Any, xs: List[np.ndarray]) -> Any:
            part = step.map(xs[0])
            return part if acc is None else acc.combine(part)

        def finish(acc: Any) -> Any:
            return (step.map(_EMPTY) if acc is None else acc).to_bytes()

        out = fold(self.df, [self.name], lambda: None, add, finish)
        self.passes += 1
        self.bytes += sum(len(o) for o in out)
        packed = [pickle.loads(o) for o in out] or [finish(None)]  # a frame of no partitions
        return combined(packed)

    def _census(self, negate: bool, sketch_k: int) -> Any:
        """Counts, extremes and a KLL sketch of the oriented scores in one
        Spark SQL aggregate."""
        x = column_ref(self.name).cast("double")
        finite = F.when(~F.isnan(x) & (F.abs(x) != F.lit(float("inf"))), x)
        exprs = [
            F.count(F.lit(1)).alias("rows"),
            F.count(finite).alias("n"),
            F.sum(F.when(x.isNull() | F.isnan(x), 1).otherwise(0)).alias("nan"),
            F.sum(F.when(F.abs(x) == F.lit(float("inf")), 1).otherwise(0)).alias("inf"),
            F.min(finite).alias("lo"),
            F.max(finite).alias("hi"),
        ]
        if sketch_k:
            exprs.append(F.kll_sketch_agg_double(-x if negate else x, sketch_k).alias("sketch"))
        row = self.df.agg(*exprs).first()
        assert row is not None  # a global aggregate has one row
        self.passes += 1
        sk = row["sketch"] if sketch_k else None
        self.bytes += 64 + (0 if sk is None else len(sk))
        # A null is a missing score, as NaN is; Spark does not say where.
        return _core.Partial.census(
            len=int(row["rows"]), count=int(row["n"]), nan_count=int(row["nan"] or 0),
            inf_count=int(row["inf"] or 0),
            min=float("inf") if row["lo"] is None else float(row["lo"]),
            max=float("-inf") if row["hi"] is None else float(row["hi"]),
            sketch=None if sk is None else bytes(sk),
        )


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
