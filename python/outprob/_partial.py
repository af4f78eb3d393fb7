"""Incremental fitting of scalers: ``partial_fit``, ``merge`` and windows
(contract §9, "Scalers").

A scaler that is fitted incrementally keeps one
:class:`outprob.streaming.StreamingFit` (exact moments, a KLL sketch, or an
exact window) in ``_stream``; after each batch the fitted state is rebuilt
from its results and published whole, as ``fit`` does, so ``transform``
keeps its fast path and never sees a mix of two fits.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, Dict, List, Optional

import numpy as np

from ._input import as_float_array, feature_names
from .streaming import StreamingFit, StreamingResult

if TYPE_CHECKING:
    from ._base import ScalerBase


def new_stream(est: "ScalerBase") -> StreamingFit:
    """A fresh :class:`StreamingFit` with the scaler's parameters (raises
    ``TypeError`` for scalers that cannot be fitted incrementally)."""
    est._check_params()
    return StreamingFit(**est._stream_params())


def _same_params(a: StreamingFit, b: StreamingFit) -> bool:
    return a.params == b.params


def partial_fit(est: "ScalerBase", X: Any, stacklevel: int) -> None:
    """Adds a batch to the scaler's stream and publishes the new fit."""
    x = as_float_array(X)
    names = None if type(X) is np.ndarray else feature_names(X)
    fresh = new_stream(est)
    stream: Optional[StreamingFit] = est.__dict__.get("_stream")
    if stream is None:
        if x.ndim not in (1, 2) or (x.ndim == 2 and x.shape[1] == 0):
            raise ValueError(
                "scores must be 1-D (one score vector) or 2-D (n_samples, n_columns) with "
                f"at least one column, got shape {x.shape}"
            )
        _check_first_batch(x)
        stream = fresh
    else:
        if not _same_params(stream, fresh):
            raise ValueError(
                f"the parameters of this {type(est).__name__} changed since its first "
                "partial_fit; call fit() to start again with the new ones"
            )
        state = est._get_state()
        from ._base import _check_names, _shape_message

        if state.ndim == 2 and (x.ndim != 2 or x.shape[1] != state.n_features):
            raise ValueError(_shape_message(type(est).__name__, x, state.n_features))
        if x.ndim != state.ndim:
            raise ValueError(
                f"a batch of shape {x.shape} does not match the 1-D scores fitted so far"
            )
        if type(X) is not np.ndarray or state.names is not None:
            _check_names(est, names, state.names)
            names = state.names
    stream.update(x)
    publish(est, stream, x.ndim, names, stacklevel + 1)


def _check_first_batch(x: np.ndarray) -> None:
    """The first batch must give every column a score: a fit needs one."""
    if x.size == 0:
        raise ValueError("cannot fit on an empty array of scores")
    empty = np.isnan(x).all(axis=0)
    if np.any(empty):
        where = "" if x.ndim == 1 else f" in column {int(np.flatnonzero(empty)[0])}"
        raise ValueError(
            f"all scores{where} are NaN: nothing is left to fit after omitting NaN"
        )


def publish(
    est: "ScalerBase", stream: StreamingFit, ndim: int, names: Any, stacklevel: int
) -> None:
    """Builds the fitted state from the stream's results and publishes it."""
    results = stream.results()
    fits = []
    for j, r in enumerate(results):
        fit, notes = est._stream_column(r, j if ndim == 2 else None)
        fits.append(fit)
        for category, message in notes:
            warnings.warn(message, category, stacklevel=stacklevel)
    state = est._state_of(fits, ndim, names)
    est.__dict__["_stream"] = stream
    est._state = state


def merge(est: "ScalerBase", other: "ScalerBase") -> None:
    """``est.merge(other)``: the union of two partial fits."""
    if type(other) is not type(est):
        raise TypeError(
            f"can only merge another {type(est).__name__}, got {type(other).__name__}"
        )
    theirs: Optional[StreamingFit] = other.__dict__.get("_stream")
    if theirs is None:
        if other.__sklearn_is_fitted__():
            raise ValueError(
                "the other scaler was fitted with fit(), which keeps no streaming state; "
                "merge combines scalers fitted with partial_fit"
            )
        return  # nothing seen: the union is this fit
    ours: Optional[StreamingFit] = est.__dict__.get("_stream")
    if ours is None and est.__sklearn_is_fitted__():
        raise ValueError(
            "this scaler was fitted with fit(), which keeps no streaming state; "
            "merge combines scalers fitted with partial_fit"
        )
    mine = new_stream(est)
    if not _same_params(mine, theirs) or (ours is not None and not _same_params(ours, theirs)):
        raise ValueError("only scalers with the same parameters can be merged")
    if mine.params["window"] is not None:
        raise ValueError(
            "windowed scalers do not merge: a window is the newest scores of one stream"
        )
    state = other._get_state()
    if ours is not None:
        mine_state = est._get_state()
        if (mine_state.ndim, mine_state.n_features) != (state.ndim, state.n_features):
            raise ValueError("the scalers were fitted on different numbers of score columns")
        if not _names_equal(mine_state.names, state.names):
            raise ValueError("the scalers were fitted on columns of different names")
        mine = ours
    mine.merge(theirs)
    publish(est, mine, state.ndim, state.names, 4)


def _names_equal(a: Optional[np.ndarray], b: Optional[np.ndarray]) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return len(a) == len(b) and bool(np.all(a == b))


def refit(est: "ScalerBase") -> None:
    """Refits a windowed scaler now."""
    stream: Optional[StreamingFit] = est.__dict__.get("_stream")
    if stream is None:
        raise ValueError(
            f"this {type(est).__name__} has no streaming state to refit: call partial_fit first"
        )
    stream.refit()
    state = est._get_state()
    publish(est, stream, state.ndim, state.names, 4)


def bounds(r: StreamingResult, first: str, second: str) -> Dict[str, Any]:
    """The stream's size and error bounds as fitted attributes."""
    fit: Dict[str, Any] = {"n_samples_seen_": r.n, "rank_error_": r.rank_error}
    if r.center_interval is not None:
        fit[f"{first}_interval_"] = tuple(r.center_interval)
    if r.scale_interval is not None:
        fit[f"{second}_interval_"] = tuple(r.scale_interval)
    if r.probability_error is not None:
        fit["probability_error_"] = r.probability_error
    return fit


def stream_to_dict(est: "ScalerBase") -> Optional[Dict[str, Any]]:
    stream: Optional[StreamingFit] = est.__dict__.get("_stream")
    return None if stream is None else stream.to_dict()


def stream_from_dict(est: "ScalerBase", data: Any) -> StreamingFit:
    """The checked stream of a ``to_dict``: it must have the scaler's parameters."""
    if not isinstance(data, dict) or "params" not in data:
        raise ValueError("'stream' must be the dict StreamingFit.to_dict() makes")
    stream = StreamingFit.from_dict(data)
    if not _same_params(stream, new_stream(est)):
        raise ValueError("the stored stream's parameters differ from the scaler's")
    if stream._state is None:
        raise ValueError("the stored stream holds no scores")
    return stream


__all__: List[str] = []
