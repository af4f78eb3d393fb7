"""Scoring a Spark Structured Streaming query with a fit that follows the
stream (contract §9, "Spark").

Each micro-batch is scored with the fit of the batches before it and then
added to the fit (``partial_fit`` semantics: per-partition streaming fits
merged on the driver; a ``window`` scaler's batch is brought to the driver
in order, as a window is the newest scores of one stream). The fit is kept
in ``<checkpoint>/outprob-fit.json``: the id of the last batch, the fit
that scored it and the fit after it (``to_dict()`` JSON), replaced
atomically before the batch's output is handed to the sink. Spark runs a
batch again after a failure with the same id and data; the replay is
scored with the stored fit and adds nothing, so a restarted query goes on
as if it had never stopped: no batch lost, none counted twice. The sink
should be idempotent per batch id, as any ``foreachBatch`` sink.
"""

from __future__ import annotations

import copy
import json
import os
import pickle
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

STATE_FILE = "outprob-fit.json"
_FORMAT = "outprob.spark.score_stream"


def _state_path(checkpoint: str) -> str:
    if not isinstance(checkpoint, (str, os.PathLike)):
        raise TypeError(f"checkpoint must be a directory path, got {type(checkpoint).__name__}")
    path = os.fspath(checkpoint)
    if "://" in path and not path.startswith("file://"):
        raise ValueError(
            "the fit is stored next to the checkpoint with an atomic rename, which needs a "
            f"local (or mounted) file system path, got {path!r}"
        )
    return os.path.join(path.removeprefix("file://"), STATE_FILE)


def _read(path: str) -> Optional[Dict[str, Any]]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        return None
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        raise ValueError(f"{path} is not a fit stored by outprob.spark.score_stream")
    return data


def _write(path: str, data: Dict[str, Any]) -> None:
    """Replaces the stored fit atomically (a crash leaves the old or the new file)."""
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _is_fitted(scaler: Any) -> bool:
    return bool(scaler.__sklearn_is_fitted__())


def load_stream_fit(checkpoint: str, scaler_class: Any = None) -> Any:
    """The fit after the last batch a :func:`score_stream` query finished
    (``None`` before its first batch).

    Parameters
    ----------
    checkpoint : str
        The query's checkpoint directory.
    scaler_class : type, optional
        The scaler's class (default: rebuilt by :func:`outprob.from_dict`).
    """
    data = _read(_state_path(checkpoint))
    if data is None:
        return None
    if scaler_class is None:
        from .._registry import from_dict

        return from_dict(data["fit"])
    return scaler_class.from_dict(data["fit"])


def _batch_scores(batch: Any, columns: List[str], ndim: int) -> np.ndarray:
    """The micro-batch's scores on the driver, in partition order (windows)."""
    from .spark_engine import as_floats, column_ref

    table = batch.select(*[column_ref(c) for c in columns]).toArrow()
    xs = [as_floats(table.column(j))[0].astype(np.float64) for j in range(len(columns))]
    return xs[0] if ndim == 1 else np.column_stack(xs)


def _added(scaler: Any, batch: Any, columns: List[str], ndim: int) -> Any:
    """A copy of ``scaler`` that has also seen the micro-batch's scores."""
    from sklearn.base import clone

    from .spark_engine import fold
    from ..streaming._fit import StreamingFit

    new = copy.deepcopy(scaler)
    params = scaler._stream_params()
    if params.get("window") is not None:
        x = _batch_scores(batch, columns, ndim)
        if x.shape[0] and (_is_fitted(new) or not np.isnan(x).all()):
            new.partial_fit(x)
        return new

    def step(acc: Tuple[StreamingFit, int], xs: List[np.ndarray]) -> Tuple[StreamingFit, int]:
        fit, seen = acc
        fit.update(xs[0] if ndim == 1 else np.column_stack(xs))
        return fit, seen + sum(int(np.count_nonzero(~np.isnan(x))) for x in xs)

    parts = fold(batch, columns, lambda: (StreamingFit(**params), 0), step,
                 lambda acc: (acc[0].to_dict(), acc[1]))
    total, scores = StreamingFit(**params), 0
    for p in parts:
        d, count = pickle.loads(p)
        total.merge(StreamingFit.from_dict(d))
        scores += count
    if scores == 0:
        return new  # no score in this batch
    names = np.asarray(columns, dtype=object) if ndim == 2 else None
    seen = clone(scaler)
    seen._publish(total, total.results(), ndim, names, 3)
    new.merge(seen)
    return new


def _unscored(batch: Any, output_col: Any) -> Any:
    """The batch with null probabilities (no fit exists yet)."""
    from pyspark.sql import functions as F

    outs = [output_col] if isinstance(output_col, str) else list(output_col)
    return batch.withColumns({o: F.lit(None).cast("double") for o in outs})


def score_stream(stream_df: Any, scaler: Any, column: Any, sink: Callable[[Any, int], None], *,
                 checkpoint: str, output_col: Any = "probability", refit: str = "partial_fit",
                 trigger: Optional[Dict[str, Any]] = None, query_name: Optional[str] = None,
                 pvalues: bool = False, alert: Optional[str] = None, alpha: float = 0.05,
                 monitor: Optional[str] = None, alarm: float = 100.0, seed: int = 0,
                 order_col: Optional[str] = None) -> Any:
    """Starts a Structured Streaming query that scores ``column`` of every
    micro-batch with the current fit and hands the scored batch to ``sink``.

    Parameters
    ----------
    stream_df : pyspark.sql.DataFrame
        A streaming DataFrame (Kafka, files, ...).
    scaler : outprob scaler
        The initial fit. With ``refit="partial_fit"`` (a ``GaussianScaler``
        or ``LinearScaler``, unfitted or fitted by ``partial_fit``) each
        batch is added to the fit after it is scored; an unfitted scaler is
        first fitted on the first batch. With ``refit="none"`` any fitted
        scaler scores every batch and is never changed.
    column, output_col :
        As for :func:`outprob.spark.transform`.
    sink : callable
        ``sink(scored_batch, batch_id)``, e.g. a write in append mode; called
        again with the same id and rows if Spark reruns a batch.
    checkpoint : str
        The query's checkpoint directory (a local or mounted path); the fit
        is stored in it as ``outprob-fit.json``. A query restarted on the
        same checkpoint resumes the stored fit.
    trigger, query_name :
        Passed to ``DataStreamWriter.trigger(**trigger)`` and ``queryName``.
    pvalues, alert, alpha, monitor, alarm, seed :
        The columns of ``outprob stream`` (contract §12): ``pvalue`` (the
        online conformal p-value against every earlier score of the
        stream), ``alert`` (the online-FDR decision of method ``alert`` at
        ``alpha``), ``log_martingale`` and ``alarm`` (martingale ``monitor``
        at threshold ``alarm``, restarting after each alarm), computed on
        the driver in arrival order within each micro-batch; their state is
        stored with the fit and resumed exactly. 1-D ``column`` only.
    order_col : str, optional
        The arrival order within a micro-batch (e.g. an offset or a time
        stamp; ties by partition order); default the partition order.

    Returns
    -------
    pyspark.sql.streaming.StreamingQuery
        The started query.
    """
    from .spark_engine import score_columns, transform

    if refit not in ("partial_fit", "none"):
        raise ValueError(f"refit must be 'partial_fit' or 'none', got {refit!r}")
    if not getattr(stream_df, "isStreaming", False):
        raise TypeError("stream_df must be a streaming DataFrame (spark.readStream...)")
    columns, ndim = score_columns(stream_df, column)
    path = _state_path(checkpoint)
    online: Optional[Dict[str, Any]] = None
    if pvalues or alert is not None or monitor is not None:
        from .spark_online import initial_state, with_columns

        if ndim != 1:
            raise ValueError("p-values, alerts and a monitor need one score column")
        online = initial_state(pvalues=pvalues, alert=alert, alpha=alpha, monitor=monitor,
                               alarm=alarm, seed=seed,
                               higher_is_outlier=bool(getattr(scaler, "higher_is_outlier", True)))
    cls = type(scaler)
    if refit == "none":
        if not _is_fitted(scaler):
            raise ValueError("refit='none' scores with the given fit: fit the scaler first")
    else:
        scaler._stream_params()  # TypeError for scalers that cannot be fitted incrementally
        if _is_fitted(scaler) and getattr(scaler, "_stream", None) is None:
            raise ValueError(
                "this scaler was fitted with fit(), which keeps no streaming state to add batches "
                "to: pass an unfitted scaler or one fitted with partial_fit, or refit='none'"
            )
        stored = _read(path)
        if stored is not None and cls.from_dict(stored["fit"]).get_params() != scaler.get_params():
            raise ValueError(
                f"{path} holds a fit with other parameters than the scaler passed: use another "
                "checkpoint, or the same parameters"
            )
    initial = copy.deepcopy(scaler)

    def scored(scoring: Any, batch: Any, before: Optional[Dict[str, Any]]) -> Any:
        out = transform(scoring, batch, column, output_col=output_col)
        if before is None:
            return out
        return with_columns(out, columns[0], order_col, before)[0]

    def each(batch: Any, batch_id: int) -> None:
        if refit == "none" and online is None:
            sink(transform(initial, batch, column, output_col=output_col), batch_id)
            return
        stored = _read(path)
        last = -1 if stored is None else int(stored["batch_id"])
        if batch_id < last:
            raise RuntimeError(
                f"Spark runs batch {batch_id}, but the stored fit already holds batch {last}: "
                f"{path} belongs to another query or checkpoint"
            )
        if stored is not None and (stored.get("online") is None) != (online is None):
            raise ValueError(f"{path} was stored with other p-value, alert or monitor settings")
        if batch_id == last:  # a rerun: its scores are in the fit already
            assert stored is not None
            scoring = cls.from_dict(stored["scored_with"])
            before = stored.get("online_before")
            batch.persist()
        else:
            current = initial if stored is None else cls.from_dict(stored["fit"])
            before = online if stored is None else stored.get("online")
            batch.persist()
            updated = current if refit == "none" else _added(current, batch, columns, ndim)
            scoring = current if _is_fitted(current) else updated
            if not _is_fitted(updated):  # no score seen yet: nothing to store or score with
                # (nor any p-value: the online columns' state is unchanged)
                try:
                    out = _unscored(batch, output_col)
                    sink(out if before is None else with_columns(out, columns[0], order_col, before)[0],
                         batch_id)
                finally:
                    batch.unpersist()
                return
            record = {"format": _FORMAT, "version": 1, "batch_id": int(batch_id),
                      "scored_with": scoring.to_dict(), "fit": updated.to_dict()}
            if before is not None:
                # The columns' state after the batch, computed before the
                # sink sees it, is stored with the fit (one atomic write).
                _, after = with_columns(batch, columns[0], order_col, before)
                record.update(online_before=before, online=after)
            _write(path, record)
        try:
            sink(scored(scoring, batch, before), batch_id)
        finally:
            batch.unpersist()

    writer = stream_df.writeStream.foreachBatch(each).option("checkpointLocation", os.fspath(checkpoint))
    if trigger:
        writer = writer.trigger(**trigger)
    if query_name:
        writer = writer.queryName(query_name)
    return writer.start()
