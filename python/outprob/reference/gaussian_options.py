"""contract §10, GaussianScaler's ELKI options, in plain NumPy/SciPy:
pretransform (ELKI's Sqrt/MinusLog standard-deviation scalings), a fixed
center with σ about it (StandardDeviationScaling with a fixed mean), λ.
1-D scores; NaN omitted when fitting. Order: pretransform of the raw score,
then orientation, then the Gaussian scaling of y with (μ, λσ)."""

from __future__ import annotations

from typing import Optional, Tuple

import numpy as np
import numpy.typing as npt

from . import estimators as est
from .scaling import Array, Spec, fit_gaussian, gaussian_scaling


def pretransform(s: npt.ArrayLike, kind: Optional[str], pre_min: float = np.nan) -> Array:
    """y = s; √max(0, s − min); −ln s (s <= 0 → +inf). NaN stays NaN."""
    s = np.asarray(s, dtype=np.float64)
    if kind is None:
        return s
    if kind == "sqrt":
        with np.errstate(invalid="ignore"):
            return np.where(np.isnan(s), np.nan, np.sqrt(np.maximum(s - pre_min, 0.0)))
    if kind == "minus_log":
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(np.isnan(s), np.nan, np.where(s > 0, -np.log(np.where(s > 0, s, 1.0)), np.inf))
    raise ValueError(kind)


def fit_gaussian_options(
    scores: npt.ArrayLike, center: Spec = "mean", scale: str = "std", *, pretransform_kind: Optional[str] = None,
    fixed_center: Optional[float] = None, ddof: int = 0, higher_is_outlier: bool = True,
) -> Tuple[float, float, float]:
    """(μ, σ, pre_min) fitted to the pretransformed, oriented scores; with a
    fixed center c, "std" is √(Σ(y − c)²/(N − ddof)) and "nmad" is
    median|y − c|/Φ⁻¹(3/4), falling back to niqr, then std (about c)."""
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    s = s[~np.isnan(s)]
    pre_min = float(s.min()) if pretransform_kind == "sqrt" else np.nan
    if pretransform_kind == "minus_log" and np.any(s <= 0):
        raise ValueError("minus_log needs positive scores")
    y = pretransform(s, pretransform_kind, pre_min)
    if not higher_is_outlier:
        y = -y
    if fixed_center is None:
        mu, sigma, _ = fit_gaussian(y, center, scale, ddof=ddof)
        return mu, sigma, pre_min
    c = float(fixed_center)

    def about(name: str) -> float:
        if name == "std":
            d = y - c
            return float(np.sqrt(np.sum(d * d) / (y.size - ddof))) if y.size > ddof else 0.0
        if name == "nmad":
            return float(np.median(np.abs(y - c)) / est.NMAD_DIVISOR)
        return est.niqr(y)

    chain = {"std": ["std"], "niqr": ["niqr", "std"]}.get(scale, [scale, "niqr", "std"])
    for name in chain:
        sigma = about(name)
        if sigma > 0:
            return c, sigma, pre_min
    return c, 0.0, pre_min


def options_probabilities(
    scores: npt.ArrayLike, new_scores: Optional[npt.ArrayLike] = None, *, center: Spec = "mean",
    scale: str = "std", pretransform_kind: Optional[str] = None, fixed_center: Optional[float] = None,
    lam: float = 1.0, ddof: int = 0, higher_is_outlier: bool = True,
) -> Array:
    """Fit on ``scores``; p = max(0, erf((±y − μ)/(λσ√2))) of ``new_scores``."""
    mu, sigma, pre_min = fit_gaussian_options(
        scores, center, scale, pretransform_kind=pretransform_kind, fixed_center=fixed_center,
        ddof=ddof, higher_is_outlier=higher_is_outlier,
    )
    target = scores if new_scores is None else new_scores
    y = pretransform(target, pretransform_kind, pre_min)
    if not higher_is_outlier:
        y = -y
    return gaussian_scaling(y, mu, lam * sigma)
