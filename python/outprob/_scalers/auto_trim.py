"""``trim="auto"``: the upper-trim fraction chosen without labels (contract §10).

The paper fixes the upper trim at 10 % and names its choice without labels
as future work. The criterion reads the normal Q–Q plot: if the inliers are
Gaussian and the outliers sit above them, then after trimming exactly the
outliers the m = n − ⌊αn⌋ retained scores are a *complete* Gaussian sample,
and their order statistics lie on a line against Blom's normal quantiles
zᵢ = Φ⁻¹((i − 3/8)/(m + 1/4)), i = 1..m. Trimming less leaves outliers that
bend the top of the plot up; trimming more cuts the Gaussian's own upper
tail, which then bends it down (a truncated sample read as a complete one).
So the chosen α is the fraction of the grid 0, 0.01, …, 0.30 whose retained
scores have the largest Q–Q correlation r(α) (the Shapiro–Francia statistic
W′ = r²), the smallest α on ties. On Gaussian inliers with outliers well
above them it recovers the contamination
(tests/s10_transformations/test_auto_trim.py); on skewed inliers it trims
more, since their own upper tail is not Gaussian.
Cost: one sort and 31 reads of the scores.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri

#: The candidate fractions.
GRID = np.round(np.arange(0, 31) / 100, 2)
#: Below this many scores the Q–Q plot says little: the paper's 10 %.
MIN_SCORES = 20
FALLBACK = 0.1


def auto_trim(scores: np.ndarray) -> float:
    """The upper-trim fraction chosen by the Q–Q criterion above.

    ``scores``: the oriented (higher = more outlying) non-NaN scores of one
    column, any float dtype.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x = np.r_[rng.normal(size=970), rng.normal(8, 1, size=30)]  # 3 % outliers
    >>> auto_trim(x)
    0.03
    """
    x = np.sort(np.asarray(scores, dtype=np.float64))
    n = x.size
    if n < MIN_SCORES:
        return FALLBACK
    # Centered and scaled by robust statistics so that the sums below lose
    # nothing to cancellation (the correlation is invariant to both).
    mid = x[n // 2]
    spread = x[(3 * n) // 4] - x[n // 4]
    if not spread > 0:
        spread = x[-1] - x[0]
        if not spread > 0:
            return FALLBACK  # constant scores: nothing to choose
    u = (x - mid) / spread
    su, suu = np.cumsum(u), np.cumsum(u * u)
    best, chosen = -np.inf, FALLBACK
    for alpha in GRID:
        m = n - int(np.floor(alpha * n))
        z = ndtri((np.arange(1, m + 1) - 0.375) / (m + 0.25))
        # Σz = 0 by the plotting positions' symmetry; computed anyway.
        cov = float(np.dot(u[:m], z)) - su[m - 1] * float(z.sum()) / m
        var_u = suu[m - 1] - su[m - 1] ** 2 / m
        var_z = float(np.dot(z, z)) - float(z.sum()) ** 2 / m
        if not (var_u > 0 and var_z > 0):
            continue
        r = cov / np.sqrt(var_u * var_z)
        if r > best:
            best, chosen = r, float(alpha)
    return chosen
