"""contract §1–§3 in plain NumPy: the estimators, written to be read against
the contract (``docs/contract.md``). Sums are ``math.fsum`` (correctly rounded), so results do not
depend on summation order. Input: a 1-D array of finite scores."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import NamedTuple, Optional

import numpy as np
import numpy.typing as npt
from scipy.stats import norm as gaussian

#: Φ⁻¹(3/4) (contract §2, as scipy.stats.median_abs_deviation(scale="normal")).
NMAD_DIVISOR = 0.6744897501960817
#: Φ⁻¹(3/4) − Φ⁻¹(1/4) (contract §2).
NIQR_DIVISOR = 1.3489795003921634

Array = npt.NDArray[np.float64]


def _scores(x: npt.ArrayLike) -> Array:
    s = np.asarray(x, dtype=np.float64).reshape(-1)
    if s.size == 0 or not np.all(np.isfinite(s)):
        raise ValueError("the reference takes a non-empty array of finite scores")
    return s


# §1 Location -------------------------------------------------------------------


def mean(x: npt.ArrayLike) -> float:
    """(1/N) Σ s_i."""
    s = _scores(x)
    try:
        return math.fsum(s) / s.size
    except OverflowError:
        # The sum exceeds the double range (scores near ±1.8e308): the mean
        # of the exact rational sum (contract §5).
        return float(sum(map(Fraction, s.tolist())) / s.size)


def median(x: npt.ArrayLike) -> float:
    """s_((N+1)/2) for odd N; (s_(N/2) + s_(N/2+1)) / 2 for even N."""
    s = np.sort(_scores(x))
    n = s.size
    if n % 2 == 1:
        return float(s[(n + 1) // 2 - 1])
    return float((s[n // 2 - 1] + s[n // 2]) / 2)


def quantile(x: npt.ArrayLike, q: float) -> float:
    """Type 7: h = (N − 1)·q, Q = s_(⌊h⌋+1) + (h − ⌊h⌋)(s_(⌊h⌋+2) − s_(⌊h⌋+1))."""
    s = np.sort(_scores(x))
    n = s.size
    h = (n - 1) * q
    if h >= n - 1:
        return float(s[-1])
    lo = math.floor(h)
    t = h - lo
    a, b = float(s[lo]), float(s[lo + 1])
    if t == 0:
        return a
    # NumPy's _lerp: the same formula, evaluated from the nearer end.
    if t >= 0.5:
        return b - (b - a) * (1 - t)
    return a + (b - a) * t


def trimmed_count(alpha: float, n: int) -> int:
    """k = floor(α·N), keeping at least one score."""
    return min(math.floor(alpha * n), n - 1)


def upper_trimmed_mean(x: npt.ArrayLike, alpha: float = 0.1) -> float:
    """Drop the k = floor(α·N) largest scores; mean of the other N − k."""
    s = np.sort(_scores(x))
    k = trimmed_count(alpha, s.size)
    return mean(s[: s.size - k])


# §2 Scale ----------------------------------------------------------------------


def _root_mean_square(d: Array, divisor: float, corrected: bool) -> float:
    """sqrt(Σ d² / divisor).

    The deviations are first rescaled by a power of two (exact) so that d²
    neither overflows nor underflows. With ``corrected``, (Σ d)²/N is
    subtracted: zero in exact arithmetic when d are deviations from the
    mean, it removes the mean's rounding error (corrected two-pass
    algorithm, Chan, Golub & LeVeque 1983).
    """
    largest = float(np.max(np.abs(d)))
    if largest == 0.0:
        return 0.0
    _, e = math.frexp(largest)
    d = np.ldexp(d, -e)
    ss = math.fsum(d * d)
    if corrected:
        ss -= math.fsum(d) ** 2 / d.size
    return math.ldexp(math.sqrt(max(ss, 0.0) / divisor), e)


def std(x: npt.ArrayLike, ddof: int = 0) -> float:
    """sqrt(Σ (s_i − mean)² / (N − ddof))."""
    s = _scores(x)
    if ddof >= s.size:
        raise ValueError("ddof must be smaller than the number of scores")
    m = mean(s)
    if max(abs(float(np.max(s))), abs(float(np.min(s))), abs(m)) > 2.0**1000:
        # s − mean may overflow: halves are exact at this magnitude.
        return 2.0 * _root_mean_square(s * 0.5 - m * 0.5, s.size - ddof, corrected=True)
    return _root_mean_square(s - m, s.size - ddof, corrected=True)


def nmad(x: npt.ArrayLike) -> float:
    """``median(|s − median(s)|) / Φ⁻¹(3/4)``."""
    s = _scores(x)
    return median(np.abs(s - median(s))) / NMAD_DIVISOR


def niqr(x: npt.ArrayLike) -> float:
    """(Q(0.75) − Q(0.25)) / (Φ⁻¹(3/4) − Φ⁻¹(1/4))."""
    s = _scores(x)
    return (quantile(s, 0.75) - quantile(s, 0.25)) / NIQR_DIVISOR


def trimmed_std(x: npt.ArrayLike, center: float, alpha: float = 0.1) -> float:
    """d_i = (s_i − c)²; drop the floor(α·N) largest d_i; sqrt(mean of the rest)."""
    s = _scores(x)
    dev = np.sort(np.abs(s - center))  # orders the d_i as (s − c)² does
    k = trimmed_count(alpha, s.size)
    kept = dev[: s.size - k]
    return _root_mean_square(kept, kept.size, corrected=False)


# §3 Huber's proposal 2 -------------------------------------------------------------


class MEstimate(NamedTuple):
    location: float
    scale: float
    n_iter: int
    converged: bool


def _weights(r: Array, norm: str, t: float) -> Array:
    if norm == "huber":
        # min(1, t/|r|), and 1 at r = 0.
        return t / np.maximum(np.abs(r), t)
    if norm == "tukey":
        return np.where(np.abs(r) <= t, (1 - (r / t) ** 2) ** 2, 0.0)
    raise ValueError(f"norm must be 'huber' or 'tukey', got {norm!r}")


def gamma(c: float) -> float:
    """γ = (2Φ(c) − 1) + c²(1 − (2Φ(c) − 1)) − 2c·φ(c)."""
    mass = 2 * gaussian.cdf(c) - 1
    return float(mass + c**2 * (1 - mass) - 2 * c * gaussian.pdf(c))


def m_estimate(
    x: npt.ArrayLike,
    norm: str = "huber",
    *,
    c: float = 1.5,
    tuning: Optional[float] = None,
    maxiter: int = 30,
    tol: float = 1e-8,
) -> MEstimate:
    """Huber's proposal 2 with Huber's T or Tukey's biweight location (§3)."""
    s = _scores(x)
    t = tuning if tuning is not None else {"huber": 1.345, "tukey": 4.685}[norm]
    mu = median(s)
    # σ₀ = nMAD; if it is zero, the §5 fallback chain supplies the start.
    sigma = nmad(s) or niqr(s) or std(s)
    if sigma == 0.0:
        return MEstimate(mu, 0.0, 0, True)
    if not math.isfinite(sigma):
        raise ValueError("the starting scale of M-estimation exceeds the double range")
    g = gamma(c)
    # The iteration runs on s·2^-k with σ₀·2^-k in [1, 2) (exact), k raised
    # so that every scaled score stays below 2^1021: the estimate is
    # equivariant under powers of two and tol·σ means the same at every
    # magnitude. Residuals of far outliers may still overflow to ±inf; their
    # weight is then 0 (Tukey) or t/inf = 0 (Huber), as in the limit, and a
    # Huber term w·(s − m) its limit t·σ·sign(s − m), the clipped ψ (not 0).
    k = math.frexp(sigma)[1] - 1
    largest = float(np.max(np.abs(s)))
    if largest > 0:
        k = max(k, math.frexp(largest)[1] - 1 - 1021)
    with np.errstate(over="ignore"):
        est = _iterate(np.ldexp(s, -k), norm, t, c, g, maxiter, tol,
                       math.ldexp(mu, -k), math.ldexp(sigma, -k))
    return MEstimate(math.ldexp(est.location, k), math.ldexp(est.scale, k), est.n_iter, est.converged)


def _iterate(
    s: Array, norm: str, t: float, c: float, g: float, maxiter: int, tol: float, mu: float,
    sigma: float,
) -> MEstimate:
    n = s.size
    inner_converged = True
    for it in range(maxiter):
        # 1. Location step: iteratively reweighted mean at fixed σ_t, from μ_t.
        m, ok = mu, False
        for _ in range(maxiter):
            r = (s - m) / sigma
            w = _weights(r, norm, t)
            total = np.sum(w)
            if total <= 0:  # every weight zero: the step keeps m
                ok = True
                break
            terms = w * (s - m)
            if norm == "huber":
                terms = np.where(np.isinf(r), t * np.copysign(sigma, s - m), terms)
            m_new = m + np.sum(terms) / total  # = Σ w s / Σ w
            if abs(m_new - m) < tol * sigma:
                m, ok = m_new, True
                break
            m = m_new
        inner_converged = inner_converged and ok
        mu_new = float(m)
        # 2. Scale step, with I from the old (μ_t, σ_t); in units of σ_t.
        inlier = np.abs((s - mu) / sigma) <= c
        r = (s[inlier] - mu_new) / sigma
        outside = n - int(np.count_nonzero(inlier))
        sigma_new = sigma * math.sqrt((math.fsum(r * r) + outside * c * c) / ((n - 1) * g))
        if not (sigma_new > 0 and math.isfinite(sigma_new)):
            return MEstimate(mu, sigma, it, False)
        # 3. Convergence.
        done = abs(sigma - sigma_new) <= tol * sigma_new and abs(mu - mu_new) <= tol * sigma_new
        mu, sigma = mu_new, sigma_new
        if done:
            return MEstimate(mu, sigma, it + 1, inner_converged)
    return MEstimate(mu, sigma, maxiter, False)
