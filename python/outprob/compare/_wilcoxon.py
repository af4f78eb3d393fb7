"""The two-sided Wilcoxon signed-rank test behind :func:`outprob.compare`.

With the paired differences ``d`` and the ranks ``r_i`` of ``|d_i|`` (ties
get the mean of the ranks they span; zeros are handled by ``zero_method``
as in ``scipy.stats.wilcoxon``), the statistic is ``R⁺ = Σ_{d_i > 0} r_i``.
Under the null hypothesis every sign is + or − with probability ½,
independently, so ``R⁺ = c + Σ_i r_i·B_i`` with ``B_i ~ Bernoulli(½)`` over
the non-zero differences (``c``: the zeros' share under ``"zsplit"``, the
same in every sign pattern). The p-value is
``min(1, 2·min(P(R⁺ ≤ R⁺_obs), P(R⁺ ≥ R⁺_obs)))``.

* ``"exact"``: that distribution, conditional on the observed ranks, by
  dynamic programming over the doubled ranks (integers, since average
  ranks are multiples of ½): ``n`` steps over an array of
  ``Σ 2·r_i + 1 <= n(n + 1) + 1`` probabilities. Without ties or zeros it
  is SciPy's ``method="exact"``; with them it is SciPy's exact permutation
  test (``method=PermutationMethod()``, all ``2ⁿ`` sign patterns), which
  SciPy's ``"auto"`` runs only up to n = 13 at ``2ⁿ`` cost — here it costs
  O(n³) additions.
* ``"asymptotic"``: the normal approximation with SciPy's tie and zero
  corrections and no continuity correction (``scipy.stats.wilcoxon``'s
  defaults), computed by SciPy.
* ``"auto"``: exact up to :data:`EXACT_MAX` differences (SciPy's own
  threshold for its exact test), asymptotic above.
"""

from __future__ import annotations

from typing import Any, Tuple

import numpy as np
from scipy import stats as _st

#: ``method="auto"`` computes exact p-values up to this many differences.
EXACT_MAX = 50
METHODS = ("auto", "exact", "asymptotic")


def signed_rank_p_value(d: np.ndarray, zero_method: str, method: Any) -> Tuple[float, str]:
    """Two-sided p-value of the differences ``d`` and the name of the way it
    was computed: ``"exact"``, ``"asymptotic"`` or ``"scipy"`` (any other
    ``method`` is passed to ``scipy.stats.wilcoxon``). Every difference zero
    gives p = 1 (no evidence against the null, and no 0/0)."""
    if not np.any(d):
        return 1.0, "exact"
    if method == "auto":
        method = "exact" if d.size <= EXACT_MAX else "asymptotic"
    if method == "exact":
        return _exact_p_value(d, zero_method), "exact"
    res = _st.wilcoxon(d, zero_method=zero_method, method=method)
    return float(res.pvalue), "asymptotic" if method == "asymptotic" else "scipy"


def _doubled_ranks(d: np.ndarray, zero_method: str) -> Tuple[np.ndarray, np.ndarray]:
    """``2·r_i`` (int64) and the signs (d_i > 0) of the non-zero
    differences; zeros are dropped before ranking (``"wilcox"``) or ranked
    and then left out (``"pratt"``, ``"zsplit"``: their share of R⁺ is the
    same under every sign pattern)."""
    nonzero = d != 0
    a = np.abs(d[nonzero]) if zero_method == "wilcox" else np.abs(d)
    ranks = _st.rankdata(a)
    if zero_method != "wilcox":
        ranks = ranks[nonzero]
    return np.rint(2.0 * ranks).astype(np.int64), d[nonzero] > 0


def _exact_p_value(d: np.ndarray, zero_method: str) -> float:
    r2, positive = _doubled_ranks(d, zero_method)
    total = int(r2.sum())
    pmf = np.zeros(total + 1)
    pmf[0] = 1.0
    top = 0  # the support grows by r at each step
    for r in r2:
        r = int(r)
        # NumPy defines overlapping in-place ufuncs as if the input were copied.
        pmf[r : top + r + 1] += pmf[: top + 1]
        top += r
        pmf[: top + 1] *= 0.5
    observed = int(r2[positive].sum())
    below = pmf[: observed + 1].sum()
    above = pmf[observed:].sum()
    return float(min(1.0, 2.0 * min(below, above)))
