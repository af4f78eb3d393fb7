"""Reference implementation of contract §11 in plain NumPy: conformal
p-values, the calibration-conditional adjustments of Bates et al. (2023)
§3 and the step-up selections, written from the formulas (sums of logs
with ``math.fsum``, sorts, a bisection), slow and direct.

Scores are oriented (higher = more outlying); calibration scores are
NaN-free.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float64]
_MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def splitmix64(z: int) -> int:
    """SplitMix64's output for state ``z`` (the state is advanced first)."""
    z = (z + GOLDEN) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def uniforms(key: int, count: int) -> Array:
    """Outputs 0..count−1 of the SplitMix64 stream seeded with ``key``, as
    uniform numbers in [0, 1) (their top 53 bits over 2⁵³)."""
    return np.array(
        [(splitmix64((key + j * GOLDEN) & _MASK) >> 11) / 2.0**53 for j in range(count)]
    )


def pvalues(
    calibration: npt.ArrayLike, s: npt.ArrayLike, u: Optional[npt.ArrayLike] = None
) -> Array:
    """``(1 + #{sᵢ ≥ s})/(n + 1)``; with uniforms ``u`` (one per score) the
    randomised ``(#{sᵢ > s} + u(1 + #{sᵢ = s}))/(n + 1)``. NaN stays NaN."""
    cal = np.asarray(calibration, dtype=np.float64).reshape(-1, 1)
    q = np.asarray(s, dtype=np.float64).reshape(-1)
    n = cal.shape[0]
    if u is None:
        p = (1.0 + (cal >= q).sum(axis=0)) / (n + 1.0)
    else:
        greater, equal = (cal > q).sum(axis=0), (cal == q).sum(axis=0)
        p = (greater + np.asarray(u, dtype=np.float64) * (equal + 1.0)) / (n + 1.0)
    return np.where(np.isnan(q), np.nan, p)


def simes_sequence(n: int, delta: float, k: int) -> Array:
    """b₁…bₙ of the generalised Simes adjustment: for j = n + 1 − i ≥ k,
    ``bᵢ = 1 − δ^{1/k}(∏_{l=j−k+1}^{j} l / ∏_{l=n−k+1}^{n} l)^{1/k}``, else 1."""
    k = min(max(1, k), n)
    top = math.fsum(math.log(l) for l in range(n - k + 1, n + 1))
    b = np.ones(n)
    for i in range(1, n + 1):
        j = n + 1 - i
        if j >= k:
            window = math.fsum(math.log(l) for l in range(j - k + 1, j + 1))
            b[i - 1] = -math.expm1(math.log(delta) / k + (window - top) / k)
    return b


def dkwm(p: npt.ArrayLike, n: int, delta: float) -> Array:
    """``min(1, p + √(ln(2/δ)/(2n)))``."""
    return np.minimum(1.0, np.asarray(p, dtype=np.float64) + math.sqrt(math.log(2 / delta) / (2 * n)))


def _iterated_log(n: int, x: float) -> float:
    """c_n(x) = (−ln(−ln(1 − x)) + 2 ln ln n + ½ ln ln ln n − ½ ln π)/√(2 ln ln n)."""
    ll = math.log(math.log(n))
    return (-math.log(-math.log(1 - x)) + 2 * ll + 0.5 * math.log(ll) - 0.5 * math.log(math.pi)) / math.sqrt(2 * ll)


def hybrid_sequence(n: int, delta: float, gamma: float) -> Array:
    """The Monte Carlo boundary: min(Simes(k = ⌊n/2⌋), i/n + c_n(δ − γ)·√(i(n − i))/n^{3/2}
    continued linearly beyond i = ⌊n/2⌋), capped at 1."""
    i = np.arange(1, n + 1, dtype=np.float64)
    c = _iterated_log(n, delta - gamma)
    bound = i / n + c * np.sqrt(i * (n - i)) / n**1.5
    kl = max(2, n // 2)
    slope = bound[kl - 1] - bound[kl - 2]
    bound[kl:] = bound[kl - 1] + slope * (i[kl:] - kl)
    capped: Array = np.minimum(1.0, np.minimum(simes_sequence(n, delta, max(1, n // 2)), bound))
    return capped


def adjust(p: npt.ArrayLike, n: int, b: Array) -> Array:
    """h(p) = b_i for the rank i = max(1, ⌈(n + 1)p⌉), 1 for i > n. ``p``
    must be marginal p-values (i/(n + 1) up to rounding)."""
    p = np.asarray(p, dtype=np.float64)
    rank = np.maximum(1, np.rint((n + 1) * p).astype(np.int64))
    return np.where(rank > n, 1.0, b[np.minimum(rank, n) - 1])


def mc_correction(n: int, delta: float, simulations: int, seed: int) -> float:
    """γ of the Monte Carlo boundary by bisection (as Bates et al.'s code):
    the smallest γ whose boundary the simulated uniform order statistics
    cross in at most a fraction δ of the simulations, to 1e-9. Simulation s
    uses the SplitMix64 stream seeded with ``splitmix64(seed ⊕ s)``: its
    n + 1 exponential spacings, normalised and summed."""
    u = np.empty((simulations, n))
    for s in range(simulations):
        e = -np.log1p(-uniforms(splitmix64(seed ^ s), n + 1))
        u[s] = np.cumsum(e[:n]) / math.fsum(e)

    def crossing(gamma: float) -> float:
        return float(np.mean((u > hybrid_sequence(n, delta, gamma)).any(axis=1)))

    lo, hi = delta - 1 + 1e-6, delta - 1e-6
    if crossing(lo) <= delta:
        return lo
    if crossing(hi) > delta:
        return hi
    while hi - lo > 1e-9:
        mid = (lo + hi) / 2
        if crossing(mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi


def select(p: npt.ArrayLike, alpha: float, method: str = "bh", lam: float = 0.5) -> npt.NDArray[np.bool_]:
    """The step-up selection by sorting: the k* smallest p-values, k* the
    largest k with p₍ₖ₎ ≤ t(k); t(k) = kα/m (BH), kα/(m c(m)) (BY), BH at
    α/π̂₀ with π̂₀ = (1 + #{p > λ})/(m(1 − λ)) (Storey)."""
    p = np.asarray(p, dtype=np.float64)
    m = p.size
    k = np.arange(1, m + 1)
    if method == "by":
        t = k / m / math.fsum(1.0 / k) * alpha
    elif method == "storey":
        t = k / m * (alpha / ((1 + np.sum(p > lam)) / (m * (1 - lam))))
    else:
        t = k / m * alpha
    order = np.argsort(p, kind="stable")
    below = np.flatnonzero(p[order] <= t)
    mask = np.zeros(m, dtype=bool)
    if below.size:
        mask[order[: below[-1] + 1]] = True
    return mask
