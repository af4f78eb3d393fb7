"""One p-value per point from several detectors (contract §11, "Several
detectors"): ``outprob.combine_pvalues`` (Cauchy, harmonic mean) and
``outprob.ensemble_pvalues`` (conformal p-values of an ensemble score
built symmetrically from calibration and test points)."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import numpy.typing as npt

from .. import _core
from .._common.validation import as_float_array
from .scaler import ConformalScaler

RULES = ("cauchy", "harmonic")
ENSEMBLES = ("mean", "max")


def _matrix(x: npt.ArrayLike, name: str) -> np.ndarray:
    a = as_float_array(x)
    if a.ndim == 1:
        a = a[:, None]
    if a.ndim != 2 or a.shape[1] == 0:
        raise ValueError(f"{name} must be a 2-D array (points × detectors), got shape {a.shape}")
    return np.ascontiguousarray(a, dtype=np.float64)


def combine_pvalues(
    pvalues: npt.ArrayLike, rule: str = "cauchy", *, weights: Optional[npt.ArrayLike] = None
) -> np.ndarray:
    r"""Combines k p-values per point (a column per detector) into one.

    - ``"cauchy"`` (Liu & Xie, JASA 2020): :math:`T = \sum_j w_j
      \tan((\tfrac12 - p_j)\pi)`, :math:`p = \tfrac12 - \arctan(T)/\pi`
      (weights summing to 1, equal by default). Exact for independent
      p-values; under dependence :math:`P(p \le \alpha)/\alpha \to 1` as
      :math:`\alpha \to 0` when the p-values' normal scores are pairwise
      bivariate normal — not guaranteed at every α under arbitrary
      dependence (contract §11).
    - ``"harmonic"`` (Vovk & Wang, Biometrika 2020): :math:`\min(1, a_K\,
      K / \sum_j p_j^{-1})` with :math:`a_K = e \ln K` (K ≥ 3; K for
      K ≤ 2): valid, :math:`P(p \le \alpha) \le \alpha`, under any
      dependence between the detectors.

    Each combined p-value is valid for its point; Benjamini–Hochberg on
    them is not proven to control the FDR (its PRDS condition is not
    known to survive the combination) — :func:`ensemble_pvalues` is.

    Parameters
    ----------
    pvalues : array_like, shape (m, k)
        p-values in [0, 1] (e.g. ``ConformalScaler().fit(cal).pvalues(test)``
        on k score columns); a row with a NaN gives NaN.
    rule : {"cauchy", "harmonic"}, default "cauchy"
    weights : array_like of shape (k,), optional
        Non-negative detector weights of the Cauchy rule.

    Returns
    -------
    numpy.ndarray of shape (m,)
        The combined p-value of each point (row).

    Examples
    --------
    >>> import numpy as np, outprob
    >>> P = np.array([[0.01, 0.01], [0.01, 0.5], [0.5, 0.9]])
    >>> outprob.combine_pvalues(P).round(4)
    array([0.01  , 0.02  , 0.8166])
    >>> outprob.combine_pvalues(P, "harmonic").round(4)
    array([0.02  , 0.0392, 1.    ])
    """
    if rule not in RULES:
        raise ValueError(f"rule must be 'cauchy' or 'harmonic', got {rule!r}")
    p = _matrix(pvalues, "pvalues")
    w = None if weights is None else [float(v) for v in as_float_array(weights).ravel()]
    return _core.combine_pvalues(p.ravel(), p.shape[1], rule=rule, weights=w)


def ensemble_pvalues(
    calibration_scores: npt.ArrayLike,
    test_scores: npt.ArrayLike,
    *,
    combine: str = "mean",
    higher_is_outlier: bool = True,
    tail: Optional[str] = None,
    tail_quantile: float = 0.9,
) -> Any:
    r"""Conformal p-values of an ensemble of k detectors.

    Each detector's scores are standardised by the median and nMAD of its
    pooled calibration and test scores, :math:`z_j = (s_j -
    \operatorname{med}_j)/\operatorname{nMAD}_j` (the standard deviation
    where the nMAD is 0), the ensemble score is their mean (or maximum),
    and the test points get the conformal p-values of their ensemble
    scores against those of the calibration points. The standardisation
    is a function of the unordered pooled sample, so a test inlier and the
    calibration inliers stay exchangeable: the p-values are valid and
    Benjamini–Hochberg on them controls the FDR (Marandon, Lei, Mary &
    Roquain, Annals of Statistics 2024). With ``tail`` the p-values get a
    fitted tail (:class:`ConformalScaler`), whose guarantee holds above
    :math:`p_u` only.

    Parameters
    ----------
    calibration_scores : array_like, shape (n, k)
        Scores of inliers (a column per detector; finite).
    test_scores : array_like, shape (m, k)
        Scores of the points to test, same detectors.
    combine : {"mean", "max"}, default "mean"
    higher_is_outlier : bool, default True
    tail, tail_quantile
        As for :class:`ConformalScaler`.

    Returns
    -------
    numpy.ndarray of shape (m,)
        Each test point's conformal p-value, that of its ensemble score.

    Examples
    --------
    >>> import numpy as np, outprob
    >>> rng = np.random.default_rng(0)
    >>> cal = rng.normal(size=(999, 3))
    >>> test = np.array([[0.0, 0.0, 0.0], [3.0, 3.0, 3.0]])
    >>> outprob.ensemble_pvalues(cal, test)
    array([0.485, 0.001])
    """
    if combine not in ENSEMBLES:
        raise ValueError(f"combine must be 'mean' or 'max', got {combine!r}")
    cal, test = _matrix(calibration_scores, "calibration_scores"), _matrix(test_scores, "test_scores")
    if cal.shape[1] != test.shape[1]:
        raise ValueError(f"calibration_scores has {cal.shape[1]} detectors, test_scores {test.shape[1]}")
    cal_t, test_t = _core.ensemble_scores(cal.ravel(), test.ravel(), cal.shape[1],
                                          negate=not higher_is_outlier, combine=combine)
    scaler = ConformalScaler(tail=tail, tail_quantile=tail_quantile, nan_policy="raise")
    return scaler.fit(cal_t).pvalues(test_t)

