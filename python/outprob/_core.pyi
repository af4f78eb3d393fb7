"""Type stubs of the compiled core (``rust/python``). Arrays are 1-D (or, for
transforms and streaming batches, any-shape C-contiguous) float32/float64,
native byte order. ``threads``: 0 for every core, else a count (see
``_common.validation.check_threads``). Names of estimators, NaN policies, binning
schemes, ... are parsed by the core, whose ``ValueError`` names the
parameter. Checked against the extension by ``tests/s07_api/test_typing.py``."""

from typing import Any, Callable, Dict, List, Optional, Tuple, TypedDict, Union

import numpy as np
import numpy.typing as npt
from typing_extensions import Unpack

__all__ = [
    "limits",
    "check_scores",
    "MEstimate",
    "GaussianFit",
    "LinearFit",
    "TopKFit",
    "SigmoidFit",
    "MixtureFit",
    "GammaFit",
    "StreamingResult",
    "SketchInfo",
    "Strata",
    "Evaluation",
    "ReliabilityCurve",
    "GaussianSpec",
    "mean",
    "std",
    "median",
    "quantile",
    "upper_trimmed_mean",
    "nmad",
    "niqr",
    "trimmed_std",
    "m_estimate",
    "fit_gaussian",
    "fit_linear",
    "fit_transform_gaussian",
    "fit_transform_linear",
    "fit_rank",
    "fit_transform_rank",
    "fit_top_k",
    "fit_sigmoid",
    "fit_mixture",
    "fit_gamma",
    "FittedMap",
    "LineReader",
    "TextStream",
    "evaluate",
    "brier_and_sharpness",
    "refinement_and_calibration",
    "bin_edges",
    "reliability_curve",
    "KllSketch",
    "StreamingState",
    "WindowState",
    "kll_normalized_rank_error",
    "ColumnFit",
    "Pass",
    "Partial",
    "ColumnPlan",
    "ConformalSpec",
    "ConformalSketch",
    "ConformalSketchInfo",
    "ConformalCalibration",
    "ConformalTail",
    "TailSummary",
    "combine_pvalues",
    "ensemble_scores",
    "WeightedCalibration",
    "IntegrativeCalibration",
    "SelectionFit",
    "conformal_mc_correction",
    "conformal_select",
    "OnlineFdrState",
    "MartingaleState",
    "OnlinePvaluesState",
    "DecayedFitState",
    "DecayedMoments",
    "DriftPolicyState",
    "DriftEvent",
    "DriftInfo",
    "drift_check_decayed",
    "drift_decayed_gaussian",
    "csv_layout",
]

_Scores = Union[npt.NDArray[np.float64], npt.NDArray[np.float32]]
_Labels = npt.NDArray[np.bool_]
_Spec = Union[str, float]


# -- results ------------------------------------------------------------------------

class MEstimate:
    """Huber's proposal 2 (contract §3) with one norm."""

    norm: str
    location: float
    scale: float
    #: Outer iterations run.
    n_iter: int
    converged: bool
    #: The scale the iteration started from ("nmad" or its fallback,
    #: "constant" for constant scores).
    start: str
    def __new__(
        cls, norm: str, location: float, scale: float, n_iter: int, converged: bool, start: str
    ) -> "MEstimate": ...

class GaussianFit:
    """A Gaussian fit: μ, σ, the scale used, the M-estimates it ran, and the
    "sqrt" pretransform's fitted minimum (else None)."""

    center: float
    scale: float
    #: The scale estimator that produced σ (the chosen one or its §5
    #: fallback; "value" for a fixed σ).
    scale_used: str
    #: Every M-estimate the fit ran.
    m_estimates: List[MEstimate]
    #: The smallest fitted score of a "sqrt" pretransform, else None
    #: (set by the fit that pretransforms).
    pre_min: Optional[float]
    def __new__(
        cls, center: float, scale: float, scale_used: str, m_estimates: List[MEstimate],
        pre_min: Optional[float],
    ) -> "GaussianFit": ...

class LinearFit:
    """A linear fit: the smallest and largest oriented score."""

    min: float
    max: float
    def __new__(cls, min: float, max: float) -> "LinearFit": ...

class TopKFit:
    """A top-k fit: the k-th largest and the largest score."""

    cutoff: float
    max: float
    def __new__(cls, cutoff: float, max: float) -> "TopKFit": ...

class SigmoidFit:
    """A sigmoid fit (contract §10)."""

    center: float
    scale: float
    a: float
    b: float
    n_iter: int
    converged: bool
    def __new__(
        cls, center: float, scale: float, a: float, b: float, n_iter: int, converged: bool
    ) -> "SigmoidFit": ...

class MixtureFit:
    """A mixture-model fit (contract §10); ``lambda_`` is λ."""

    scale: float
    alpha: float
    mu: float
    sigma: float
    lambda_: float
    n_iter: int
    converged: bool
    degenerate: bool
    def __new__(
        cls, scale: float, alpha: float, mu: float, sigma: float, lambda_: float, n_iter: int,
        converged: bool, degenerate: bool,
    ) -> "MixtureFit": ...

class GammaFit:
    """A gamma fit (contract §10)."""

    offset: float
    mean: float
    scale: float
    method_used: str
    def __new__(cls, offset: float, mean: float, scale: float, method_used: str) -> "GammaFit": ...

class StreamingResult:
    """A streaming Gaussian fit with its error bounds (contract §9)."""

    center: float
    scale: float
    scale_used: str
    #: Intervals holding the exact μ and σ (None for M-estimates).
    center_interval: Optional[Tuple[float, float]]
    scale_interval: Optional[Tuple[float, float]]
    #: Bound on |p̂ − p| over all scores.
    probability_error: Optional[float]
    rank_error: float
    m_estimates: List[MEstimate]
    n: int
    def __new__(
        cls, center: float, scale: float, scale_used: str,
        center_interval: Optional[Tuple[float, float]],
        scale_interval: Optional[Tuple[float, float]], probability_error: Optional[float],
        rank_error: float, m_estimates: List[MEstimate], n: int,
    ) -> "StreamingResult": ...

class SketchInfo:
    """A KLL sketch's parameters and state (DataSketches' names)."""

    k: int
    #: The smallest k merged in.
    min_k: int
    n: int
    num_retained: int
    is_estimation_mode: bool
    #: Items are doubles (else floats).
    is_double: bool
    seed: int
    #: The smallest and largest item seen.
    extremes: Optional[Tuple[float, float]]
    def __new__(
        cls, k: int, min_k: int, n: int, num_retained: int, is_estimation_mode: bool,
        is_double: bool, seed: int, extremes: Optional[Tuple[float, float]],
    ) -> "SketchInfo": ...

class ColumnFit:
    """The exact distributed fit of one column (a linear fit's min and max
    in ``center`` and ``scale``) and the §5 fallback steps it took."""

    center: float
    scale: float
    scale_used: str
    #: Iterations and convergence of the last M-estimate, if one ran.
    n_iter: Optional[int]
    converged: Optional[bool]
    #: The raw minimum of a "sqrt" pretransform.
    pre_min: Optional[float]
    #: Each step of the §5 fallback chain taken: (zero scale, next).
    fallbacks: List[Tuple[str, str]]
    def __new__(
        cls, center: float, scale: float, scale_used: str, n_iter: Optional[int],
        converged: Optional[bool], pre_min: Optional[float], fallbacks: List[Tuple[str, str]],
    ) -> "ColumnFit": ...

class Strata:
    """A measure overall and within each class (NaN for an absent class)."""

    all: float
    outlier: float
    inlier: float
    def __new__(cls, all: float, outlier: float, inlier: float) -> "Strata": ...

class Evaluation:
    """The measures of contract §6 of one set of probabilities."""

    brier: Strata
    sharpness: Strata
    refinement: Strata
    calibration: Strata
    n_outliers: int
    n: int
    def __new__(
        cls, brier: Strata, sharpness: Strata, refinement: Strata, calibration: Strata,
        n_outliers: int, n: int,
    ) -> "Evaluation": ...

class ReliabilityCurve:
    """A reliability diagram's bins."""

    edges: List[float]
    mean_probability: List[float]
    outlier_fraction: List[float]
    count: List[int]
    def __new__(
        cls, edges: List[float], mean_probability: List[float], outlier_fraction: List[float],
        count: List[int],
    ) -> "ReliabilityCurve": ...

# -- what a Gaussian fit is asked to do ----------------------------------------------

class GaussianSpec:
    """A checked Gaussian fit specification (contract §1–§5, §10's options)."""

    def __new__(
        cls, *, center: _Spec, scale: _Spec, trim: float = ..., ddof: int = ...,
        maxiter: int = ..., tol: float = ..., nan_policy: str = ..., negate: bool = ...,
        pretransform: Optional[str] = ..., fixed_center: Optional[float] = ...,
    ) -> "GaussianSpec": ...
    def with_trim(self, trim: float) -> "GaussianSpec":
        """This spec with another trim fraction (``trim="auto"`` chooses one per
        column)."""
    @property
    def fallbacks(self) -> List[str]:
        """The scales tried after the chosen one while σ is 0 (contract §5)."""
    @property
    def needs_sketch(self) -> bool:
        """Whether a streaming fit keeps a sketch (order statistics)."""
    @property
    def reads_moments(self) -> bool:
        """Whether a streaming fit reads the exact moments (mean, trimmed
        mean, SD) other than by a §5 fallback."""

# -- estimators (contract §1–§3) -----------------------------------------------------

def mean(x: _Scores, *, nan_policy: str, threads: int = ...) -> float: ...
def std(x: _Scores, *, ddof: int, nan_policy: str, threads: int = ...) -> float: ...
def check_scores(x: _Scores, *, nan_policy: str) -> None:
    """Contract §5 for a batch of fitting scores (the core's messages)."""
def median(x: _Scores, *, nan_policy: str, threads: int = ...) -> float: ...
def quantile(x: _Scores, *, q: List[float], nan_policy: str, threads: int = ...) -> List[float]: ...
def upper_trimmed_mean(x: _Scores, *, alpha: float, nan_policy: str, threads: int = ...) -> float: ...
def nmad(x: _Scores, *, nan_policy: str, threads: int = ...) -> float: ...
def niqr(x: _Scores, *, nan_policy: str, threads: int = ...) -> float: ...
def trimmed_std(
    x: _Scores, *, center: float, alpha: float, nan_policy: str, threads: int = ...
) -> float: ...
class _MEstimateParams(TypedDict):
    """The keyword parameters of ``m_estimate`` (the core's ``MParams``)."""

    norm: str
    c: float
    tuning: Optional[float]
    maxiter: int
    tol: float

def m_estimate(
    x: _Scores, *, nan_policy: str, threads: int = ..., direct: bool = ...,
    **params: Unpack[_MEstimateParams],
) -> MEstimate:
    """Huber's proposal 2 with the core's ``MParams`` given as keywords."""

# -- fitting (contract §4–§5, §10) ---------------------------------------------------

def fit_gaussian(x: _Scores, *, spec: GaussianSpec, threads: int = ...) -> GaussianFit: ...
def fit_linear(x: _Scores, *, nan_policy: str, negate: bool, threads: int = ...) -> LinearFit: ...
def fit_transform_gaussian(
    x: object, *, spec: GaussianSpec, threads: int = ...
) -> Optional[Tuple[Optional[GaussianFit], _Scores, FittedMap]]:
    """(fit, probabilities, map) of a C-contiguous 1-D float ndarray, else None.
    The fit is None where it is plain — no M-estimation, σ > 0 from the chosen
    named scale (no §5 fallback): μ and σ are then the map's ``column(0)``."""

def fit_transform_linear(
    x: object, *, nan_policy: str, negate: bool, threads: int = ...
) -> Optional[Tuple[None, _Scores, FittedMap]]:
    """(None, probabilities, map) of a C-contiguous 1-D float ndarray, else None:
    a linear fit is plain, its min and max the map's ``column(0)``."""
def fit_rank(
    x: _Scores, *, nan_policy: str, negate: bool, threads: int = ...
) -> npt.NDArray[np.float64]:
    """The sorted, oriented, NaN-free fitted scores (float64)."""
def fit_transform_rank(
    x: object, out: _Scores, *, log: bool, nan_policy: str, negate: bool
) -> npt.NDArray[np.float64]:
    """Rank scaling fitted on C-contiguous 1-D ``x`` and applied to it, into ``out``
    (same dtype and length); returns the sorted fitted scores."""
def fit_top_k(
    x: _Scores, *, k: int, nan_policy: str, negate: bool, threads: int = ...
) -> TopKFit: ...
def fit_sigmoid(
    x: _Scores, *, maxiter: int, nan_policy: str, negate: bool, threads: int = ...
) -> SigmoidFit: ...
def fit_mixture(
    x: _Scores, *, maxiter: int, tol: float, nan_policy: str, negate: bool, threads: int = ...
) -> MixtureFit: ...
def fit_gamma(
    x: _Scores, *, method: str, offset: Optional[float], nan_policy: str, negate: bool,
    threads: int = ...,
) -> GammaFit: ...

# -- the fitted map of every family (contract §4, §10) -------------------------------

class FittedMap:
    """A scaler's fitted map, checked by the core; pickles by its state."""

    def __new__(cls, state: Dict[str, Any]) -> "FittedMap":
        """A map from its ``state()``, checked by the core."""
    @staticmethod
    def one_column(kind: str, negate: bool, params: List[float]) -> "FittedMap":
        """The map of a 1-D fit without pretransform from one value of each
        named parameter (center, scale; min, max), checked."""
    def state(self) -> Dict[str, Any]:
        """``kind``, ``negate``, ``two_d``, ``pretransform``, ``params`` (each
        named parameter's values, one per column) and ``sorted``."""

    @property
    def kind(self) -> str: ...
    @property
    def n_features(self) -> Optional[int]: ...
    def sorted(self, j: int) -> npt.NDArray[np.float64]:
        """A read-only view of column ``j``'s sorted fitted scores (rank maps)."""
    def column(self, j: int) -> List[float]:
        """Column ``j``'s value of each named parameter, in the family's order
        (``state()["params"]``'s)."""

    def transform(
        self, x: object, out: Optional[_Scores] = None, *, threads: int = ...
    ) -> Optional[_Scores]:
        """The probabilities of a C-contiguous float ndarray of a shape this
        map maps (into ``out`` if given), else None."""

# -- evaluation (contract §6) --------------------------------------------------------

def evaluate(
    p: _Scores, y: _Labels, *, bins: str, n_bins: List[int], threads: int = ...
) -> Evaluation: ...
def brier_and_sharpness(p: _Scores, y: _Labels, *, threads: int = ...) -> Tuple[Strata, Strata]: ...
def refinement_and_calibration(
    p: _Scores, y: _Labels, *, bins: str, n_bins: List[int], threads: int = ...
) -> Tuple[Strata, Strata]: ...
def bin_edges(p: _Scores, *, k: int, bins: str, threads: int = ...) -> List[float]: ...
def reliability_curve(
    p: _Scores, y: _Labels, *, bins: str, k: int, threads: int = ...
) -> ReliabilityCurve: ...

# -- streaming (contract §9) ---------------------------------------------------------

class KllSketch:
    """DataSketches-compatible KLL sketch of doubles (``double=True``) or floats."""

    def __new__(cls, *, k: int, double: bool, seed: int) -> "KllSketch": ...
    def update(self, x: _Scores) -> None: ...
    def merge(self, other: "KllSketch") -> None: ...
    def serialize(self) -> bytes: ...
    @staticmethod
    def deserialize(data: bytes, *, double: bool, seed: int) -> "KllSketch": ...
    def quantiles(self, ranks: List[float], *, inclusive: bool) -> List[float]: ...
    def ranks(self, items: List[float], *, inclusive: bool) -> List[float]: ...
    def weighted_items(self) -> Tuple[npt.NDArray[np.float64], npt.NDArray[np.uint64]]: ...
    def normalized_rank_error(self, *, pmf: bool) -> float: ...
    def info(self) -> SketchInfo: ...
    def copy(self) -> "KllSketch": ...

def kll_normalized_rank_error(k: int, *, pmf: bool) -> float:
    """DataSketches' ε(k)."""

class StreamingState:
    """Exact moments plus, when the estimators need order statistics, a
    sketch, for each of ``columns`` score columns; with ``linear``, the
    count and extremes of each column."""

    def __new__(
        cls, *, spec: GaussianSpec, k: int, seed: int, columns: int, linear: bool = ...
    ) -> "StreamingState": ...
    def update(self, x: _Scores) -> None:
        """Adds a 1-D batch (one column) or a C-contiguous (n, columns) batch,
        whole or not at all."""
    def update_and_fit(self, x: _Scores) -> List[StreamingResult]: ...
    def merge(self, other: "StreamingState") -> None: ...
    def merge_and_fit(self, other: "StreamingState") -> List[StreamingResult]: ...
    def n(self) -> List[int]: ...
    def results(self) -> List[StreamingResult]: ...
    def stream_fit(self, last: Optional[int]) -> List[Optional[StreamingResult]]:
        """The core's ``stream_fit``."""
    def parts(self) -> List[Dict[str, Any]]: ...
    @staticmethod
    def from_parts(
        *, spec: GaussianSpec, parts: List[Dict[str, Any]], linear: bool = ...
    ) -> "StreamingState":
        """A state from ``parts``, checked by the core."""

class WindowState:
    """The most recent ``size`` scores of each of ``columns`` columns."""

    def __new__(cls, *, size: int, refit_every: int, columns: int) -> "WindowState": ...
    def update(self, x: _Scores, *, nan_policy: str) -> None:
        """Adds a 1-D batch (one column) or a C-contiguous (n, columns) batch,
        whole or not at all."""
    def update_and_fit_gaussian(
        self, x: _Scores, *, nan_policy: str, spec: GaussianSpec, refit: bool
    ) -> Optional[List[GaussianFit]]:
        """``update``, then, when ``refit`` or when due, the Gaussian fit of each
        column's window (None when not refitted), as one step."""
    def due(self) -> bool: ...
    def n(self) -> List[int]:
        """Scores seen per column (the window keeps the newest ``size``)."""
    def fit_gaussian(self, *, spec: GaussianSpec) -> List[GaussianFit]: ...
    def fit_linear(self, *, negate: bool) -> List[LinearFit]: ...
    def parts(self) -> List[Dict[str, Any]]: ...
    @staticmethod
    def from_parts(*, size: int, refit_every: int, parts: List[Dict[str, Any]]) -> "WindowState":
        """A state from ``parts``, checked by the core."""

# -- the distributed fit (contract §9) ----------------------------------------------

class Pass:
    """A pass of a column's plan over every partition (pickles as bytes)."""

    def __new__(cls, data: bytes) -> "Pass": ...
    def map(self, x: _Scores) -> "Partial":
        """The pass's partial of one piece of the column."""
    @property
    def kind(self) -> str:
        """What the pass computes, in a word ("census", "bracket", …)."""
    @property
    def native_census(self) -> Optional[Tuple[bool, int]]:
        """``(negate, sketch_k)`` of a census an engine may run natively (no
        moments, no pretransform); None for any other pass."""

class _CensusParams(TypedDict):
    """The counts, extremes and sketch bytes of a census an engine ran."""

    len: int
    count: int
    nan_count: int
    inf_count: int
    min: float
    max: float
    sketch: Optional[bytes]

class Partial:
    """A pass's partial result of a piece of a column (pickles as bytes)."""

    def __new__(cls, data: bytes) -> "Partial": ...
    def combine(self, other: "Partial") -> "Partial":
        """The partial of this piece followed by ``other``'s."""
    def to_bytes(self) -> bytes:
        """The partial as bytes, for the trip from a worker."""
    @staticmethod
    def census(**params: Unpack[_CensusParams]) -> "Partial":
        """The partial of a census an engine ran natively: counts without
        first indexes, and the doubles sketch's bytes."""

class _PlanOptions(TypedDict):
    """How a column's distributed fit runs (the core's ``PlanOptions``)."""

    linear: bool
    method: str
    collect_max: int
    n_hint: Optional[int]
    k: int
    native_census: bool

class ColumnPlan:
    """The plan of one column's distributed fit: ``next_pass`` until None,
    each pass run and its combined partial fed back; then ``result``."""

    def __new__(cls, spec: GaussianSpec, **params: Unpack[_PlanOptions]) -> "ColumnPlan": ...
    def next_pass(self) -> Optional[Pass]:
        """The next pass to run, or None once the column is fitted."""
    def feed(self, partial: Partial) -> None:
        """Feeds the combined partial of the pass ``next_pass`` returned."""
    def result(self) -> Union[ColumnFit, StreamingResult]:
        """The fit, once ``next_pass`` returned None: a ``ColumnFit`` (exact) or a
        ``StreamingResult`` (sketch)."""

# -- conformal p-values and FDR selection (contract §11) --------------------------

class SelectionFit:
    """A step-up selection (contract §11): how many p-values it selected,
    its threshold t(k*) (0 when none) and Storey's π̂₀ (1 otherwise)."""

    def __new__(cls, count: int, threshold: float, null_proportion: float) -> "SelectionFit": ...
    @property
    def count(self) -> int: ...
    @property
    def threshold(self) -> float: ...
    @property
    def null_proportion(self) -> float: ...

class _ConformalParams(TypedDict):
    """The options of a p-value map (the core's ``ConformalSpec``)."""

    tie_break: str
    seed: int
    conditional: Optional[str]
    delta: float
    simes_k: Optional[int]
    mc_correction: Optional[float]

class ConformalSpec:
    def __new__(cls, **params: Unpack[_ConformalParams]) -> "ConformalSpec": ...

def limits() -> List[Tuple[str, str, int, int]]:
    """The core's bounds of every size and count parameter: (key, name,
    smallest, largest)."""

class ConformalSketch:
    def __new__(cls, *, k: int, seed: int) -> "ConformalSketch": ...
    def update(self, x: _Scores, *, nan_policy: str, negate: bool) -> int:
        """Adds a batch under the §5 rules (±inf, or NaN under "raise", refuse
        the whole batch; NaN are otherwise skipped); ``negate`` orients the
        scores. Returns how many were added."""
    def merge(self, other: "ConformalSketch") -> None: ...
    def serialize(self) -> bytes: ...
    @staticmethod
    def deserialize(data: bytes, *, seed: int) -> "ConformalSketch": ...
    def info(self) -> ConformalSketchInfo: ...

class ConformalSketchInfo:
    """A calibration sketch's scores seen, its k and ε (0 while it is exact)."""

    n: int
    k: int
    rank_error: float
    def __new__(cls, n: int, k: int, rank_error: float) -> "ConformalSketchInfo": ...

class WeightedCalibration:
    def __new__(
        cls, scores: npt.NDArray[np.float64], weights: npt.NDArray[np.float64], *, nan_policy: str,
        negate: bool,
    ) -> "WeightedCalibration": ...
    @property
    def sizes(self) -> Tuple[int, float]:
        """The number of calibration scores and their total weight."""
    def pvalues(
        self, scores: npt.NDArray[np.float64], weights: npt.NDArray[np.float64],
        out: npt.NDArray[np.float64], *, tie_break: str, seed: int, complement: bool, threads: int = 0,
    ) -> None:
        """The p-values (or ``1 − p``) of ``scores`` with test ``weights`` into ``out``."""

class IntegrativeCalibration:
    def __new__(
        cls, a: npt.NDArray[np.float64], b: npt.NDArray[np.float64], outliers: npt.NDArray[np.float64],
        *, nan_policy: str, negate: bool,
    ) -> "IntegrativeCalibration": ...
    @property
    def sizes(self) -> Tuple[int, int]:
        """n inlier and k outlier calibration points."""
    def pvalues(
        self, a: npt.NDArray[np.float64], b: npt.NDArray[np.float64], out: npt.NDArray[np.float64],
        *, complement: bool,
    ) -> None:
        """The p-values (or ``1 − p``) of test pairs (``a``, ``b``) into ``out``."""

class ConformalCalibration:
    def __new__(
        cls, sorted: npt.NDArray[np.float64], *, spec: ConformalSpec, negate: bool
    ) -> "ConformalCalibration":
        """From sorted (ascending, finite) oriented calibration scores."""
    @staticmethod
    def from_sketch(
        sketch: ConformalSketch, *, spec: ConformalSpec, negate: bool
    ) -> "ConformalCalibration":
        """From a sketch: its weighted sample, with the slack ⌈ε·n⌉ added to
        every count of calibration scores ≥ s (0 while the sketch is exact)."""
    @property
    def n(self) -> int:
        """The number of calibration scores n."""
    def map(
        self, x: Any, out: Any = None, *, complement: bool, threads: int = 0
    ) -> Optional[Any]:
        """The p-values (or ``1 − p`` with ``complement``) of the C-contiguous,
        aligned float64/float32 array ``x`` (any shape), into ``out`` if given
        (same dtype and shape) or a new array; None for any other ``x``."""

class _TailParams(TypedDict):
    """A tail's family and thresholds (the core's ``TailSpec``)."""

    kind: str
    quantile: float
    delta: float

class TailSummary:
    """A conformal tail fit (contract §11); ``params`` are GPD (ξ, σ),
    Gaussian (center, scale) or gamma (k, θ, offset), NaN-padded."""

    tail: str
    accepted: bool
    reason: str
    threshold: float
    threshold_pvalue: float
    exceedances: int
    statistic: float
    bound: float
    params: List[float]
    def __new__(
        cls, tail: str, accepted: bool, reason: str, threshold: float, threshold_pvalue: float,
        exceedances: int, statistic: float, bound: float, params: List[float],
    ) -> "TailSummary": ...

class ConformalTail:
    def __new__(
        cls, sorted: npt.NDArray[np.float64], **params: Unpack[_TailParams]
    ) -> "ConformalTail": ...
    def summary(self) -> TailSummary: ...
    def map(
        self,
        calibration: ConformalCalibration,
        x: Any,
        out: Any = None,
        *,
        complement: bool,
        threads: int = 0,
    ) -> Optional[Any]:
        """The tailed p-values (or ``1 − p``) of ``x`` against ``calibration``, as
        ``ConformalCalibration.map``."""

def combine_pvalues(
    p: npt.NDArray[np.float64], k: int, *, rule: str, weights: Optional[List[float]] = None
) -> npt.NDArray[np.float64]:
    """One p-value per row of the flat row-major ``p`` (k columns):
    ``rule`` "cauchy" (optional ``weights``) or "harmonic"."""
def ensemble_scores(
    calibration: npt.NDArray[np.float64],
    test: npt.NDArray[np.float64],
    k: int,
    *,
    negate: bool,
    combine: str,
) -> Tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The ensemble scores of calibration and test rows (flat row-major, k
    columns each): ``(calibration_scores, test_scores)``."""
def conformal_mc_correction(
    n: int, *, delta: float, simulations: int, seed: int, threads: int = 0
) -> float:
    """The Monte Carlo adjustment's correction γ for n calibration scores."""
def conformal_select(
    p: npt.NDArray[np.float64],
    out: npt.NDArray[np.bool_],
    *,
    alpha: float,
    method: str,
    lam: float,
    threads: int = 0,
) -> SelectionFit:
    """Step-up selection of the float64 p-values ``p`` at level ``alpha``, the
    mask into ``out`` (bool, same length)."""

# -- score lines (outprob stream, contract §9 "Command line") -------------------------

class LineReader:
    """One score per line from text fed in pieces, handed out in batches."""

    def __new__(cls) -> "LineReader": ...
    def feed(self, data: bytes) -> None:
        """Adds text and parses every line it completes."""
    def finish(self) -> None:
        """Ends the input: an unfinished last line becomes a line."""
    def pending(self) -> int:
        """Lines parsed and not taken yet."""
    def take(
        self, n: int
    ) -> Tuple[int, npt.NDArray[np.float64], List[Tuple[int, str]]]:
        """(first line number, one score per line, [(line, message)] of bad lines)."""

class TextStream:
    """``outprob stream``: lines of scores (or rows with an identifier) in,
    lines of probabilities and the online columns out (no arrays). The
    probabilities are those of a streaming fit by ``spec`` (sketch size
    ``k``, coin ``seed``; linear scaling if ``linear``), of the exact fit of
    the newest ``window`` scores by ``spec``, refitted every ``refit_every``
    scores, or of the stored ``map`` (one score column; nothing fitted).
    ``monitor``: a martingale's parameters (``outprob.Martingale.params``)."""

    def __new__(
        cls, *, spec: Optional[GaussianSpec] = None, k: int = 0, seed: int = 0,
        linear: bool = False, window: Optional[int] = None, refit_every: int = 0,
        map: Optional[FittedMap] = None, rows: bool = False, column: Optional[int] = None,
        delimiter: int = 44, pvalues: bool = False, alert: Optional[str] = None,
        alpha: float = 0.05, monitor: Optional[_MartingaleParams] = None, pvalue_seed: int = 0,
    ) -> "TextStream": ...
    def feed(self, data: bytes) -> None:
        """Adds text and parses every line it completes."""
    def finish(self) -> None:
        """Ends the input: an unfinished last line becomes a line."""
    def ready(self, n: int) -> bool:
        """Whether ``n`` lines can be taken, or the input ended."""
    def step(
        self, batch: int, *, on_error: str
    ) -> Tuple[bytes, int, List[Tuple[int, str]], Optional[str], Optional[StreamingResult]]:
        """(probabilities as text, lines taken (0 at the end), [(line, message)]
        of bad lines, the message of the line the batch stopped at, the fit
        made for the batch)."""

# -- online decisions on a stream (contract §12) ---------------------------------------

_F64 = npt.NDArray[np.float64]
_Bools = npt.NDArray[np.bool_]

class _OnlineFdrParams(TypedDict):
    """An online FDR rule's parameters (as its stored ``settings``)."""

    method: str
    alpha: float
    w0: Optional[float]
    lam: Optional[float]
    tau: Optional[float]
    gamma: Optional[List[float]]

class OnlineFdrState:
    """An online FDR rule (LOND, LORD++, SAFFRON, ADDIS) and its state."""

    def __new__(cls, **params: Unpack[_OnlineFdrParams]) -> "OnlineFdrState": ...
    def decide(self, p: _F64) -> _Bools: ...
    def decide_with_levels(self, p: _F64) -> Tuple[_Bools, _F64]: ...
    def next_level(self) -> float: ...
    def settings(self) -> Dict[str, Any]: ...
    def state(self) -> Dict[str, Any]:
        """The stored state as the core's record."""
    def restore(self, state: Dict[str, Any]) -> None:
        """Replaces the state by a stored one, checked by the core against
        itself and the parameters; unchanged on error."""

class _MartingaleParams(TypedDict):
    """An exchangeability martingale's parameters (the core's ``Spec``)."""

    kind: str
    jump: float
    epsilon: float
    n_grid: int
    min_epsilon: float
    threshold: Optional[float]
    statistic: str
    on_alarm: str

class MartingaleState:
    """An exchangeability martingale with CUSUM and Shiryaev–Roberts statistics."""

    def __new__(cls, **params: Unpack[_MartingaleParams]) -> "MartingaleState": ...
    def update(self, p: _F64) -> Tuple[_F64, _F64, _F64, _Bools]:
        """(ln M, ln C, ln R, alarm) after each p-value."""
    def reset(self) -> None: ...
    def state(self) -> Dict[str, Any]:
        """The stored state as the core's record."""
    def restore(self, state: Dict[str, Any]) -> None:
        """Replaces the state by a stored one, checked by the core against
        itself and the parameters; unchanged on error."""

class OnlinePvaluesState:
    """Online smoothed conformal p-values: every score seen, counted."""

    def __new__(cls, *, seed: int, negate: bool, smoothed: bool) -> "OnlinePvaluesState": ...
    def pvalues(self, scores: _F64, uniforms: Optional[_F64] = None) -> _F64:
        """``uniforms`` replace the tie-breaking draws."""
    def update(self, scores: _F64) -> None: ...
    def n(self) -> int: ...
    def state(self) -> Dict[str, Any]:
        """The stored state as the core's record."""
    def restore(self, state: Dict[str, Any]) -> None:
        """Replaces the state by a stored one, checked by the core against
        itself and the parameters; unchanged on error."""

class _DecayedParams(TypedDict):
    """A decayed fit's parameters."""

    half_life: float
    epochs_per_half_life: int
    horizon: int
    k: int
    seed: int

class DecayedMoments:
    """Decayed moments (contract §12 "Decayed fit"): scores seen, the total
    weight W, the mean and the variance."""

    n: int
    weight: float
    mean: float
    variance: float
    def __new__(cls, n: int, weight: float, mean: float, variance: float) -> "DecayedMoments": ...

class DecayedFitState:
    """Exponentially decayed moments and order statistics (§12 "Decayed fit")."""

    def __new__(cls, **params: Unpack[_DecayedParams]) -> "DecayedFitState": ...
    def update(self, scores: _F64) -> None:
        """Adds scores (NaN skipped; a batch with ±inf refused whole)."""
    def moments(self) -> Optional[DecayedMoments]:
        """None before the first score."""
    def quantiles(self, qs: List[float]) -> Optional[List[float]]: ...
    def median_mad(self) -> Optional[Tuple[float, float]]: ...
    def rank_error(self) -> float: ...
    def state(self) -> Dict[str, Any]:
        """The stored state as the core's record."""
    def restore(self, state: Dict[str, Any]) -> None:
        """Replaces the state by a stored one, checked by the core against
        itself and the parameters; unchanged on error."""

# -- refits after a drift (contract §12 "Refits after a drift") -----------------------

class DriftEvent:
    """An alarm, a refit or a failed refit (contract §12): its kind, the
    score after which it happened, the monitor's log statistic (NaN but
    at alarms), the scores refitted, a decayed refit's (center, scale) and
    why a refit failed."""

    kind: str
    index: int
    log_statistic: float
    n_fit: int
    fitted: Optional[Tuple[float, float]]
    message: str
    def __new__(
        cls, kind: str, index: int, log_statistic: float, n_fit: int,
        fitted: Optional[Tuple[float, float]], message: str,
    ) -> "DriftEvent": ...

class DriftInfo:
    """A refit policy's parameters and the scores it has seen (contract §12
    "Refits after a drift")."""

    refit: str
    window: int
    delay: int
    n: int
    def __new__(cls, refit: str, window: int, delay: int, n: int) -> "DriftInfo": ...

class DriftPolicyState:
    """When to refit after a drift, and the events (the core's rules)."""

    def __new__(
        cls, refit: str, *, window: int, half_life: float, delay: Optional[int]
    ) -> "DriftPolicyState": ...
    def info(self) -> DriftInfo: ...
    def check_scores(self, scores: _F64) -> None: ...
    def span(self, remaining: int) -> int: ...
    def advance(self, scores: _F64, alarm: Optional[float] = None) -> bool: ...
    def refitted(
        self, n_fit: int, fitted: Optional[Tuple[float, float]] = None
    ) -> DriftEvent: ...
    def refit_failed(self, message: str) -> DriftEvent: ...
    def recent(self) -> _F64: ...
    def events(self, start: int) -> List[DriftEvent]:
        """The events from position ``start`` on."""
    def state(self) -> Dict[str, Any]:
        """The stored state as the core's record: scores seen, the refit
        due, the window's scores, the events."""
    def restore(self, state: Dict[str, Any]) -> None:
        """Replaces the state by a stored one, checked by the core against
        itself and the parameters; unchanged on error."""

def drift_check_decayed(center: str, scale: str, pretransform: bool, fixed_center: bool) -> None:
    """Whether a Gaussian scaler of these estimators can be refitted on a
    decayed fit (an error naming what it needs otherwise)."""
def drift_decayed_gaussian(
    fit: DecayedFitState, center: str, scale: str, fallbacks: List[str]
) -> Tuple[float, float, str]:
    """(center, scale, the scale used) of a decayed Gaussian refit."""

# -- rows with an identifier (outprob stream, contract §12 "outprob stream") ----------

def csv_layout(header: bytes, column: str) -> Tuple[int, int]:
    """The field index and delimiter of a CSV header's column ``column``."""
