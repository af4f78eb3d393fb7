"""Type stubs of the compiled core (``rust/python``). Arrays are 1-D (or, for
transforms, any-shape C-contiguous) float32/float64, native byte order.
``threads``: 0 for every core, else a count (see ``_input.check_threads``).
Checked against the extension by ``tests/test_typing.py`` (mypy.stubtest)."""

from typing import List, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

__all__ = [
    "mean",
    "std",
    "median",
    "quantile",
    "upper_trimmed_mean",
    "nmad",
    "niqr",
    "trimmed_std",
    "m_estimate",
    "_erf",
    "fit_gaussian",
    "fit_linear",
    "transform",
    "evaluate",
    "brier_and_sharpness",
    "refinement_and_calibration",
    "bin_edges",
    "reliability_curve",
]

_Scores = Union[npt.NDArray[np.float64], npt.NDArray[np.float32]]
# (location, scale, n_iter, converged, start scale name)
_MTuple = Tuple[float, float, int, bool, str]

def mean(x: _Scores, nan_policy: str, threads: int) -> float: ...
def std(x: _Scores, ddof: int, nan_policy: str, threads: int) -> float: ...
def median(x: _Scores, nan_policy: str, threads: int) -> float: ...
def quantile(x: _Scores, q: List[float], nan_policy: str, threads: int) -> List[float]: ...
def upper_trimmed_mean(x: _Scores, alpha: float, nan_policy: str, threads: int) -> float: ...
def nmad(x: _Scores, nan_policy: str, threads: int) -> float: ...
def niqr(x: _Scores, nan_policy: str, threads: int) -> float: ...
def trimmed_std(
    x: _Scores, center: float, alpha: float, nan_policy: str, threads: int
) -> float: ...
def m_estimate(
    x: _Scores,
    norm: str,
    c: float,
    tuning: Optional[float],
    maxiter: int,
    tol: float,
    nan_policy: str,
    threads: int,
) -> _MTuple: ...
def fit_gaussian(
    x: _Scores,
    center: Union[str, float],
    scale: Union[str, float],
    trim: float,
    ddof: int,
    maxiter: int,
    tol: float,
    nan_policy: str,
    negate: bool,
    threads: int,
) -> Tuple[float, float, str, List[Tuple[str, _MTuple]]]: ...
def fit_linear(
    x: _Scores, nan_policy: str, negate: bool, threads: int
) -> Tuple[float, float]: ...
def _erf(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]: ...
def transform(
    x: _Scores,
    out: _Scores,
    scaling: str,
    first: List[float],
    second: List[float],
    negate: bool,
    threads: int,
) -> None:
    """``scaling`` "gaussian" (centers, scales) or "linear" (mins, maxs)."""

# (all, outlier, inlier); NaN for an absent class
_Strata = Tuple[float, float, float]
_Labels = npt.NDArray[np.bool_]

def evaluate(
    p: _Scores, y: _Labels, bins: str, n_bins: List[int], threads: int
) -> Tuple[_Strata, _Strata, _Strata, _Strata, int, int]: ...
def brier_and_sharpness(p: _Scores, y: _Labels, threads: int) -> Tuple[_Strata, _Strata]: ...
def refinement_and_calibration(
    p: _Scores, y: _Labels, bins: str, n_bins: List[int], threads: int
) -> Tuple[_Strata, _Strata]: ...
def bin_edges(p: _Scores, k: int, bins: str, threads: int) -> List[float]: ...
def reliability_curve(
    p: _Scores, y: _Labels, bins: str, k: int, threads: int
) -> Tuple[List[float], List[float], List[float], List[int]]: ...
