"""Conformal p-values that use labels (contract §13): Label-Trim's
candidates and the removal of annotated outliers from the calibration set
(Bashari, Sesia & Romano, ICML 2025), integrative p-values with labelled
outliers (Liang, Sesia & Sun, JRSS-B 2024) and weighted p-values under
covariate shift (Tibshirani et al. 2019; Jin & Candès 2023).

The arithmetic is the core's (``_core.WeightedCalibration``,
``_core.IntegrativeCalibration``); this module checks the user's arrays,
builds the fitted maps a :class:`~outprob.ConformalScaler` publishes and
stores them.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

import numpy as np
import numpy.typing as npt

from .. import _core
from .._common.public import public
from .._common.validation import as_float_array, check_int
from .._maps.stored_state import State


@public("outprob")
def label_trim_candidates(calibration_scores: npt.ArrayLike, budget: int) -> npt.NDArray[np.intp]:
    r"""The calibration points to show a person under Label-Trim: the
    indices of the ``budget`` highest scores, highest first (ties in input
    order; NaN scores are never candidates).

    Label-Trim (Bashari, Sesia & Romano, ICML 2025) cleans a calibration
    set that may hold outliers: the most suspicious points are annotated,
    and those annotated as outliers are dropped with
    ``ConformalScaler().fit(scores, exclude=...)``; unannotated points and
    annotated inliers stay. Contract §13 states what the p-values then
    guarantee.

    Parameters
    ----------
    calibration_scores : array_like, 1-D
        Outlier scores of the calibration points (higher = more outlying).
    budget : int
        How many points can be annotated (≥ 0; more than the scores means
        all of them).

    Returns
    -------
    numpy.ndarray of intp
        Indices into ``calibration_scores``.

    Examples
    --------
    >>> import outprob
    >>> scores = [0.2, 3.1, 0.4, 2.5, 0.1, 3.1]
    >>> outprob.label_trim_candidates(scores, 3)
    array([1, 5, 3])
    >>> flagged = [1, 3]                       # what the annotator said
    >>> s = outprob.ConformalScaler().fit(scores, exclude=flagged)
    >>> int(s.n_calibration_)
    4
    """
    s = as_float_array(calibration_scores, "calibration_scores")
    if s.ndim != 1:
        raise ValueError(f"calibration_scores must be 1-D, got shape {s.shape}")
    budget = check_int(budget, "budget", 0)
    keep = np.flatnonzero(~np.isnan(s))
    v = -s[keep].astype(np.float64)
    if 0 < budget < v.size:
        # The first `budget` of a stable sort of v: every value below the
        # budget-th smallest t, then the first of the ties at t in input
        # order; a partition finds t, so only those are sorted.
        t = np.partition(v, budget - 1)[budget - 1]
        below = np.flatnonzero(v < t)
        ties = np.flatnonzero(v == t)[: budget - below.size]
        keep = keep[np.concatenate([below, ties])]
        v = -s[keep].astype(np.float64)
    order = keep[np.argsort(v, kind="stable")]
    return np.ascontiguousarray(order[:budget], dtype=np.intp)


def drop_rows(x: np.ndarray, exclude: Any) -> "tuple[np.ndarray, int]":
    """``x`` without the rows ``exclude`` names (distinct integer indices
    in range, negative ones counting from the end), and how many."""
    if exclude is None:
        return x, 0
    idx = np.asarray(exclude)
    if idx.size == 0:
        return x, 0
    if idx.ndim != 1 or idx.dtype == bool or not np.issubdtype(idx.dtype, np.integer):
        raise TypeError("exclude must be a 1-D sequence of integer row indices")
    n = x.shape[0] if x.ndim else 1
    if np.any(idx < -n) or np.any(idx >= n):
        raise ValueError(f"exclude holds indices outside the {n} calibration rows")
    idx = np.where(idx < 0, idx + n, idx)
    if np.unique(idx).size != idx.size:
        raise ValueError("exclude holds an index twice")
    keep = np.ones(n, dtype=bool)
    keep[idx] = False
    return np.ascontiguousarray(x[keep]), int(idx.size)


def _weights(w: Any, name: str, size: int) -> np.ndarray:
    a = np.ascontiguousarray(as_float_array(w, name), dtype=np.float64)
    if a.ndim != 1 or a.size != size:
        raise ValueError(f"{name} must be 1-D with one weight per score ({size}), got shape {a.shape}")
    return a


class WeightedMap:
    """The fitted map of a weighted :class:`ConformalScaler`: p-values need
    each test score's weight, so ``transform`` without them refuses."""

    __slots__ = ("calibration", "spec", "complementary")

    def __init__(self, calibration: Any, spec: Dict[str, Any], complementary: bool = True) -> None:
        self.calibration, self.spec, self.complementary = calibration, spec, complementary

    def complement(self, complementary: bool) -> "WeightedMap":
        return WeightedMap(self.calibration, self.spec, complementary)

    def transform(self, x: Any, out: Optional[np.ndarray] = None, *, threads: int = 0) -> Any:
        raise ValueError("a weighted ConformalScaler needs the test scores' weights: "
                         "call pvalues(X, weights=...)")

    def pvalues(self, x: np.ndarray, weights: Any, threads: int) -> np.ndarray:
        q = np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
        w = _weights(weights, "weights", q.size)
        out = np.empty(q.size)
        self.calibration.pvalues(q, w, out, tie_break=self.spec["tie_break"], seed=self.spec["seed"],
                                 complement=self.complementary, threads=threads)
        return out.reshape(np.shape(x))


class IntegrativeMap:
    """The fitted map of an integrative :class:`ConformalScaler`: test rows
    (a, b) — or single scores after a 1-D fit — to integrative p-values."""

    __slots__ = ("calibration", "ndim", "complementary")

    def __init__(self, calibration: Any, ndim: int, complementary: bool = True) -> None:
        self.calibration, self.ndim, self.complementary = calibration, ndim, complementary

    def complement(self, complementary: bool) -> "IntegrativeMap":
        return IntegrativeMap(self.calibration, self.ndim, complementary)

    def transform(self, x: Any, out: Optional[np.ndarray] = None, *, threads: int = 0) -> Any:
        x = np.asarray(x)
        if self.ndim == 2:
            if x.ndim != 2 or x.shape[1] != 2:
                raise ValueError(f"an integrative fit on (a, b) score pairs maps shape (m, 2), got {x.shape}")
            a = np.ascontiguousarray(x[:, 0], dtype=np.float64)
            b = np.ascontiguousarray(x[:, 1], dtype=np.float64)
            shape: Any = (x.shape[0],)
        else:
            a = b = np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
            shape = x.shape
        result = np.empty(a.size)
        self.calibration.pvalues(a, b, result, complement=self.complementary)
        result = result.reshape(shape).astype(x.dtype if x.dtype == np.float32 else np.float64, copy=False)
        if out is not None:
            out[...] = result
            return out
        return result


def fit_weighted(scaler: Any, x: np.ndarray, weights: Any, excluded: int, spec: Dict[str, Any]) -> State:
    """The published state of a weighted fit on 1-D scores ``x``."""
    if x.ndim != 1:
        raise ValueError(f"weighted conformal p-values take 1-D calibration scores, got shape {x.shape}")
    w = _weights(weights, "weights", x.size)
    negate = not scaler.higher_is_outlier
    cal = _core.WeightedCalibration(np.ascontiguousarray(x, dtype=np.float64), w,
                                    nan_policy=scaler.nan_policy, negate=negate)
    n, total = cal.sizes
    keep = ~np.isnan(x)
    attributes = {"n_calibration_": int(n), "total_weight_": float(total), "excluded_": excluded,
                  "trimmed_": 0, "contamination_": 0.0, "spec": dict(spec),
                  "_labelled": {"kind": "weighted", "excluded": excluded, "scores": x[keep], "weights": w[keep]}}
    return State(attributes, 1, 1, None, negate, WeightedMap(cal, spec))


def fit_integrative(scaler: Any, x: np.ndarray, outliers: Any, excluded: int, spec: Dict[str, Any]) -> State:
    """The published state of an integrative fit: ``x`` the inliers'
    scores, 1-D or (n, 2) pairs (a, b); ``outliers`` the labelled
    outliers' scores, of the same width (their b is used)."""
    o = np.ascontiguousarray(as_float_array(outliers, "outlier_scores"), dtype=np.float64)
    if x.ndim == 1:
        a = b = np.ascontiguousarray(x, dtype=np.float64)
        if o.ndim != 1:
            raise ValueError(f"outlier_scores must be 1-D like the scores, got shape {o.shape}")
        ob = o
    elif x.ndim == 2 and x.shape[1] == 2:
        a = np.ascontiguousarray(x[:, 0], dtype=np.float64)
        b = np.ascontiguousarray(x[:, 1], dtype=np.float64)
        if o.ndim != 2 or o.shape[1] != 2:
            raise ValueError(f"outlier_scores must have shape (k, 2) like the scores, got {o.shape}")
        ob = np.ascontiguousarray(o[:, 1])
    else:
        raise ValueError("integrative p-values take 1-D scores or (n, 2) pairs "
                         f"(inlier-model score, outlier-model score), got shape {x.shape}")
    negate = not scaler.higher_is_outlier
    cal = _core.IntegrativeCalibration(a, b, ob, nan_policy=scaler.nan_policy, negate=negate)
    n, k = cal.sizes
    keep = ~(np.isnan(a) | np.isnan(b))
    inl = x[keep] if x.ndim == 1 else x[keep, :]
    attributes = {"n_calibration_": int(n), "n_outliers_": int(k), "excluded_": excluded,
                  "trimmed_": 0, "contamination_": 0.0, "spec": dict(spec),
                  "_labelled": {"kind": "integrative", "excluded": excluded, "inliers": inl,
                                "outliers": o[~np.isnan(o).reshape(o.shape[0], -1).any(axis=1)]}}
    return State(attributes, x.ndim, 1 if x.ndim == 1 else 2, None, negate, IntegrativeMap(cal, x.ndim))


def stored(entry: Dict[str, Any]) -> Dict[str, Any]:
    """``to_dict``'s ``labelled`` entry: the fit's kept inputs (arrays,
    converted to lists only here, when stored) and options."""
    return {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in entry.items()}


def restore(scaler: Any, stored: Any, spec: Dict[str, Any]) -> State:
    """A weighted or integrative state from ``to_dict``'s ``labelled``
    entry (rebuilt, so checked, by the core)."""
    if not isinstance(stored, dict) or stored.get("kind") not in ("weighted", "integrative"):
        raise ValueError("'labelled' must be a dict with kind 'weighted' or 'integrative'")
    try:
        excluded = check_int(stored.get("excluded", 0), "excluded", 0)
        if stored["kind"] == "weighted":
            x = np.array(stored["scores"], dtype=np.float64)
            return fit_weighted(scaler, x, np.array(stored["weights"], dtype=np.float64), excluded, spec)
        x = np.array(stored["inliers"], dtype=np.float64)
        return fit_integrative(scaler, x, np.array(stored["outliers"], dtype=np.float64), excluded, spec)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"'labelled': {exc}") from None


