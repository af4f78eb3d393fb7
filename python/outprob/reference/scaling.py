"""contract §4–§5 in plain NumPy/SciPy: fitting a named or custom scaling and
mapping scores to probabilities. 1-D scores; NaN are omitted when fitting."""

from __future__ import annotations

from typing import Optional, Tuple, Union

import numpy as np
import numpy.typing as npt
from scipy.special import erf

from . import estimators as est

Spec = Union[str, float]
Array = npt.NDArray[np.float64]


def gaussian_scaling(s: npt.ArrayLike, center: float, scale: float) -> Array:
    """p = max(0, erf((s − μ)/(σ√2))); with σ = 0 the σ → 0 limit: 1 above μ, else 0."""
    s = np.asarray(s, dtype=np.float64)
    if scale > 0:
        if scale > 2.0**1000:
            # s − μ and σ√2 may overflow: a common factor 2^-4 (exact)
            # leaves z unchanged and keeps both finite (contract §5).
            s, center, scale = s * 0.0625, center * 0.0625, scale * 0.0625
        # Scores far above μ may overflow z to inf: erf(inf) = 1, as meant.
        with np.errstate(over="ignore", invalid="ignore"):
            z = np.where(np.isinf(s), s, (s - center) / (scale * np.sqrt(2)))
            # scipy.special has no type information: erf's result is Any to mypy.
            p: Array = np.maximum(0.0, erf(z))
            return p
    return np.where(np.isnan(s), np.nan, np.where(s > center, 1.0, 0.0))


def linear_scaling(s: npt.ArrayLike, lo: float, hi: float) -> Array:
    """p = clip((s − min)/(max − min), 0, 1); with max = min: 1 above, else 0."""
    s = np.asarray(s, dtype=np.float64)
    if hi > lo:
        with np.errstate(over="ignore"):
            if np.isfinite(hi - lo):
                # s − lo overflows only far outside [lo, hi]: ±inf clips.
                return np.clip((s - lo) / (hi - lo), 0.0, 1.0)
            # max − min beyond the double range: exact halves (contract §5).
            return np.clip((s * 0.5 - lo * 0.5) / (hi * 0.5 - lo * 0.5), 0.0, 1.0)
    return np.where(np.isnan(s), np.nan, np.where(s > hi, 1.0, 0.0))


def fit_center(s: Array, center: Spec, *, trim: float = 0.1, maxiter: int = 30, tol: float = 1e-8) -> float:
    """μ of the named center (mean, median, trimmed_mean, huber, tukey), or the number given."""
    if not isinstance(center, str):
        return float(center)
    if center == "mean":
        return est.mean(s)
    if center == "median":
        return est.median(s)
    if center == "trimmed_mean":
        return est.upper_trimmed_mean(s, trim)
    return est.m_estimate(s, center, maxiter=maxiter, tol=tol).location


def fit_scale(
    s: Array, scale: Spec, center: float, *, trim: float = 0.1, ddof: int = 0,
    maxiter: int = 30, tol: float = 1e-8,
) -> float:
    """σ of the named scale (std, nmad, niqr, trimmed_std about ``center``,
    huber, tukey), or the number given; no §5 fallback."""
    if not isinstance(scale, str):
        return float(scale)
    if scale == "std":
        return est.std(s, ddof) if s.size > ddof else 0.0
    if scale == "nmad":
        return est.nmad(s)
    if scale == "niqr":
        return est.niqr(s)
    if scale == "trimmed_std":
        return est.trimmed_std(s, center, trim)
    return est.m_estimate(s, scale, maxiter=maxiter, tol=tol).scale


def fit_gaussian(
    scores: npt.ArrayLike, center: Spec = "mean", scale: Spec = "std", *, trim: float = 0.1, ddof: int = 0,
    maxiter: int = 30, tol: float = 1e-8,
) -> Tuple[float, float, str]:
    """(μ, σ, name of the scale used): the chosen scale, else the §5
    fallback chain chosen → niqr → std; σ = 0 if all are zero."""
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    s = s[~np.isnan(s)]
    mu = fit_center(s, center, trim=trim, maxiter=maxiter, tol=tol)
    if not isinstance(scale, str):
        return mu, float(scale), "value"
    chain = {"std": ["std"], "niqr": ["niqr", "std"]}.get(scale, [scale, "niqr", "std"])
    for name in chain:
        sigma = fit_scale(s, name, mu, ddof=ddof, trim=trim, maxiter=maxiter, tol=tol)
        if not np.isfinite(sigma):
            raise ValueError(f"the fitted {name} scale exceeds the double range")
        if sigma > 0:
            return mu, sigma, name
    return mu, 0.0, chain[-1]


def fit_linear(scores: npt.ArrayLike) -> Tuple[float, float]:
    """(min, max) of the scores, NaN ignored."""
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    return float(np.nanmin(s)), float(np.nanmax(s))


#: The named variants of contract §4: name → (center, scale); linear is None.
VARIANTS = {
    "linear": None,
    "mean_std": ("mean", "std"),
    "mean_nmad": ("mean", "nmad"),
    "mean_niqr": ("mean", "niqr"),
    "median_std": ("median", "std"),
    "median_nmad": ("median", "nmad"),
    "median_niqr": ("median", "niqr"),
    "trimmed_mean_std": ("trimmed_mean", "std"),
    "trimmed_mean_nmad": ("trimmed_mean", "nmad"),
    "trimmed_mean_niqr": ("trimmed_mean", "niqr"),
    "huber": ("huber", "huber"),
    "tukey": ("tukey", "tukey"),
}


def variant_probabilities(
    name: str, scores: npt.ArrayLike, new_scores: Optional[npt.ArrayLike] = None,
) -> Array:
    """Fit the named variant on ``scores``; probabilities of ``new_scores``
    (default: the scores themselves)."""
    target = scores if new_scores is None else new_scores
    pair = VARIANTS[name]
    if pair is None:
        return linear_scaling(target, *fit_linear(scores))
    mu, sigma, _ = fit_gaussian(scores, *pair)
    return gaussian_scaling(target, mu, sigma)
