"""Reference implementations of the transformations beyond the paper
(contract §10): plain NumPy/SciPy, written from the formulas, used by the
tests as the oracle of the compiled core.

Every function takes the fitted scores already oriented (higher = more
outlying) and NaN-free, and returns float64 probabilities for new scores
``s`` (NaN stays NaN).
"""

from __future__ import annotations

import math
from typing import Any, Dict

import numpy as np
import numpy.typing as npt
from scipy import stats

Array = npt.NDArray[np.float64]


def rank_scaling(x: npt.ArrayLike, s: npt.ArrayLike, log: bool = False) -> Array:
    """Mid-rank pseudo-probability: ``clip((lo + hi − 1)/(2(n − 1)), 0, 1)``
    with ``lo = #{x < s}``, ``hi = #{x ≤ s}``; n = 1: 0, ½, 1 below, at,
    above the fitted score; ``log``: ``log1p(r)/ln 2``."""
    xs = np.sort(np.asarray(x, dtype=np.float64))
    q = np.asarray(s, dtype=np.float64)
    lo = np.searchsorted(xs, q, side="left").astype(np.float64)
    hi = np.searchsorted(xs, q, side="right").astype(np.float64)
    n = xs.size
    if n == 1:
        r = np.where(lo == 1, 1.0, np.where(hi == 1, 0.5, 0.0))
    else:
        r = np.clip((lo + hi - 1.0) / (2.0 * (n - 1.0)), 0.0, 1.0)
    if log:
        r = np.where(r < 1.0, np.log1p(r) / math.log(2.0), r)
    return np.where(np.isnan(q), np.nan, r)


def rank_of_fitted(x: npt.ArrayLike) -> Array:
    """ELKI's value on the fitted scores themselves: SciPy's average rank
    (1-based) minus 1, over n − 1."""
    xs = np.asarray(x, dtype=np.float64)
    if xs.size == 1:
        return np.array([0.5])
    ranks = np.asarray(stats.rankdata(xs, method="average"), dtype=np.float64)
    return (ranks - 1.0) / (xs.size - 1.0)


def top_k_scaling(x: npt.ArrayLike, s: npt.ArrayLike, k: int, binary: bool = True) -> Array:
    """ELKI's top-k: c the k-th largest fitted score; ``[s ≥ c]``, or
    ``clip((s − g)/(max − g), 0, 1)`` above c with ``g = min(0, c)``."""
    xs = np.sort(np.asarray(x, dtype=np.float64))
    q = np.asarray(s, dtype=np.float64)
    k = min(k, xs.size)
    c, top = xs[xs.size - k], xs[-1]
    g = min(0.0, c)
    if binary or top <= g:
        p = (q >= c).astype(np.float64)
    else:
        p = np.where(q >= c, np.clip((q - g) / (top - g), 0.0, 1.0), 0.0)
    return np.where(np.isnan(q), np.nan, p)


# -- sigmoid (Gao & Tan 2006) -------------------------------------------------------


def _logistic(t: Array) -> Array:
    e = np.exp(-np.abs(t))
    return np.where(t >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _cross_entropy(z: Array, t: Array, a: float, b: float) -> float:
    u = a * z + b
    e = np.exp(-np.abs(u))
    f = np.where(u >= 0, (1.0 - t) * u + np.log1p(e), -t * u + np.log1p(e))
    return math.fsum(f)


def fit_sigmoid(x: npt.ArrayLike, maxiter: int = 100) -> Dict[str, Any]:
    """EM with hard labels ``a·z + b > 0`` on ``z = (x − mean)/std`` and
    the Platt / Lin–Lin–Weng Newton M-step on the regularised targets;
    returns center, scale, a, b, n_iter, converged."""
    v = np.asarray(x, dtype=np.float64)
    n = v.size
    mean = math.fsum(v) / n
    if np.all(v == v[0]):
        return dict(center=mean, scale=0.0, a=0.0, b=0.0, n_iter=0, converged=True)
    # Deviations rescaled by their largest magnitude before squaring: the
    # squares of deviations below 1e-154 are subnormal and lose digits.
    d = v - mean
    big = float(np.max(np.abs(d)))
    scale = big * float(np.sqrt(np.mean((d / big) ** 2)))
    z = d / scale
    a, b = 1.0, 0.0
    labels = z > 0
    n_iter, converged = 0, False
    while n_iter < maxiter:
        n_out = int(labels.sum())
        t = np.where(labels, (n_out + 1.0) / (n_out + 2.0), 1.0 / (n - n_out + 2.0))
        f = _cross_entropy(z, t, a, b)
        for _ in range(100):
            p = _logistic(a * z + b)
            d1, d2 = p - t, p * (1.0 - p)
            ga, gb = float(np.sum(d1 * z)), float(np.sum(d1))
            if abs(ga) <= 1e-9 * n and abs(gb) <= 1e-9 * n:
                break
            haa, hab, hbb = float(np.sum(d2 * z * z)) + 1e-12, float(np.sum(d2 * z)), float(np.sum(d2)) + 1e-12
            det = haa * hbb - hab * hab
            da, db = -(hbb * ga - hab * gb) / det, -(-hab * ga + haa * gb) / det
            gd = ga * da + gb * db
            step, moved = 1.0, False
            while step >= 1e-10:
                na, nb = a + step * da, b + step * db
                nf = _cross_entropy(z, t, na, nb)
                # A trial point that meets the stopping test is taken even
                # if its decrease is below the rounding of f (contract §10).
                d1 = _logistic(na * z + nb) - t
                done = abs(float(np.sum(d1 * z))) <= 1e-9 * n and abs(float(np.sum(d1))) <= 1e-9 * n
                if nf < f + 1e-4 * step * gd or done:
                    a, b, f, moved = na, nb, nf, True
                    break
                step /= 2.0
            if not moved:
                break
        n_iter += 1
        new = a * z + b > 0
        if np.array_equal(new, labels):
            converged = True
            break
        labels = new
    return dict(center=mean, scale=scale, a=a, b=b, n_iter=n_iter, converged=converged)


def sigmoid_scaling(fit: Dict[str, Any], s: npt.ArrayLike) -> Array:
    """``1/(1 + exp(−(a·(s − center)/scale + b)))``."""
    q = np.asarray(s, dtype=np.float64)
    if fit["a"] == 0.0:
        return np.where(np.isnan(q), np.nan, _logistic(np.full(q.shape, fit["b"])))
    with np.errstate(over="ignore", invalid="ignore"):
        return _logistic(fit["a"] * (q - fit["center"]) / fit["scale"] + fit["b"])


# -- mixture model (Gao & Tan 2006) --------------------------------------------------


def _log_ratio(u: Array, alpha: float, mu: float, sigma: float, lam: float) -> Array:
    """log(inlier density) − log(outlier density), weights included."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        log_out = np.log(alpha) + np.asarray(stats.norm.logpdf(u, mu, sigma), dtype=np.float64)
        # λe^{−λu} written out: SciPy's expon.logpdf is −inf below 0, the
        # model's formula (as ELKI's) is not.
        log_in = np.log1p(-alpha) + np.log(lam) - lam * u
        r: Array = log_in - log_out
    return r


def _posterior(u: Array, alpha: float, mu: float, sigma: float, lam: float) -> Array:
    """The outlier component's posterior t."""
    with np.errstate(over="ignore"):
        p: Array = 1.0 / (1.0 + np.exp(_log_ratio(u, alpha, mu, sigma, lam)))
    return p


def _inlier_posterior(u: Array, alpha: float, mu: float, sigma: float, lam: float) -> Array:
    """The inlier component's posterior 1 − t, from the log ratio rather
    than as 1 minus t: where α → 1, t rounds to 1 and 1 − t would keep
    only its rounding."""
    with np.errstate(over="ignore"):
        p: Array = 1.0 / (1.0 + np.exp(-_log_ratio(u, alpha, mu, sigma, lam)))
    return p


def fit_mixture(x: npt.ArrayLike, maxiter: int = 100, tol: float = 1e-8) -> Dict[str, Any]:
    """EM for exponential inliers + Gaussian outliers on ``u = x/mean(x)``,
    ELKI's start, relative convergence test (μ's change against
    tol·max(σ, |μ|)); returns scale, alpha, mu, sigma, lambda (in units of
    scale), n_iter, converged."""
    v = np.asarray(x, dtype=np.float64)
    n = v.size
    mean = math.fsum(v) / n
    if np.all(v == v[0]) or n < 2:
        return dict(scale=mean, alpha=0.0, mu=1.0, sigma=0.0, lam=1.0, n_iter=0, converged=True)
    u = v / mean
    alpha, mu, sigma, lam = 0.05, 2.0, max(float(np.std(u, ddof=1)), 1e-8), 0.5
    n_iter, converged = 0, False
    while n_iter < maxiter:
        t = _posterior(u, alpha, mu, sigma, lam)
        t_in = _inlier_posterior(u, alpha, mu, sigma, lam)
        n_iter += 1
        total, tu = math.fsum(t), math.fsum(t * u)
        total_in, tu_in = math.fsum(t_in), math.fsum(t_in * u)
        # Either component without weight: keep the last regular iterate.
        if not (total > 0 and tu > 0 and total_in > 0):
            break
        new_mu = tu / total
        new_sigma = max(math.sqrt(max(math.fsum(t * (u - new_mu) ** 2) / total, 0.0)), 1e-8)
        # Inlier weight only at u = 0: the exponential collapses (λ → ∞).
        big = float(np.finfo(float).max)
        new_lam = min(total_in / tu_in, big) if tu_in > 0 else big
        # Above ½ as 1 − Σ(1 − t)/n: 1 − α keeps its relative accuracy.
        new_alpha = min(total / n if total <= total_in else 1.0 - total_in / n, 1.0)
        done = (
            abs(new_mu - mu) <= tol * max(new_sigma, abs(new_mu))
            and abs(new_sigma - sigma) <= tol * new_sigma
            and abs(new_lam - lam) <= tol * new_lam
            and abs(new_alpha - alpha) <= tol
        )
        alpha, mu, sigma, lam = new_alpha, new_mu, new_sigma, new_lam
        if done:
            converged = True
            break
    return dict(scale=mean, alpha=alpha, mu=mu, sigma=sigma, lam=lam, n_iter=n_iter, converged=converged)


def mixture_scaling(fit: Dict[str, Any], s: npt.ArrayLike) -> Array:
    """The posterior of the Gaussian (outlier) component at ``s``."""
    q = np.asarray(s, dtype=np.float64)
    if fit["alpha"] <= 0.0:
        return np.where(np.isnan(q), np.nan, 0.0)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        p = _posterior(q / fit["scale"], fit["alpha"], fit["mu"], fit["sigma"], fit["lam"])
    return np.where(np.isinf(q), 0.0, p)
