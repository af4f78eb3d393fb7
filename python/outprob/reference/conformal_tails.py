"""Reference implementation of contract §11's tails and detector
combinations in plain NumPy/SciPy, written from the formulas: the tailed
p-value ``p_u · G(s)``, the GPD profile likelihood maximised by SciPy's
bounded scalar search, the DKWM check as SciPy's Kolmogorov statistic,
the Cauchy and harmonic-mean combinations and the pooled robust ensemble
score. Scores are oriented (higher = more outlying) and NaN-free.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, Tuple

import numpy as np
import numpy.typing as npt
from scipy import optimize, stats

from .conformal import pvalues
from .gamma_scaling import fit_gamma_quantiles

Array = npt.NDArray[np.float64]


def threshold(calibration: npt.ArrayLike, quantile: float) -> Tuple[float, int, float]:
    """(u, m, p_u): u the ⌈q·n⌉-th smallest score, m = #{sᵢ > u},
    p_u = (1 + m)/(n + 1)."""
    s = np.sort(np.asarray(calibration, dtype=np.float64))
    n = s.size
    u = float(s[min(max(math.ceil(quantile * n), 1), n) - 1])
    m = int(np.sum(s > u))
    return u, m, (1 + m) / (n + 1)


def gpd_fit(y: npt.ArrayLike) -> Tuple[float, float]:
    """Maximum-likelihood GPD (ξ ≥ 0, σ) of exceedances y > 0: the profile
    log-likelihood in θ = ξ/σ, ``−m ln(k/θ) − m(k + 1)`` with
    ``k = mean ln(1 + θy)``, maximised over ln θ by SciPy (and the θ → 0
    exponential limit)."""
    y = np.asarray(y, dtype=np.float64)
    m = y.size

    def profile(t: float) -> float:
        theta = math.exp(t)
        k = float(np.mean(np.log1p(theta * y)))
        return -m * math.log(k / theta) - m * (k + 1.0)

    exp_ll = -m * (math.log(y.mean()) + 1.0)
    t0 = math.log(1.0 / y.max())
    grid = np.linspace(t0 - 10 * math.log(10), t0 + 7 * math.log(10), 400)
    best = int(np.argmax([profile(t) for t in grid]))
    lo, hi = grid[max(best - 1, 0)], grid[min(best + 1, grid.size - 1)]
    res = optimize.minimize_scalar(lambda t: -profile(t), bounds=(lo, hi), method="bounded",
                                   options={"xatol": 1e-12})
    if -res.fun <= exp_ll:
        return 0.0, float(y.mean())
    theta = math.exp(res.x)
    k = float(np.mean(np.log1p(theta * y)))
    return k, k / theta


def survival(calibration: npt.ArrayLike, tail: str, quantile: float) -> Tuple[Callable[[Array], Array], Dict[str, Any]]:
    """The fitted conditional survival G beyond u, and the fit's numbers."""
    s = np.sort(np.asarray(calibration, dtype=np.float64))
    u, m, p_u = threshold(s, quantile)
    if tail == "gpd":
        xi, sigma = gpd_fit(s[s > u] - u)
        return (lambda x: stats.genpareto.sf(x - u, c=xi, scale=sigma)), {"shape": xi, "scale": sigma}
    if tail == "gaussian":
        center = float(np.median(s))
        scale = float(stats.median_abs_deviation(s, scale="normal"))
        dist = stats.norm(center, scale)
    else:
        off, mean, theta, _ = fit_gamma_quantiles(s)
        dist = stats.gamma(mean / theta, loc=-off, scale=theta)
        center, scale = mean / theta, theta
    s_u = dist.sf(u)
    return (lambda x: dist.sf(x) / s_u), {"center" if tail == "gaussian" else "shape": center, "scale": scale}


def dkwm_check(calibration: npt.ArrayLike, g: Callable[[Array], Array], quantile: float,
               delta: float) -> Tuple[float, float]:
    """(Kolmogorov statistic of the exceedances against 1 − G, the DKWM bound
    √(ln(2/δ)/(2m)))."""
    s = np.asarray(calibration, dtype=np.float64)
    u, m, _ = threshold(s, quantile)
    stat = stats.kstest(s[s > u], lambda x: 1.0 - g(x)).statistic
    return float(stat), math.sqrt(math.log(2.0 / delta) / (2.0 * m))


def tail_pvalues(calibration: npt.ArrayLike, scores: npt.ArrayLike, tail: str,
                 quantile: float = 0.9) -> Array:
    """``p_u · G(s)`` above u, the conformal p-value at and below it (the
    tail taken as accepted)."""
    q = np.asarray(scores, dtype=np.float64)
    u, _, p_u = threshold(calibration, quantile)
    g, _ = survival(calibration, tail, quantile)
    return np.where(q > u, p_u * g(q), pvalues(calibration, q))


def cauchy(p: npt.ArrayLike) -> Array:
    """½ − arctan(mean_j tan((½ − p_j)π))/π per row."""
    t = np.mean(np.tan((0.5 - np.asarray(p, dtype=np.float64)) * np.pi), axis=1)
    return np.asarray(0.5 - np.arctan(t) / np.pi, dtype=np.float64)


def harmonic(p: npt.ArrayLike) -> Array:
    """min(1, a_K · K/Σ 1/p_j), a_K = e ln K (K ≥ 3) or K."""
    p = np.asarray(p, dtype=np.float64)
    k = p.shape[1]
    a = math.e * math.log(k) if k >= 3 else float(k)
    return np.asarray(np.minimum(1.0, a * stats.hmean(p, axis=1)), dtype=np.float64)


def ensemble_scores(cal: npt.ArrayLike, test: npt.ArrayLike, how: str = "mean") -> Tuple[Array, Array]:
    """Per column, (s − median)/nMAD of the pooled calibration and test
    scores (std when the nMAD is 0); their mean or max per row."""
    cal, test = np.asarray(cal, dtype=np.float64), np.asarray(test, dtype=np.float64)
    pooled = np.vstack([cal, test])
    center = np.median(pooled, axis=0)
    scale = stats.median_abs_deviation(pooled, axis=0, scale="normal")
    scale = np.where(scale > 0, scale, pooled.std(axis=0))
    safe = np.where(scale > 0, scale, 1.0)
    z = np.where(scale > 0, (pooled - center) / safe, 0.0)
    t = z.mean(axis=1) if how == "mean" else z.max(axis=1)
    return t[: cal.shape[0]], t[cal.shape[0]:]
