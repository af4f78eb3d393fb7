"""Combining the outlier probabilities of several detectors (contract §10,
"Ensembles")."""

from __future__ import annotations

import warnings
from typing import Any, Optional

import numpy as np
import numpy.typing as npt

from .._common.validation import as_float_array

METHODS = ("mean", "max", "min", "median")
NAN_POLICIES = ("omit", "propagate", "raise")


def combine(
    probabilities: npt.ArrayLike,
    method: str = "mean",
    *,
    weights: Optional[npt.ArrayLike] = None,
    nan_policy: str = "omit",
) -> Any:
    r"""Combines the outlier probabilities of k detectors into one per sample.

    With :math:`p_{ij}` the probability of sample i from detector j (the
    2-D output of a scaler fitted on k score columns):

    - ``"mean"``: :math:`\bar p_i = \sum_j w_j p_{ij} / \sum_j w_j` (equal
      weights by default) — the average of probabilities Kriegel et al.
      (SDM 2011) recommend for combining detectors once their scores are
      probabilities;
    - ``"max"``: :math:`\max_j p_{ij}` (an outlier for any detector);
    - ``"min"``: :math:`\min_j p_{ij}` (an outlier for every detector);
    - ``"median"``: the median over the detectors.

    Parameters
    ----------
    probabilities : array_like, shape (n, k)
        Columns are detectors; values in [0, 1] or NaN (a DataFrame works).
    method : {"mean", "max", "min", "median"}, default "mean"
    weights : array_like of shape (k,), optional
        Non-negative detector weights, for ``"mean"`` only (not all zero).
    nan_policy : {"omit", "propagate", "raise"}, default "omit"
        ``"omit"``: a NaN (a detector without a probability for that sample)
        is left out of its row; a row of NaN only gives NaN. ``"propagate"``:
        any NaN in a row gives NaN. ``"raise"``: NaN raise ``ValueError``.

    Returns
    -------
    numpy.ndarray of shape (n,)
        float32 for float32 input, else float64.

    Examples
    --------
    >>> import numpy as np, outprob
    >>> P = np.array([[0.0, 0.2], [0.9, 1.0], [np.nan, 0.4]])
    >>> outprob.combine(P)
    array([0.1 , 0.95, 0.4 ])
    >>> outprob.combine(P, "max", nan_policy="propagate")
    array([0.2, 1. , nan])
    >>> outprob.combine(P, weights=[3, 1])
    array([0.05 , 0.925, 0.4  ])
    """
    p = as_float_array(probabilities, "probabilities")
    if p.ndim != 2 or p.shape[1] == 0:
        raise ValueError(
            f"probabilities must be 2-D (n_samples, n_detectors) with at least one column, "
            f"got shape {p.shape}"
        )
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if nan_policy not in NAN_POLICIES:
        raise ValueError(f"nan_policy must be one of {NAN_POLICIES}, got {nan_policy!r}")
    nan = np.isnan(p)
    if nan_policy == "raise" and nan.any():
        i, j = np.argwhere(nan)[0]
        raise ValueError(f"probabilities[{i}, {j}] is NaN (nan_policy='raise')")
    bad = ~nan & ((p < 0) | (p > 1))
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(f"probabilities[{i}, {j}] = {p[i, j]!r} is not a probability in [0, 1]")
    w = None
    if weights is not None:
        if method != "mean":
            raise ValueError(f"weights apply to method='mean' only, not {method!r}")
        w = as_float_array(weights, "weights").astype(np.float64)
        if w.shape != (p.shape[1],) or not np.all(np.isfinite(w)) or np.any(w < 0) or not w.any():
            raise ValueError(
                f"weights must be {p.shape[1]} finite non-negative numbers, not all zero"
            )
    x = p.astype(np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows → NaN, as documented
        if method == "mean":
            wt = np.ones(p.shape[1]) if w is None else w
            present = np.where(nan, 0.0, wt)
            total = present.sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                out = np.where(nan, 0.0, x) @ wt / total
            out[total == 0] = np.nan
        elif method == "max":
            out = np.nanmax(x, axis=1)
        elif method == "min":
            out = np.nanmin(x, axis=1)
        else:
            out = np.nanmedian(x, axis=1)
    if nan_policy == "propagate":
        out[nan.any(axis=1)] = np.nan
    # A weighted mean of values in [0, 1] can leave it by an ulp.
    out = np.clip(out, 0.0, 1.0)
    return out.astype(p.dtype, copy=False)
