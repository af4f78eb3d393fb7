"""What a user would write instead of outprob: NumPy, SciPy, statsmodels.

Each function computes the same numbers as the outprob call it is timed
against, the way a NumPy/SciPy/statsmodels user would write it: no tricks,
but the fastest idiom NumPy offers where there is an obvious one (one
partition instead of a sort). ``compare.py`` checks that every pair agrees
before it prints a ratio.
"""

from __future__ import annotations

import math
from typing import Callable, Dict, Tuple

import numpy as np
import scipy.special
import scipy.stats

from outprob.reference import metrics as reference_metrics

#: Iteration limit of Huber's proposal 2, for statsmodels and outprob alike:
#: on long-tailed scores it needs 30–40 iterations, statsmodels' default 30
#: makes it raise.
MAXITER = 100
#: Upper-trimming fraction of the trimmed-mean variants (contract §1).
ALPHA = 0.1
SQRT2 = math.sqrt(2.0)

Fit = Tuple[float, float]


# -- estimators -----------------------------------------------------------------------


def partition_rank(x: np.ndarray, k: int) -> float:
    """The (k+1)-th smallest score by one ``np.partition`` — NumPy's fastest
    single-rank select. ``np.partition`` copies once (``x.copy().partition(k)``);
    writing ``np.partition(x.copy(), k)`` would copy twice."""
    return np.partition(x, k)[k]


def quartiles(x: np.ndarray) -> np.ndarray:
    """Q(0.25), Q(0.75), NumPy's default (type 7) quantiles."""
    return np.quantile(x, [0.25, 0.75])


def nmad(x: np.ndarray) -> float:
    """Normalised MAD about the median."""
    return scipy.stats.median_abs_deviation(x, scale="normal")


def niqr(x: np.ndarray) -> float:
    """Normalised interquartile range."""
    return scipy.stats.iqr(x, scale="normal")


def upper_trimmed_mean(x: np.ndarray, alpha: float = ALPHA) -> float:
    """Mean of all but the floor(α·N) largest scores: one partition puts the
    N − k smallest first, then their mean."""
    keep = x.size - min(math.floor(alpha * x.size), x.size - 1)
    if keep == x.size:
        return x.mean()
    return np.partition(x, keep - 1)[:keep].mean()


def m_estimate(x: np.ndarray, norm: str) -> Fit:
    """Huber's proposal 2 with statsmodels (``maxiter=MAXITER``).

    statsmodels raises ``ValueError`` when it does not converge, so a value
    returned here is a converged one. (Imported here: it takes a second,
    which the peak-memory subprocesses that do not need it are spared.)"""
    from statsmodels.robust.norms import HuberT, TukeyBiweight
    from statsmodels.robust.scale import Huber

    weights = {"huber": HuberT, "tukey": TukeyBiweight}[norm]
    location, scale = Huber(norm=weights(), maxiter=MAXITER)(x)
    return float(location), float(scale)


# -- scalings -------------------------------------------------------------------------


def gaussian_scaling(x: np.ndarray, mu: float, sigma: float) -> np.ndarray:
    """Gaussian scaling as PyOD's ``predict_proba(method="unify")`` writes it.

    PyOD clips ``erf(…)`` to [0, 1]; ``np.maximum(0, …)`` is the same map
    (erf never exceeds 1) and is what contract §4 writes."""
    return np.maximum(0, scipy.special.erf((x - mu) / (sigma * SQRT2)))


def linear_scaling(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """``clip((x − min)/(max − min), 0, 1)``."""
    return np.clip((x - lo) / (hi - lo), 0, 1)


#: How a NumPy/SciPy/statsmodels user fits each named variant: name → (a, b),
#: (μ, σ) for the Gaussian variants, (min, max) for linear.
VARIANT_FITS: Dict[str, Callable[[np.ndarray], Fit]] = {
    "linear": lambda x: (x.min(), x.max()),
    "mean_std": lambda x: (x.mean(), x.std()),
    "mean_nmad": lambda x: (x.mean(), nmad(x)),
    "mean_niqr": lambda x: (x.mean(), niqr(x)),
    "median_std": lambda x: (np.median(x), x.std()),
    "median_nmad": lambda x: (np.median(x), nmad(x)),
    "median_niqr": lambda x: (np.median(x), niqr(x)),
    "trimmed_mean_std": lambda x: (upper_trimmed_mean(x), x.std()),
    "trimmed_mean_nmad": lambda x: (upper_trimmed_mean(x), nmad(x)),
    "trimmed_mean_niqr": lambda x: (upper_trimmed_mean(x), niqr(x)),
    "huber": lambda x: m_estimate(x, "huber"),
    "tukey": lambda x: m_estimate(x, "tukey"),
}


def fit_variant(name: str, x: np.ndarray) -> Fit:
    """The fitted (μ, σ) — or (min, max) — of a named variant."""
    return VARIANT_FITS[name](x)


def variant_fit_transform(name: str, x: np.ndarray) -> np.ndarray:
    """Probabilities of a named variant, fitted on and applied to ``x``."""
    a, b = fit_variant(name, x)
    scaling = linear_scaling if name == "linear" else gaussian_scaling
    return scaling(x, a, b)


# -- gamma scaling (contract §10) ----------------------------------------------------------


def _gamma_map(x: np.ndarray, k: float, theta: float) -> np.ndarray:
    """max(0, (P(k, x/θ) − P(k, k)) / (1 − P(k, k))) with scipy.special.gammainc."""
    at_mean = scipy.special.gammainc(k, k)
    return np.maximum(0.0, (scipy.special.gammainc(k, x / theta) - at_mean) / (1.0 - at_mean))


def gamma_fit_transform(x: np.ndarray) -> np.ndarray:
    """Gamma scaling by the method of moments (ELKI), on non-negative scores."""
    m = x.mean(dtype=np.float64)
    v = x.var(ddof=1, dtype=np.float64)
    return _gamma_map(x, m * m / v, v / m)


def robust_gamma_fit_transform(x: np.ndarray) -> np.ndarray:
    """Gamma scaling fitted to the quartiles: k solves the (q75 − q25)/q50
    ratio of Γ(k, 1) (scipy.stats.gamma.ppf, brentq on ln k)."""
    q25, q50, q75 = np.quantile(x, [0.25, 0.5, 0.75])
    target = (q75 - q25) / q50

    def ratio(t: float) -> float:
        q = scipy.stats.gamma.ppf([0.25, 0.5, 0.75], math.exp(t))
        return (q[2] - q[0]) / q[1] - target

    import scipy.optimize

    k = math.exp(scipy.optimize.brentq(ratio, math.log(1e-2), math.log(1e10), xtol=1e-14, rtol=1e-15))
    return _gamma_map(x, k, q50 / scipy.stats.gamma.ppf(0.5, k))


# -- evaluation measures -----------------------------------------------------------------

Strata = Tuple[float, float, float]  # overall, outliers, inliers


def _strata(errors: np.ndarray, y: np.ndarray) -> Strata:
    mean = reference_metrics.stratified_mean
    return mean(errors, y), mean(errors, y, "outlier"), mean(errors, y, "inlier")


def reference_evaluate(
    y: np.ndarray, p: np.ndarray, n_bins=reference_metrics.DEFAULT_N_BINS
) -> Dict[str, Strata]:
    """What ``outprob.metrics.evaluate(y, p)`` returns, from
    ``outprob.reference.metrics``: every measure overall, for the outliers
    and for the inliers (the stratified value is the mean of the last two);
    refinement and calibration with equiareal bins averaged over ``n_bins``.

    Each k's bin edges are computed once and shared by refinement and
    calibration and by the three strata, as a careful user would."""
    rm = reference_metrics
    result = {
        "brier_score": _strata(rm.brier_errors(y, p), y),
        "sharpness_error": _strata(rm.sharpness_errors(p), y),
    }
    per_k = {"refinement_error": [], "calibration_error": []}
    for k in n_bins:
        edges = rm.bin_edges(p, k, "equiareal")
        per_k["refinement_error"].append(_strata(rm.refinement_errors(y, p, edges), y))
        per_k["calibration_error"].append(_strata(rm.calibration_errors(y, p, edges), y))
    for measure, values in per_k.items():
        # Averaged over k as the reference's refinement_error/calibration_error do.
        result[measure] = tuple(math.fsum(column) / len(column) for column in zip(*values))
    return result


# -- contract §10: transformations beyond the paper --------------------------------------


def rank_fit_transform(x: np.ndarray) -> np.ndarray:
    """ELKI's mid-rank of the fitted scores: SciPy's average rank."""
    return (scipy.stats.rankdata(x, method="average") - 1.0) / (x.size - 1.0)


def rank_transform(sorted_x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Mid-rank of new scores by two ``np.searchsorted``."""
    lo = np.searchsorted(sorted_x, q, side="left")
    hi = np.searchsorted(sorted_x, q, side="right")
    return np.clip((lo + hi - 1.0) / (2.0 * (sorted_x.size - 1.0)), 0.0, 1.0)


def top_k_fit_transform(x: np.ndarray, k: int) -> np.ndarray:
    """``x >= `` the k-th largest score, found by one ``np.partition``."""
    cutoff = np.partition(x, x.size - k)[x.size - k]
    return (x >= cutoff).astype(np.float64)


def sigmoid_fit_transform(x: np.ndarray) -> np.ndarray:
    """The EM in NumPy (``outprob.reference.transformations``)."""
    from outprob.reference import transformations as rt

    return rt.sigmoid_scaling(rt.fit_sigmoid(x), x)


def mixture_fit_transform(x: np.ndarray) -> np.ndarray:
    """The EM in NumPy (``outprob.reference.transformations``)."""
    from outprob.reference import transformations as rt

    return rt.mixture_scaling(rt.fit_mixture(x), x)


def exceed_detector(x: np.ndarray, contamination: float = 0.1) -> object:
    """A fitted PyOD detector whose training scores (n) and test scores
    (m = n) are the benchmark's scores: what ``predict_confidence`` reads."""
    from pyod.models.base import BaseDetector

    class Fixed(BaseDetector):  # type: ignore[misc]
        def __init__(self, contamination: float = 0.1) -> None:
            super().__init__(contamination=contamination)

        def fit(self, X: object, y: object = None) -> "Fixed":
            self.decision_scores_ = np.asarray(x, dtype=np.float64)
            self._process_decision_scores()
            return self

        def decision_function(self, X: object) -> np.ndarray:
            return self.decision_scores_

    return Fixed(contamination=contamination).fit(None)


def pyod_predict_confidence(detector: object) -> np.ndarray:
    """PyOD's own ``predict_confidence``, O(n·m)."""
    return detector.predict_confidence(None)  # type: ignore[attr-defined]
