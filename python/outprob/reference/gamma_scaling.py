"""contract §10, gamma scaling, in plain NumPy/SciPy: the oracle of the
tests. 1-D scores (already oriented); NaN are omitted when fitting.

(Named ``gamma_scaling`` rather than ``gamma``: ``outprob.reference.gamma``
is the M-estimation constant γ(c) of contract §3.)
"""

from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np
import numpy.typing as npt
from scipy import optimize, special, stats

from . import estimators as est

#: Shape range of the quartile fit.
K_RANGE = (1e-2, 1e10)

Array = npt.NDArray[np.float64]


def fit_offset(scores: npt.ArrayLike, offset: Optional[float] = None) -> float:
    """The fixed ``offset``, or ``max(0, −min)``."""
    s = np.asarray(scores, dtype=np.float64)
    return float(offset) if offset is not None else max(0.0, -float(np.nanmin(s)))


def fit_gamma_moments(scores: npt.ArrayLike, offset: Optional[float] = None) -> Tuple[float, float, float]:
    """(offset, mean m, θ) by the method of moments: m and the sample
    variance v of the shifted scores, θ = v/m (k = m²/v); θ = 0 if v = 0."""
    s = np.asarray(scores, dtype=np.float64)
    s = s[~np.isnan(s)]
    off = fit_offset(s, offset)
    # The mean of t = s + offset: fsum of the scores and N copies of the
    # offset (not mean(s) + offset, which rounds at the scores' magnitude).
    m = math.fsum(np.r_[s, np.full(s.size, off)]) / s.size
    # The variance does not depend on the offset: taken of the raw scores.
    v = est.std(s, ddof=1) ** 2 if s.size > 1 else 0.0
    if v == 0.0:
        return off, m, 0.0
    if m <= 0:
        raise ValueError("the shifted scores have a non-positive mean")
    return off, m, v / m


def quartile_ratio(k: float) -> float:
    """(q75 − q25)/q50 of Γ(k, 1)."""
    q = stats.gamma.ppf([0.25, 0.5, 0.75], k)
    return float((q[2] - q[0]) / q[1])


def fit_gamma_quantiles(scores: npt.ArrayLike, offset: Optional[float] = None) -> Tuple[float, float, float, str]:
    """(offset, mean kθ, θ, method used): k solves quartile_ratio(k) equal to
    the scores' (type-7 quartiles), θ = q̂50/q50(k, 1); falls back to the
    moments when no k in K_RANGE fits."""
    s = np.asarray(scores, dtype=np.float64)
    s = s[~np.isnan(s)]
    off = fit_offset(s, offset)
    q25, q50, q75 = np.quantile(s, [0.25, 0.5, 0.75]) + off
    lo, hi = K_RANGE
    if q50 > 0 and q25 >= 0 and q75 > q25:
        target = (q75 - q25) / q50
        if quartile_ratio(lo) >= target >= quartile_ratio(hi):
            f = lambda t: quartile_ratio(np.exp(t)) - target  # noqa: E731
            k = float(np.exp(optimize.brentq(f, np.log(lo), np.log(hi), xtol=1e-14, rtol=1e-15)))
            theta = float(q50 / stats.gamma.ppf(0.5, k))
            return off, k * theta, theta, "quantiles"
    return (*fit_gamma_moments(s, offset), "moments")


def gamma_scaling(s: npt.ArrayLike, offset: float, mean: float, scale: float) -> Array:
    """p = max(0, (P(k, t/θ) − P(k, k)) / (1 − P(k, k))), t = s + offset,
    k = mean/θ; θ = 0: 1 above the mean, else 0. NaN stays NaN."""
    t = np.asarray(s, dtype=np.float64) + offset
    if scale == 0:
        return np.where(np.isnan(t), np.nan, np.where(t > mean, 1.0, 0.0))
    k = mean / scale
    at_mean = special.gammainc(k, k)
    with np.errstate(invalid="ignore"):
        p = (special.gammainc(k, np.maximum(t, 0) / scale) - at_mean) / (1 - at_mean)
    return np.where(np.isnan(t), np.nan, np.where(t <= mean, 0.0, np.clip(p, 0.0, 1.0)))


def gamma_probabilities(
    scores: npt.ArrayLike, new_scores: Optional[npt.ArrayLike] = None, *, method: str = "moments",
    offset: Optional[float] = None,
) -> Array:
    """Fit on ``scores``; probabilities of ``new_scores`` (default: the scores)."""
    target = scores if new_scores is None else new_scores
    if method == "moments":
        off, m, theta = fit_gamma_moments(scores, offset)
    else:
        off, m, theta, _ = fit_gamma_quantiles(scores, offset)
    return gamma_scaling(target, off, m, theta)
