"""The stored state of a :class:`~outprob.streaming.StreamingFit`: its
results, a window's last fit, the linear fit's extremes and the column
codec (contract §9, "Stored state")."""

from __future__ import annotations

import base64
import threading
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

import numpy as np

from .. import _core
from .._common.validation import MAX_COUNT

class StreamingResult(NamedTuple):
    """Fitted parameters of a :class:`StreamingFit` (one score column).

    ``center``/``scale`` are μ and σ (Gaussian) or ``min``/``max`` in
    ``center``/``scale`` for linear scaling. ``center_interval`` and
    ``scale_interval`` hold the exact values with the sketch's confidence
    (``None`` for M-estimates, which carry no guarantee);
    ``probability_error`` bounds ``|p̂ − p|`` over all scores;
    ``rank_error`` is the sketch's ε (0 while it is exact or unused).
    """

    center: float
    scale: float
    scale_used: str
    center_interval: Optional[Tuple[float, float]]
    scale_interval: Optional[Tuple[float, float]]
    probability_error: Optional[float]
    rank_error: float
    n_iter: Optional[int]
    converged: Optional[bool]
    n: int



def _streaming_result(r: Any) -> StreamingResult:
    """A :class:`StreamingResult` from the core's streaming result."""
    n_iter, converged = _iterations(r)
    return StreamingResult(r.center, r.scale, r.scale_used, r.center_interval, r.scale_interval,
                           r.probability_error, r.rank_error, n_iter, converged, r.n)


#: What a window's stored last fit holds per column (its bounds are the
#: exact fit's: points, no rank error).
_CACHED = ("center", "scale", "scale_used", "n_iter", "converged", "n")
_SCALES = ("std", "nmad", "niqr", "trimmed_std", "huber", "tukey", "value")


def _window_result(
    center: float, scale: float, scale_used: str, n_iter: Optional[int],
    converged: Optional[bool], n: int,
) -> StreamingResult:
    """A window's exact fit as a :class:`StreamingResult` (degenerate bounds)."""
    return StreamingResult(center, scale, scale_used, (center, center), (scale, scale), 0.0, 0.0,
                           n_iter, converged, n)


def _iterations(fit: Any) -> Tuple[Optional[int], Optional[bool]]:
    """``n_iter`` and ``converged`` of a fit's M-estimates (None without)."""
    ms = fit.m_estimates
    return (ms[-1].n_iter, all(m.converged for m in ms)) if ms else (None, None)


def _cached_fit(p: Dict[str, Any], stored: Any, seen: List[int]) -> List[StreamingResult]:
    """A window's stored last fit, checked: one per column, its parameters a
    valid map (checked by the core's ``FittedMap``), fitted on 1 to
    ``min(window, seen)`` scores."""
    if not isinstance(stored, list) or len(stored) != len(seen):
        raise ValueError("a window's last fit holds one fit per score column")
    results = []
    for r, n_seen in zip(stored, seen):
        if not isinstance(r, dict) or set(r) != set(_CACHED):
            raise ValueError(f"a window's last fit names exactly {list(_CACHED)}")
        first, second, used, n_iter, converged, n = (r[f] for f in _CACHED)
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in (first, second)):
            raise ValueError("a window's last fit needs two numbers")
        if used not in (_SCALES if p["scaling"] == "gaussian" else ("value",)):
            raise ValueError(f"a window's last fit has an unknown scale_used {used!r}")
        if (n_iter is None) != (converged is None) or not (
            n_iter is None
            or (type(n_iter) is int and 0 <= n_iter <= p["maxiter"] and type(converged) is bool)
        ):
            raise ValueError("a window's last fit has invalid n_iter/converged")
        if type(n) is not int or not 1 <= n <= min(p["window"], n_seen):
            raise ValueError(f"a window's last fit cannot be of {n!r} scores")
        results.append(_window_result(float(first), float(second), used, n_iter, converged, n))
    linear = p["scaling"] == "linear"
    _core.FittedMap({
        "kind": "linear" if linear else "gaussian", "negate": False, "two_d": len(seen) > 1,
        "pretransform": None, "sorted": None,
        "params": {("min" if linear else "center"): [r.center for r in results],
                   ("max" if linear else "scale"): [r.scale for r in results]},
    })
    return results


def _check_batch(a: np.ndarray, nan_policy: str) -> Tuple[int, float, float]:
    """contract §5 for a whole batch, with the messages of the core; returns
    the count of scores (NaN excluded), their min and max."""
    census = _core.part_census(a.reshape(-1))
    if census.inf_count:
        n = census.inf_count
        raise ValueError(
            f"scores contain {n} infinite value{'s' if n != 1 else ''} "
            f"(first at index {census.inf_first}); fitting needs finite scores: drop or clip them "
            "before fitting"
        )
    if census.nan_count and nan_policy == "raise":
        n = census.nan_count
        raise ValueError(
            f"scores contain {n} NaN value{'s' if n != 1 else ''} (first at "
            f"index {census.nan_first}) and nan_policy='raise'; use nan_policy='omit' to ignore them"
        )
    return census.count, census.min, census.max


class _Extremes:
    """The state of a linear fit of one or more columns: count, min and max
    per column in one pass (linear scaling needs no sums, so it keeps
    none). A batch changes every column or none; calls from several threads
    serialise."""

    __slots__ = ("columns", "negate", "nan_policy", "lock")

    def __init__(self, negate: bool, nan_policy: str, columns: int) -> None:
        self.columns = [(0, float("inf"), float("-inf"))] * columns
        self.negate, self.nan_policy = negate, nan_policy
        self.lock = threading.Lock()

    def update(self, x: np.ndarray) -> None:
        k = len(self.columns)
        if (x.ndim == 1 and k != 1) or (x.ndim == 2 and x.shape[1] != k):
            raise ValueError(f"batch of shape {x.shape} does not match the {k} column(s) fitted so far")
        cols = [x] if x.ndim == 1 else [np.ascontiguousarray(x[:, j]) for j in range(k)]
        if k > 1:
            # The whole batch first: a refused batch changes no column.
            _check_batch(x, self.nan_policy)
        batch = [_check_batch(c, self.nan_policy) for c in cols]
        with self.lock:
            self.columns = [_joined(a, b) for a, b in zip(self.columns, batch)]

    def merge(self, other: "_Extremes") -> None:
        theirs = list(other.columns)
        if len(theirs) != len(self.columns):
            raise ValueError("the fits have different numbers of columns")
        with self.lock:
            self.columns = [_joined(a, b) for a, b in zip(self.columns, theirs)]

    def n(self) -> List[int]:
        return [c[0] for c in self.columns]

    def extremes(self) -> List[Tuple[float, float]]:
        if not all(c[0] for c in self.columns):
            raise ValueError("nothing to fit yet: update the fit with scores first")
        return [(-hi, -lo) if self.negate else (lo, hi) for _, lo, hi in self.columns]

    def parts(self) -> List[Dict[str, Any]]:
        return [{"moments": {"n": n, "min": lo, "max": hi}, "sketch": None, "seed": 0}
                for n, lo, hi in self.columns]

    @classmethod
    def from_parts(cls, negate: bool, nan_policy: str, parts: List[Dict[str, Any]]) -> "_Extremes":
        e = cls(negate, nan_policy, len(parts))
        columns = []
        for part in parts:
            moments = part["moments"]
            try:
                count, lo, hi = moments["n"], float(moments["min"]), float(moments["max"])
            except (KeyError, TypeError, ValueError):
                raise ValueError("not a valid linear-fit state: it needs n, min and max") from None
            if type(count) is not int or not 0 <= count <= MAX_COUNT:
                raise ValueError(f"not a valid linear-fit state: n must be in [0, 2^53], got {count!r}")
            if count and not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi):
                raise ValueError("not a valid linear-fit state: extremes")
            columns.append((count, lo, hi) if count else (0, float("inf"), float("-inf")))
        e.columns = columns
        return e


def _joined(a: Tuple[int, float, float], b: Tuple[int, float, float]) -> Tuple[int, float, float]:
    """The count and extremes of two sets of scores together."""
    if not b[0]:
        return a
    if a[0] + b[0] > MAX_COUNT:
        raise ValueError(
            f"a stream counts at most 2^53 scores; {a[0]} seen and {b[0]} more would exceed it"
        )
    return (a[0] + b[0], min(a[1], b[1]), max(a[2], b[2]))


def _encode_parts(parts: Dict[str, Any]) -> Dict[str, Any]:
    sk = parts["sketch"]
    return {"moments": dict(parts["moments"]), "seed": parts["seed"],
            "sketch": None if sk is None else base64.b64encode(bytes(sk)).decode()}


def _decode_parts(d: Dict[str, Any]) -> Dict[str, Any]:
    """A column's stored state as the core reads it (the core checks it)."""
    if set(d) != {"moments", "seed", "sketch"} or not isinstance(d["moments"], dict):
        raise ValueError("a column's state holds exactly 'moments', 'seed' and 'sketch'")
    sk = d["sketch"]
    if sk is not None and not isinstance(sk, str):
        raise ValueError("a column's sketch is base64 text or None")
    return {"moments": dict(d["moments"]), "seed": d["seed"],
            "sketch": None if sk is None else base64.b64decode(sk, validate=True)}
