"""Type stubs of the compiled core (``rust/python``). Arrays are 1-D (or, for
transforms, any-shape C-contiguous) float32/float64, native byte order.
``threads``: 0 for every core, else a count (see ``_input.check_threads``).
Checked against the extension by ``tests/test_typing.py`` (mypy.stubtest)."""

from typing import Any, Callable, Dict, List, Optional, Tuple, Union

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
    "Transformer",
    "FitPlan",
    "transform",
    "fit_rank",
    "fit_transform_rank",
    "fit_top_k",
    "fit_sigmoid",
    "fit_mixture",
    "transform_rank",
    "transform_params",
    "fit_gamma",
    "gamma_transform",
    "_gamma_pq",
    "GammaMaps",
    "fit_gaussian_options",
    "gaussian_options_transform",
    "evaluate",
    "brier_and_sharpness",
    "refinement_and_calibration",
    "bin_edges",
    "reliability_curve",
    "KllSketch",
    "StreamingState",
    "WindowState",
    "kll_normalized_rank_error",
    "part_census",
    "part_histogram",
    "part_collect",
    "select_exact",
    "order_key",
    "from_order_key",
    "quantile_ranks",
    "quantile_value",
    "median_value",
    "part_sum_below",
    "exact_total",
    "part_squares_below",
    "part_m_sums",
    "m_iterate",
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

class Transformer:
    """A fitted scaling held by the extension (the latency path of transform)."""

    def __new__(
        cls, scaling: str, first: List[float], second: List[float], negate: bool, two_d: bool
    ) -> "Transformer": ...
    def try_apply(self, x: object, threads: int) -> Optional[_Scores]:
        """The probabilities of a C-contiguous float ndarray, else None."""

class FitPlan:
    """A scaler's checked fitting parameters held by the extension (the
    latency path of fit_transform)."""

    @staticmethod
    def gaussian(
        center: Union[str, float], scale: Union[str, float], trim: float, ddof: int,
        maxiter: int, tol: float, nan_policy: str, negate: bool, threads: int,
    ) -> "FitPlan": ...
    @staticmethod
    def linear(nan_policy: str, negate: bool, threads: int) -> "FitPlan": ...
    def fit_transform(
        self, x: object
    ) -> Optional[Tuple[Union[Tuple[float, float, str, List[Tuple[str, _MTuple]]], Tuple[float, float]], _Scores, Transformer]]:
        """(fit, probabilities, transformer) of a C-contiguous 1-D float
        ndarray, else None."""

# -- contract §10: transformations beyond the paper -------------------------------
def fit_rank(
    x: _Scores, nan_policy: str, negate: bool, threads: int
) -> npt.NDArray[np.float64]: ...
def fit_transform_rank(
    x: _Scores, out: _Scores, log: bool, nan_policy: str, negate: bool
) -> npt.NDArray[np.float64]: ...
def fit_top_k(
    x: _Scores, k: int, nan_policy: str, negate: bool, threads: int
) -> Tuple[float, float]: ...
def fit_sigmoid(
    x: _Scores, nan_policy: str, negate: bool, maxiter: int, threads: int
) -> Tuple[float, float, float, float, int, bool]: ...
def fit_mixture(
    x: _Scores, nan_policy: str, negate: bool, maxiter: int, tol: float, threads: int
) -> Tuple[float, float, float, float, float, int, bool, bool]: ...
def transform_rank(
    x: _Scores,
    out: _Scores,
    sorted: List[npt.NDArray[np.float64]],
    log: bool,
    negate: bool,
    threads: int,
) -> None: ...
def transform_params(
    x: _Scores,
    out: _Scores,
    kind: str,
    params: List[List[float]],
    negate: bool,
    threads: int,
) -> None:
    """``kind`` "top_k" (cutoff, max, binary), "sigmoid" (center, scale, a, b)
    or "mixture" (scale, alpha, mu, sigma, lambda), one row per column."""
# -- gamma scaling (contract §10) -------------------------------------------------

# (offset, mean, scale, method used)
def fit_gamma(
    x: _Scores,
    method: str,
    offset: Optional[float],
    nan_policy: str,
    negate: bool,
    threads: int,
) -> Tuple[float, float, float, str]: ...
def gamma_transform(
    x: _Scores,
    out: _Scores,
    offsets: List[float],
    means: List[float],
    scales: List[float],
    negate: bool,
    threads: int,
) -> None: ...
# -- GaussianScaler's ELKI options (contract §10) ----------------------------------

# (fit_gaussian's tuple, the "sqrt" pretransform's fitted minimum or NaN)
def fit_gaussian_options(
    x: _Scores,
    center: Union[str, float],
    scale: Union[str, float],
    trim: float,
    ddof: int,
    maxiter: int,
    tol: float,
    nan_policy: str,
    negate: bool,
    pretransform: str,
    fixed_center: Optional[float],
    threads: int,
) -> Tuple[Tuple[float, float, str, List[Tuple[str, _MTuple]]], float]: ...
def gaussian_options_transform(
    x: _Scores,
    out: _Scores,
    pretransform: str,
    pre_mins: List[float],
    centers: List[float],
    scales: List[float],
    negate: bool,
    threads: int,
) -> None: ...
class GammaMaps:
    """Fitted gamma scalings of the columns, tabulated once."""

    def __new__(cls, offsets: List[float], means: List[float], scales: List[float]) -> "GammaMaps": ...
    def transform(self, x: _Scores, out: _Scores, negate: bool, threads: int) -> None: ...

def _gamma_pq(
    a: npt.NDArray[np.float64], x: npt.NDArray[np.float64]
) -> Tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]: ...

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

# -- streaming (contract §9) ---------------------------------------------------

_Interval = Optional[Tuple[float, float]]
_Spec = Union[str, float]

class KllSketch:
    """DataSketches-compatible KLL sketch of doubles (``double=True``) or floats."""

    def __new__(cls, k: int, double: bool, seed: int) -> "KllSketch": ...
    def update(self, x: _Scores) -> None: ...
    def merge(self, other: "KllSketch") -> None: ...
    def serialize(self) -> bytes: ...
    @staticmethod
    def deserialize(data: bytes, double: bool, seed: int) -> "KllSketch": ...
    def quantiles(self, ranks: List[float], inclusive: bool) -> List[float]: ...
    def ranks(self, items: List[float], inclusive: bool) -> List[float]: ...
    def weighted_items(self) -> Tuple[npt.NDArray[np.float64], npt.NDArray[np.uint64]]: ...
    def normalized_rank_error(self, pmf: bool) -> float: ...
    # (k, m, n, num_retained, is_empty, is_estimation_mode, min_k)
    def info(self) -> Tuple[int, int, int, int, bool, bool, int]: ...
    def extremes(self) -> Optional[Tuple[float, float]]: ...
    def copy(self) -> "KllSketch": ...

def kll_normalized_rank_error(k: int, pmf: bool) -> float: ...

class StreamingState:
    """Exact moments plus, when the estimators need order statistics, a sketch."""

    def __new__(
        cls,
        center: _Spec,
        scale: _Spec,
        trim: float,
        ddof: int,
        maxiter: int,
        tol: float,
        nan_policy: str,
        negate: bool,
        k: int,
        seed: int,
    ) -> "StreamingState": ...
    def update(self, x: _Scores) -> int: ...
    def merge(self, other: "StreamingState") -> None: ...
    def n(self) -> int: ...
    def extremes(self) -> Tuple[float, float]: ...
    # (center, scale, scale_used, center_interval, scale_interval,
    #  probability_error, rank_error, [(norm, M-estimate)], n)
    def result(
        self,
    ) -> Tuple[
        float, float, str, _Interval, _Interval, Optional[float], float, List[Tuple[str, _MTuple]], int
    ]: ...
    def parts(self) -> Dict[str, Any]: ...
    @staticmethod
    def from_parts(
        center: _Spec,
        scale: _Spec,
        trim: float,
        ddof: int,
        maxiter: int,
        tol: float,
        nan_policy: str,
        negate: bool,
        moments: Dict[str, Any],
        sketch: Optional[bytes],
        seed: int,
    ) -> "StreamingState": ...

class WindowState:
    """The most recent ``size`` scores, refitted exactly."""

    def __new__(cls, size: int, refit_every: int) -> "WindowState": ...
    def update(self, x: _Scores, nan_policy: str) -> int: ...
    def due(self) -> bool: ...
    def seen(self) -> int: ...
    def fit_gaussian(
        self,
        center: _Spec,
        scale: _Spec,
        trim: float,
        ddof: int,
        maxiter: int,
        tol: float,
        negate: bool,
    ) -> Tuple[float, float, str, List[Tuple[str, _MTuple]]]: ...
    def fit_linear(self, negate: bool) -> Tuple[float, float]: ...
    # (size, refit_every, since_refit, seen, values)
    def parts(self) -> Tuple[int, int, int, int, npt.NDArray[np.float64]]: ...
    @staticmethod
    def from_parts(
        size: int, refit_every: int, since_refit: int, seen: int, values: List[float]
    ) -> "WindowState": ...

# -- per-partition kernels of the exact Dask fit (contract §9) -------------------

# (len, count, nan count, first nan, inf count, first inf)
def part_census(x: _Scores) -> Tuple[int, int, int, int, int, int, float, float]: ...
def part_histogram(
    x: _Scores, center: Optional[float], negate: bool, lo: int, shift: int, buckets: int
) -> Tuple[int, npt.NDArray[np.uint64]]: ...
def part_collect(
    x: _Scores, center: Optional[float], negate: bool, lo: int, hi: int
) -> npt.NDArray[np.float64]: ...
def select_exact(values: List[float], ranks: List[int]) -> List[float]: ...
def order_key(v: float) -> int: ...
def from_order_key(k: int) -> float: ...
def quantile_ranks(n: int, q: float) -> List[int]: ...
def quantile_value(n: int, q: float, values: List[float]) -> float: ...
def median_value(values: List[float]) -> float: ...
def part_sum_below(x: _Scores, negate: bool, v: float) -> Tuple[bool, List[int], int]: ...
def exact_total(parts: List[Tuple[bool, List[int]]], v: float, ties: int) -> float: ...
def part_squares_below(
    x: _Scores, negate: bool, c: float, w: float, e: int
) -> Tuple[float, int]: ...
def part_m_sums(
    x: _Scores, negate: bool, norm: str, m: float, sigma: float
) -> Tuple[float, float, float, float, float, float]: ...
# (location, scale, n_iter, converged, reductions)
def m_iterate(
    callback: Callable[[float, float], Any],
    norm: str,
    maxiter: int,
    tol: float,
    n: int,
    mu0: float,
    sigma0: float,
) -> Tuple[float, float, int, bool, int]: ...
