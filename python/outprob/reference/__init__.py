"""The NumPy/SciPy reference implementation of contract §1–§6.

Plain, slow and written to be read side by side with the contract, ``docs/contract.md``; the tests
check the compiled core against it. It never imports ``outprob._core``.
"""

from .estimators import (
    NIQR_DIVISOR,
    NMAD_DIVISOR,
    MEstimate,
    gamma,
    m_estimate,
    mean,
    median,
    niqr,
    nmad,
    quantile,
    std,
    trimmed_count,
    trimmed_std,
    upper_trimmed_mean,
)
from . import conformal, metrics
from .scaling import (
    VARIANTS,
    fit_center,
    fit_gaussian,
    fit_linear,
    fit_scale,
    gaussian_scaling,
    linear_scaling,
    variant_probabilities,
)

__all__ = [
    "conformal",
    "metrics",
    "NIQR_DIVISOR",
    "NMAD_DIVISOR",
    "MEstimate",
    "VARIANTS",
    "fit_center",
    "fit_gaussian",
    "fit_linear",
    "fit_scale",
    "gamma",
    "gaussian_scaling",
    "linear_scaling",
    "m_estimate",
    "mean",
    "median",
    "niqr",
    "nmad",
    "quantile",
    "std",
    "trimmed_count",
    "trimmed_std",
    "upper_trimmed_mean",
    "variant_probabilities",
]
