"""Type stubs of the compiled core (``rust/python``). Arrays are 1-D (or, for
transforms, any-shape C-contiguous) float32/float64, native byte order."""

from typing import List, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

_Scores = Union[npt.NDArray[np.float64], npt.NDArray[np.float32]]
# (location, scale, n_iter, converged, start scale name)
_MTuple = Tuple[float, float, int, bool, str]

def mean(x: _Scores, nan_policy: str) -> float: ...
def std(x: _Scores, ddof: int, nan_policy: str) -> float: ...
def median(x: _Scores, nan_policy: str) -> float: ...
def quantile(x: _Scores, q: List[float], nan_policy: str) -> List[float]: ...
def upper_trimmed_mean(x: _Scores, alpha: float, nan_policy: str) -> float: ...
def nmad(x: _Scores, nan_policy: str) -> float: ...
def niqr(x: _Scores, nan_policy: str) -> float: ...
def trimmed_std(x: _Scores, center: float, alpha: float, nan_policy: str) -> float: ...
def m_estimate(
    x: _Scores,
    norm: str,
    c: float,
    tuning: Optional[float],
    maxiter: int,
    tol: float,
    nan_policy: str,
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
) -> Tuple[float, float, str, List[Tuple[str, _MTuple]]]: ...
def fit_linear(x: _Scores, nan_policy: str, negate: bool) -> Tuple[float, float]: ...
def _erf(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]: ...
def transform(
    x: _Scores,
    out: _Scores,
    scaling: str,
    first: List[float],
    second: List[float],
    negate: bool,
) -> None:
    """``scaling`` "gaussian" (centers, scales) or "linear" (mins, maxs)."""

# (all, outlier, inlier); NaN for an absent class
_Strata = Tuple[float, float, float]
_Labels = npt.NDArray[np.bool_]

def evaluate(
    p: _Scores, y: _Labels, bins: str, n_bins: List[int]
) -> Tuple[_Strata, _Strata, _Strata, _Strata, int, int]: ...
def brier_and_sharpness(p: _Scores, y: _Labels) -> Tuple[_Strata, _Strata]: ...
def refinement_and_calibration(
    p: _Scores, y: _Labels, bins: str, n_bins: List[int]
) -> Tuple[_Strata, _Strata]: ...
def bin_edges(p: _Scores, k: int, bins: str) -> List[float]: ...
def reliability_curve(
    p: _Scores, y: _Labels, bins: str, k: int
) -> Tuple[List[float], List[float], List[float], List[int]]: ...
