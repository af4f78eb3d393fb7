"""``ConformalScaler.partial_fit``, ``merge`` and windows (contract §11).

Two kinds of streaming calibration:

* a KLL sketch per score column (the core's, with DataSketches' bytes):
  the p-value counts the sketch's weighted sample and adds its rank-error
  bound ⌈εn⌉ to the count of calibration scores ≥ s, so that it is never
  below the exact p-value while every rank query is within εn (DataSketches'
  ε: in 99 % of sketches); sketches merge;
* ``window=W``: the newest W scores (NaN omitted), exactly, refitted at
  every batch.

After each batch the fitted state is rebuilt and published whole, as ``fit``
does.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional, Protocol

import numpy as np

from .. import _core
from .._common.validation import (
    as_float_array,
    check_names,
    check_threads,
    feature_names,
    shape_message,
)
from .._maps.stored_state import State
from . import stored_state as _stored



class ConformalScaler(Protocol):
    """What the streaming calibration reads of and writes to its scaler
    (:class:`outprob.ConformalScaler`, which this module serves and so does
    not import)."""

    k: int
    seed: int
    window: Optional[int]
    threads: Optional[int]
    nan_policy: str
    contamination: Any
    higher_is_outlier: bool
    _state: Any

    def get_params(self, deep: bool = True) -> Dict[str, Any]: ...
    def __sklearn_is_fitted__(self) -> bool: ...
    def _check_params(self) -> None: ...
    def _spec_params(self) -> Dict[str, Any]: ...
    def _mc_fields(self, n: int) -> Dict[str, Any]: ...
    def calibrate(self, sorted_: np.ndarray) -> Dict[str, Any]: ...
    def _state_from(
        self, fits: List[Dict[str, Any]], ndim: int, names: Optional[np.ndarray],
        spec: Dict[str, Any], negate: bool, sketches: Optional[List[Any]] = None,
    ) -> State: ...


@dataclass
class Stream:
    """The streaming calibration of a scaler: one sketch or window per
    score column, and the parameters and kind of scores it was made with."""

    params: Dict[str, Any]
    ndim: int
    names: Optional[np.ndarray]
    sketches: Optional[List[Any]] = None
    buffers: Optional[List[np.ndarray]] = None
    seen: List[int] = field(default_factory=list)


def _check_batch(x: np.ndarray, nan_policy: str) -> None:
    """Contract §5 for a whole batch, before any column changes (the core's
    check and messages; the first index in C order)."""
    _core.check_scores(np.ascontiguousarray(x).reshape(-1), nan_policy=nan_policy)


def partial_fit(est: "ConformalScaler", X: Any) -> None:
    """Adds a batch of calibration scores and publishes the new fit."""
    x = as_float_array(X)
    names = None if type(X) is np.ndarray else feature_names(X)
    est._check_params()
    params = est.get_params(deep=False)
    stream: Optional[Stream] = est.__dict__.get("_calibration_stream")
    if stream is None:
        if x.ndim == 2 and x.shape[1] == 0:
            raise ValueError(
                f"scores of shape {x.shape} hold no score column: 0 feature(s) "
                f"(shape={x.shape}) while a minimum of 1 is required."
            )
        if x.ndim not in (1, 2):
            raise ValueError(
                "scores must be 1-D (one score vector) or 2-D (n_samples, n_columns) with "
                f"at least one column, got shape {x.shape}"
            )
        if x.size == 0:
            raise ValueError("cannot fit on an empty array of scores")
        empty = np.isnan(x).all(axis=0)
        if np.any(empty):
            where = "" if x.ndim == 1 else f" in column {int(np.flatnonzero(empty)[0])}"
            raise ValueError(f"all scores{where} are NaN: nothing is left to fit after omitting NaN")
        if est.window is None and est.contamination is not None:
            raise ValueError(
                "contamination= trims the calibration scores, which a sketch cannot do: "
                "use partial_fit with window=, or fit()"
            )
        k = 1 if x.ndim == 1 else x.shape[1]
        stream = Stream(params, x.ndim, names, seen=[0] * k)
        if est.window is None:
            stream.sketches = [_core.ConformalSketch(k=int(est.k), seed=int(est.seed)) for _ in range(k)]
        else:
            stream.buffers = [np.empty(0) for _ in range(k)]
    else:
        if stream.params != params:
            raise ValueError(
                f"the parameters of this {type(est).__name__} changed since its first "
                "partial_fit; call fit() to start again with the new ones"
            )
        k = len(stream.seen)
        if stream.ndim == 2 and (x.ndim != 2 or x.shape[1] != k):
            raise ValueError(shape_message(type(est).__name__, x, k))
        if x.ndim != stream.ndim:
            raise ValueError(f"a batch of shape {x.shape} does not match the 1-D scores fitted so far")
        if type(X) is not np.ndarray or stream.names is not None:
            check_names(est, names, stream.names)
    _check_batch(x, est.nan_policy)
    columns = [x] if x.ndim == 1 else [np.ascontiguousarray(x[:, j]) for j in range(x.shape[1])]
    # The batch goes into a copy: the stream and the fit change together
    # once the new fit is made, or not at all (a refused batch is not kept,
    # contract §9).
    publish(est, _added(est, stream, columns))


def _added(est: "ConformalScaler", stream: Stream, columns: List[np.ndarray]) -> Stream:
    """A new stream: ``stream`` (unchanged) with a batch added to each column."""
    negate = not est.higher_is_outlier
    seen = list(stream.seen)
    if stream.sketches is not None:
        sketches = [_copy(sk, est.seed) for sk in stream.sketches]
        for j, c in enumerate(columns):
            seen[j] += sketches[j].update(c, nan_policy=est.nan_policy, negate=negate)
        return replace(stream, sketches=sketches, seen=seen)
    assert stream.buffers is not None and est.window is not None
    buffers = list(stream.buffers)
    for j, c in enumerate(columns):
        kept = c[~np.isnan(c)].astype(np.float64)
        if negate:
            kept = -kept
        seen[j] += kept.size
        buffers[j] = np.concatenate([buffers[j], kept])[-int(est.window):]
    return replace(stream, buffers=buffers, seen=seen)


def _copy(sketch: Any, seed: int) -> Any:
    """A copy of a sketch (its bytes read back: the same state, so the same
    future compactions)."""
    return _core.ConformalSketch.deserialize(sketch.serialize(), seed=int(seed))


def _state(est: "ConformalScaler", stream: Stream, spec: Dict[str, Any]) -> State:
    """The fitted state of a stream (the scores are stored oriented)."""
    negate = not est.higher_is_outlier
    if stream.sketches is not None:
        fits = [
            {"n_samples_seen_": int(i.n), "rank_error_": float(i.rank_error),
             "n_calibration_": int(i.n), **est._mc_fields(int(i.n))}
            for i in (sk.info() for sk in stream.sketches)
        ]
        return est._state_from(fits, stream.ndim, stream.names, spec, negate, stream.sketches)
    assert stream.buffers is not None
    threads = check_threads(est.threads)
    fits = []
    for buf, seen in zip(stream.buffers, stream.seen):
        fit = est.calibrate(_core.fit_rank(buf, nan_policy="omit", negate=False, threads=threads))
        fit.update(n_samples_seen_=int(min(seen, buf.size)), rank_error_=0.0)
        fits.append(fit)
    return est._state_from(fits, stream.ndim, stream.names, spec, negate)


def publish(est: "ConformalScaler", stream: Stream) -> None:
    state = _state(est, stream, est._spec_params())
    est.__dict__["_calibration_stream"] = stream
    est._state = state


def republish(est: "ConformalScaler") -> None:
    stream: Optional[Stream] = est.__dict__.get("_calibration_stream")
    if stream is None:
        raise ValueError(
            f"this {type(est).__name__} has no streaming state to refit: call partial_fit first"
        )
    publish(est, stream)


def sketches_of(est: "ConformalScaler") -> Optional[List[Any]]:
    stream: Optional[Stream] = est.__dict__.get("_calibration_stream")
    return None if stream is None else stream.sketches


def merge(est: "ConformalScaler", other: "ConformalScaler") -> None:
    """``est.merge(other)``: the union of two sketch calibrations."""
    if type(other) is not type(est):
        raise TypeError(f"can only merge another {type(est).__name__}, got {type(other).__name__}")
    theirs: Optional[Stream] = other.__dict__.get("_calibration_stream")
    ours: Optional[Stream] = est.__dict__.get("_calibration_stream")
    for s, who in ((theirs, other), (ours, est)):
        if s is None and who.__sklearn_is_fitted__():
            raise ValueError(
                "a scaler fitted with fit() keeps no streaming state; merge combines scalers "
                "fitted with partial_fit"
            )
    if est.window is not None or other.window is not None:
        raise ValueError("windowed scalers do not merge: a window is the newest scores of one stream")
    if theirs is None:
        return
    if est.get_params(deep=False) != theirs.params or (ours is not None and ours.params != theirs.params):
        raise ValueError("only scalers with the same parameters can be merged")
    copies = [_copy(sk, est.seed) for sk in theirs.sketches or []]
    if ours is None:
        merged = Stream(dict(theirs.params), theirs.ndim, theirs.names, copies, None, list(theirs.seen))
    else:
        if (ours.ndim, len(ours.seen)) != (theirs.ndim, len(theirs.seen)):
            raise ValueError("the scalers were fitted on different numbers of score columns")
        same_names = (ours.names is None and theirs.names is None) or (
            ours.names is not None and theirs.names is not None
            and len(ours.names) == len(theirs.names) and bool(np.all(ours.names == theirs.names))
        )
        if not same_names:
            raise ValueError("the scalers were fitted on columns of different names")
        mine = [_copy(sk, est.seed) for sk in ours.sketches or []]
        for a, b in zip(mine, copies):
            a.merge(b)
        merged = Stream(dict(ours.params), ours.ndim, ours.names, mine, None,
                        [a + b for a, b in zip(ours.seen, theirs.seen)])
    publish(est, merged)


def to_dict(est: "ConformalScaler") -> Optional[Dict[str, Any]]:
    stream: Optional[Stream] = est.__dict__.get("_calibration_stream")
    if stream is None:
        return None
    if stream.sketches is not None:
        return {"kind": "sketch", "seen": list(stream.seen),
                "sketches": [base64.b64encode(sk.serialize()).decode() for sk in stream.sketches]}
    assert stream.buffers is not None
    return {"kind": "window", "seen": list(stream.seen), "buffers": [b.tolist() for b in stream.buffers]}


def restore(
    est: "ConformalScaler",
    data: Any,
    ncols: int,
    ndim: int,
    names: Optional[np.ndarray],
    negate: bool,
) -> State:
    """The state of a stored stream (checked: every value of its kind, one
    sketch or window per column, each holding as many scores as it counts
    — all of them for a sketch, the newest ``min(window, seen)`` for a
    window) and the stream itself."""
    if not isinstance(data, dict) or data.get("kind") not in ("sketch", "window"):
        raise ValueError("'stream' must be the dict ConformalScaler.to_dict() makes")
    unknown = sorted(set(data) - {"kind", "seen", "sketches", "buffers"})
    if unknown:
        raise ValueError(f"unknown keys in 'stream': {unknown}")
    seen = data.get("seen")
    if not isinstance(seen, list) or len(seen) != ncols:
        raise ValueError("'stream' needs one count of scores seen per column")
    seen = [_stored.count(s, "stream seen", 1) for s in seen]
    stream = Stream(est.get_params(deep=False), ndim, names, seen=seen)
    if data["kind"] == "sketch":
        if est.window is not None:
            raise ValueError("a sketch stream does not fit a windowed scaler")
        if est.contamination is not None:
            raise ValueError("a sketch stream cannot be trimmed: contamination= needs window=")
        raw = data.get("sketches")
        if not isinstance(raw, list) or len(raw) != ncols or "buffers" in data:
            raise ValueError("'stream' needs one sketch per column")
        try:
            stream.sketches = [
                _core.ConformalSketch.deserialize(base64.b64decode(s, validate=True), seed=int(est.seed))
                for s in raw
            ]
        except (TypeError, ValueError) as exc:
            raise ValueError(f"stream sketch: {exc}") from None
        if any(sk.info().k != est.k for sk in stream.sketches):
            raise ValueError(f"a stored sketch's k contradicts the parameter k = {est.k}")
        if any(sk.info().n != s for sk, s in zip(stream.sketches, seen)):
            raise ValueError("stream seen contradicts the number of scores its sketch holds")
    else:
        if est.window is None:
            raise ValueError("a window stream needs a windowed scaler")
        raw = data.get("buffers")
        if not isinstance(raw, list) or len(raw) != ncols or "sketches" in data:
            raise ValueError("'stream' needs one window per column")
        buffers = [_stored.scores(b, "stream buffers") for b in raw]
        for b, s in zip(buffers, seen):
            if b.size != min(int(est.window), s):
                raise ValueError(
                    f"a stored window of {b.size} scores contradicts its count: a window of "
                    f"{est.window} that has seen {s} scores holds the newest {min(int(est.window), s)}"
                )
        stream.buffers = buffers
    state = _state(est, stream, est._spec_params())
    est.__dict__["_calibration_stream"] = stream
    return state
