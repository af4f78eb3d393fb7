"""Reference implementation of contract §13 in plain NumPy: Label-Trim's
candidates, weighted and integrative conformal p-values, written from the
papers' formulas as direct O(n·m) counts, slow and obvious.

Scores are oriented (higher = more outlying) and NaN-free.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Optional

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float64]


def label_trim_candidates(scores: npt.ArrayLike, budget: int) -> npt.NDArray[np.intp]:
    """The ``budget`` highest scores' indices, highest first, ties in input
    order (Bashari, Sesia & Romano 2025, §3: the points shown to a
    person). NaN scores are never candidates."""
    s = np.asarray(scores, dtype=np.float64)
    finite = [i for i in range(s.size) if not np.isnan(s[i])]
    ranked = sorted(finite, key=lambda i: (-s[i], i))
    return np.array(ranked[:budget], dtype=np.intp)


def weighted_pvalues(
    calibration: npt.ArrayLike,
    calibration_weights: npt.ArrayLike,
    s: npt.ArrayLike,
    w: npt.ArrayLike,
    u: Optional[npt.ArrayLike] = None,
) -> Array:
    """``(Σ wᵢ 1{sᵢ ≥ s} + w)/(Σ wᵢ + w)`` (Tibshirani et al. 2019; Jin &
    Candès 2023); with uniforms ``u`` the randomised ``(Σ wᵢ 1{sᵢ > s} +
    u(Σ wᵢ 1{sᵢ = s} + w))/(Σ wᵢ + w)``. NaN stays NaN."""
    cal = np.asarray(calibration, dtype=np.float64)
    cw = np.asarray(calibration_weights, dtype=np.float64)
    q = np.asarray(s, dtype=np.float64).reshape(-1)
    tw = np.asarray(w, dtype=np.float64).reshape(-1)
    total = float(np.sum(cw))
    out = np.empty(q.size)
    for j, (x, wx) in enumerate(zip(q, tw)):
        if np.isnan(x):
            out[j] = np.nan
            continue
        if u is None:
            num = float(np.sum(cw[cal >= x])) + wx
        else:
            tied = float(np.sum(cw[cal == x]))
            num = float(np.sum(cw[cal > x])) + float(np.asarray(u)[j]) * (tied + wx)
        out[j] = min(1.0, num / (total + wx))
    return out


def integrative_pvalues(
    inliers: npt.ArrayLike, outliers: npt.ArrayLike, test: npt.ArrayLike
) -> Array:
    """Liang, Sesia & Sun (2024), eqs. (3)–(6), for fixed score functions:
    ``inliers`` (n, 2) and ``test`` (m, 2) hold (a, b) — a from the
    inlier-trained detector, b from the outlier-trained one, both "higher =
    more outlying"; ``outliers`` (k,) the labelled outliers' b. For each
    test point the inlier calibration set is augmented with it,

    u₀(x) = #{z : a(z) ≥ a(x)}/(n + 1) over the augmented set,
    u₁(x) = (1 + #{j : oⱼ ≤ b(x)})/(k + 1),  r = u₀/u₁,
    p = (1 + #{i : r(xᵢ) ≤ r(test)})/(n + 1),

    with the ratios compared exactly (fractions). NaN rows give NaN."""
    cal = np.asarray(inliers, dtype=np.float64).reshape(-1, 2)
    out = np.asarray(outliers, dtype=np.float64).reshape(-1)
    t = np.asarray(test, dtype=np.float64).reshape(-1, 2)
    n, k = cal.shape[0], out.size
    result = np.empty(t.shape[0])
    u1 = [Fraction(1 + int(np.sum(out <= b)), k + 1) for b in cal[:, 1]]
    for j, (a, b) in enumerate(t):
        if np.isnan(a) or np.isnan(b):
            result[j] = np.nan
            continue
        aug = np.append(cal[:, 0], a)
        r_test = Fraction(int(np.sum(aug >= a)), n + 1) / Fraction(1 + int(np.sum(out <= b)), k + 1)
        count = 0
        for i in range(n):
            u0 = Fraction(int(np.sum(aug >= cal[i, 0])), n + 1)
            if u0 / u1[i] <= r_test:
                count += 1
        result[j] = (1 + count) / (n + 1)
    return result
