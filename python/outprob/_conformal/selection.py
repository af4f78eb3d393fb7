"""Selection with false-discovery-rate control and the false-positive-rate
band (contract §11): ``outprob.select``, ``outprob.fpr_upper_bound``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import numpy.typing as npt

from .._common.public import public
from .. import _core
from .._common.validation import as_float_array, check_real, check_threads

METHODS = ("bh", "storey", "by")


@dataclass(frozen=True)
@public("outprob")
class Selection:
    """The result of :func:`select`.

    Attributes
    ----------
    mask : ndarray of bool, shape (m,)
        Whether each p-value is selected (declared an outlier).
    indices : ndarray of int
        The positions of the selected p-values, ascending.
    threshold : float
        The p-value threshold t(k*) of the step-up procedure (0 when
        nothing is selected): the selection is ``pvalues <= threshold``.
    null_proportion : float
        Storey's estimate π̂₀ (1 for BH and BY).
    alpha : float
    method : str
    """

    mask: npt.NDArray[np.bool_]
    indices: npt.NDArray[np.intp]
    threshold: float
    null_proportion: float
    alpha: float
    method: str

    def __len__(self) -> int:
        return int(self.indices.size)


def select(
    pvalues: npt.ArrayLike,
    alpha: float = 0.1,
    method: str = "bh",
    *,
    lam: float = 0.5,
    threads: Optional[int] = None,
) -> Selection:
    r"""Selects the p-values to declare outliers, controlling the false
    discovery rate at ``alpha``.

    Step-up procedures with thresholds :math:`t(k)` increasing in k: the
    selection is :math:`\{p \le t(k^*)\}`, :math:`k^* = \max\{k :
    \#\{p \le t(k)\} \ge k\}`.

    * ``"bh"`` (Benjamini–Hochberg): :math:`t(k) = k\alpha/m`. FDR ≤ α for
      independent or PRDS p-values — conformal p-values of a test batch
      are PRDS (Bates et al. 2023), so BH on them controls the FDR.
    * ``"storey"`` (Storey's adaptive BH): BH at level :math:`\alpha/\hat\pi_0`,
      :math:`\hat\pi_0 = (1 + \#\{p > \lambda\})/(m(1 - \lambda))` (not
      capped): more power when many p-values are outliers'.
    * ``"by"`` (Benjamini–Yekutieli): :math:`t(k) = k\alpha/(m\,c(m))`,
      :math:`c(m) = \sum_{i \le m} 1/i`: FDR ≤ α under any dependence.

    O(m) time (no sort), selections equal to
    ``statsmodels.stats.multitest.multipletests`` (``fdr_bh``/``fdr_by``).

    Parameters
    ----------
    pvalues : array_like, shape (m,)
        p-values in [0, 1] (NaN refused).
    alpha : float in (0, 1], default 0.1
    method : {"bh", "storey", "by"}, default "bh"
    lam : float in (0, 1), default 0.5
        Storey's λ.
    threads : int, optional

    Returns
    -------
    Selection

    Examples
    --------
    >>> import outprob
    >>> sel = outprob.select([0.001, 0.8, 0.02, 0.04, 0.3], alpha=0.1)
    >>> sel.indices, sel.threshold
    (array([0, 2, 3]), 0.06)
    """
    if method not in METHODS:
        raise ValueError(f"method must be 'bh', 'storey' or 'by', got {method!r}")
    alpha, lam = check_real(alpha, "alpha"), check_real(lam, "lam")
    p = as_float_array(pvalues, "pvalues")
    if p.ndim != 1:
        raise ValueError(f"pvalues must be 1-D, got shape {p.shape}")
    p = np.ascontiguousarray(p, dtype=np.float64)
    mask = np.empty(p.size, dtype=bool)
    found = _core.conformal_select(
        p, mask, alpha=alpha, method=method, lam=lam, threads=check_threads(threads)
    )
    return Selection(mask, np.flatnonzero(mask), float(found.threshold),
                     float(found.null_proportion), alpha, method)


def fpr_upper_bound(
    calibration_scores: npt.ArrayLike,
    thresholds: npt.ArrayLike,
    *,
    delta: float = 0.05,
    method: str = "dkwm",
    higher_is_outlier: bool = True,
) -> Any:
    r"""A uniform upper confidence bound on the false-positive rate of
    flagging scores at or above a threshold (Bates et al. 2023).

    With probability at least 1 − δ over the calibration scores (inliers),
    for every threshold t at once, a new inlier's score S has
    :math:`P(S \ge t) \le` ``bound(t)``. The bound is the
    calibration-conditional p-value of t; with ``method="dkwm"``,
    :math:`\min\left(1, \frac{1 + \#\{s_i \ge t\}}{n + 1} +
    \sqrt{\ln(2/\delta)/(2n)}\right)`. See
    :meth:`ConformalScaler.fpr_upper_bound`.

    Examples
    --------
    >>> import numpy as np, outprob
    >>> cal = np.random.default_rng(1).exponential(size=2000)
    >>> bound = outprob.fpr_upper_bound(cal, [1.0, 3.0, 5.0], delta=0.1)
    >>> bool(np.all(bound >= np.exp(-np.array([1.0, 3.0, 5.0]))))  # the true FPR
    True
    """
    from .scaler import ConformalScaler

    s = ConformalScaler(higher_is_outlier=higher_is_outlier).fit(calibration_scores)
    return s.fpr_upper_bound(thresholds, delta=delta, method=method)
