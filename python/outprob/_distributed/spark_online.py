"""The §12 columns of ``outprob.spark.score_stream``: online p-values, an
online-FDR decision and a monitor, computed on the driver in arrival order
within each micro-batch (by ``order_col``, else the batch's partition
order) and joined back to the batch's rows (contract §12, "Spark").

The state (``OnlineColumns.to_dict()``) before and after each batch is
stored with the fit next to Spark's checkpoint, so a rerun of a batch gets
the same columns and a restarted query continues exactly."""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import numpy as np

from .._sequential.columns import OnlineColumns

_ROW = "__outprob_row"


def with_columns(batch: Any, column: str, order_col: Optional[str],
                 state: Dict[str, Any]) -> Tuple[Any, Dict[str, Any]]:
    """The batch with the online columns, and the state after it. The
    batch should be persisted (its row ids are computed twice)."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    from .spark_engine import as_floats, column_ref

    cols = OnlineColumns.from_dict(state)
    tagged = batch.withColumn(_ROW, F.monotonically_increasing_id())
    picked = [F.col(_ROW), column_ref(column)] + ([column_ref(order_col)] if order_col else [])
    table = tagged.select(*picked).toArrow()
    rows = np.asarray(table.column(0).to_numpy(zero_copy_only=False), dtype=np.int64)
    x = as_floats(table.column(1))[0].astype(np.float64)
    if order_col:
        keys = table.column(2).to_numpy(zero_copy_only=False)
        order = np.lexsort((rows, keys))
    else:
        order = np.argsort(rows, kind="stable")
    extra = cols.compute(np.ascontiguousarray(x[order]))
    data: Dict[str, Any] = {_ROW: rows[order]}
    for name in cols.names():
        v = extra[name]
        data[name] = pa.array(v, from_pandas=True) if v.dtype != bool else pa.array(v)
    spark = batch.sparkSession
    added = spark.createDataFrame(pa.table(data))
    joined = tagged.join(added, on=_ROW, how="left").drop(_ROW)
    return joined, cols.to_dict()


def initial_state(**params: Any) -> Dict[str, Any]:
    """The state before the first batch; checks the parameters."""
    return OnlineColumns(**params).to_dict()
