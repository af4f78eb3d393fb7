"""The benchmarked operations, as a table: outprob against a baseline.

Shared by ``compare.py`` (the comparison table) and the pytest-benchmark
suite (``test_bench_*.py``). An :class:`Operation` names outprob's call and a
baseline's call on a :class:`Case` (synthetic scores of one size and dtype),
how to check that both compute the same thing, and the speed-up it should
reach. A :class:`MemoryOp` is a call whose peak memory is measured.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np

import baselines
import outprob
from outprob import metrics, stats

#: Fraction of planted outliers in the synthetic scores.
OUTLIER_FRACTION = 0.03


# -- data ---------------------------------------------------------------------------------


def long_tailed_scores(n: int, dtype: Any = np.float64, seed: int = 0) -> Tuple[np.ndarray, np.ndarray]:
    """Synthetic outlier scores and labels: a lognormal bulk (σ = 1, median 1,
    itself long-tailed) and ``OUTLIER_FRACTION`` planted outliers far above
    it (10 + lognormal(2, 1)). Returns (scores, labels) with labels True for
    the planted outliers. float32 scores are the float64 ones rounded."""
    rng = np.random.default_rng(seed)
    x = rng.lognormal(0.0, 1.0, n)
    y = rng.random(n) < OUTLIER_FRACTION
    x[y] = 10.0 + rng.lognormal(2.0, 1.0, int(y.sum()))
    return x.astype(dtype, copy=False), y


@dataclass
class Case:
    """One input of the benchmark: scores ``x`` of size ``n`` and ``dtype``,
    labels ``y``, and what the operations need besides (an output buffer,
    a fitted scaler, probabilities), made once, outside the timings."""

    n: int
    dtype: np.dtype
    x: np.ndarray
    y: np.ndarray
    _scalers: Dict[int, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def make(cls, n: int, dtype: Any) -> "Case":
        x, y = long_tailed_scores(n, dtype)
        return cls(n, np.dtype(dtype), x, y)

    @cached_property
    def out(self) -> np.ndarray:
        """Output buffer of ``transform(x, out=)``, touched once so that
        timings do not include first-touch page faults."""
        return np.zeros_like(self.x)

    @cached_property
    def scratch(self) -> np.ndarray:
        """Destination of the ``np.copyto`` floor."""
        return np.zeros_like(self.x)

    @cached_property
    def fitted(self) -> outprob.GaussianScaler:
        """The fitted (μ, σ) of the transform benchmarks: ``mean_nmad``."""
        return outprob.scaler("mean_nmad").fit(self.x)

    @property
    def mu(self) -> float:
        return self.fitted.center_

    @property
    def sigma(self) -> float:
        return self.fitted.scale_

    def scaler(self, threads: int) -> outprob.GaussianScaler:
        """The fitted scaler set to use ``threads`` threads."""
        if threads not in self._scalers:
            self._scalers[threads] = copy.deepcopy(self.fitted).set_params(threads=threads)
        return self._scalers[threads]

    @cached_property
    def p(self) -> np.ndarray:
        """Outlier probabilities (``mean_nmad``) for the evaluation measures."""
        return self.fitted.transform(self.x)


# -- agreement checks ---------------------------------------------------------------------

#: Check of (ours, baseline, case): None if they agree, else what differs.
Check = Callable[[Any, Any, Case], Optional[str]]


def _tolerance(case: Case, f64: float, f32: float) -> float:
    return f32 if case.dtype == np.float32 else f64


def close(rtol64: float = 1e-9, rtol32: float = 1e-5, atol64: float = 0.0, atol32: float = 0.0) -> Check:
    """Element-wise ``np.allclose`` with dtype-dependent tolerances."""

    def check(ours: Any, base: Any, case: Case) -> Optional[str]:
        a = np.asarray(ours, dtype=np.float64)
        b = np.asarray(base, dtype=np.float64)
        if a.shape != b.shape:
            return f"shapes differ: {a.shape} vs {b.shape}"
        rtol, atol = _tolerance(case, rtol64, rtol32), _tolerance(case, atol64, atol32)
        if np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
            return None
        diff = np.abs(a - b).reshape(-1)
        i = int(np.nanargmax(diff))
        return (
            f"max |ours - baseline| = {diff[i]:.3g} (rtol {rtol:g}, atol {atol:g}) "
            f"at element {i}: ours {float(a.reshape(-1)[i])!r}, baseline {float(b.reshape(-1)[i])!r}"
        )

    return check


def m_estimate_check(ours: stats.MEstimate, base: baselines.Fit, case: Case) -> Optional[str]:
    """Ours converged and agrees with statsmodels' (location, scale) to 1e-6
    relative (statsmodels raises when it does not converge)."""
    if not ours.converged:
        return f"outprob did not converge within maxiter={baselines.MAXITER} ({ours.n_iter} iterations)"
    return close(1e-6, 1e-6)((ours.location, ours.scale), base, case)


def evaluation_check(ours: metrics.Evaluation, base: Dict[str, baselines.Strata], case: Case) -> Optional[str]:
    """Every measure, overall and per class, to 1e-9 relative."""
    problems = []
    for measure, expected in base.items():
        got = getattr(ours, measure)
        problem = close(1e-9, 1e-9)((got.overall, got.outliers, got.inliers), expected, case)
        if problem:
            problems.append(f"{measure}: {problem}")
    return "; ".join(problems) or None


def median_rank_check(ours: float, base: float, case: Case) -> Optional[str]:
    """The single-rank partition gives the upper middle order statistic
    s_(N//2+1), not the median of even N: check it against outprob's own
    selection of that rank instead."""
    k = case.n // 2
    rank = stats.quantile(case.x, k / (case.n - 1), threads=1)
    return close(1e-12, 1e-6)(rank, base, case)


#: Tolerances: estimators to 1e-9 (float64) / 1e-5 (float32) relative;
#: probabilities to 1e-7 / 1e-5 absolute (the fitted μ, σ of the two sides
#: differ in the last digits, float32 arithmetic in the 6th).
VALUES = close()
PROBABILITIES = close(0.0, 0.0, 1e-7, 1e-5)


# -- operations ---------------------------------------------------------------------------

#: outprob's call: (case, threads) -> result.
Ours = Callable[[Case, int], Any]
#: The baseline's call: case -> result.
Base = Callable[[Case], Any]


@dataclass(frozen=True)
class Target:
    """Baseline time / our time must reach ``ratio`` at N = ``n``, ``dtype``."""

    ratio: float
    n: int = 10**7
    dtype: str = "float64"
    label: str = ""

    def text(self) -> str:
        return self.label or f">={self.ratio:g}x"


@dataclass(frozen=True)
class Operation:
    """One row kind of the comparison table."""

    name: str
    ours: Optional[Ours]
    baseline_name: str
    baseline: Base
    check: Optional[Check] = None
    targets: Tuple[Target, ...] = ()
    #: Thread-scaling target (time at 1 thread / time at 2 threads; issue #11:
    #: 1.7 at N = 1e7 unless the work is memory-bound, which the results explain).
    scaling_target: Optional[float] = None
    #: (reads of the scores, writes of an array of their size) the operation
    #: makes, for the memory cap of the thread table (benches/memory_floor.py):
    #: a Sample's summary, a selection's bracketing read, a sum's read, the
    #: read of a bucketed M-fit; a sample's random reads and the re-reads of
    #: a fit's fetches are left out.
    streams: Optional[Tuple[int, int]] = None
    #: Runs at most at this N (the reference metrics are slow beyond).
    max_n: Optional[int] = None
    #: The baseline takes seconds already at N = 1e6: fewer timed runs.
    slow_baseline: bool = False
    #: pytest-benchmark file: "stats", "scaling", "metrics" or "floor".
    kind: str = "stats"
    #: Whether float32 scores must give a float32 result (contract §5); not
    #: for results that do not map the scores themselves.
    keeps_dtype: bool = True

    def target(self, n: int, dtype: str) -> Optional[Target]:
        return next((t for t in self.targets if t.n == n and t.dtype == dtype), None)

    def size(self, n: int) -> int:
        """The N this operation runs at when N = n is asked for."""
        return n if self.max_n is None else min(n, self.max_n)


def _transform(case: Case, threads: int) -> np.ndarray:
    return case.scaler(threads).transform(case.x, out=case.out)


def _m_estimate(norm: str, case: Case, threads: int) -> stats.MEstimate:
    return stats.m_estimate(case.x, norm, maxiter=baselines.MAXITER, threads=threads)


def _variant_params(name: str) -> dict:
    """Constructor parameters of the benchmarked variant: maxiter for the
    M-estimates (see ``baselines.MAXITER``)."""
    return {"maxiter": baselines.MAXITER} if name in ("huber", "tukey") else {}


def _fit_transform(name: str, case: Case, threads: int) -> np.ndarray:
    return outprob.scaler(name, threads=threads, **_variant_params(name)).fit_transform(case.x)


#: Reads of the scores by each variant's fit (rust/core/src/transformations/
#: fit.rs): the summary, then the median (shared by the nMAD and the
#: M-estimates), the nMAD's, the IQR's or the squares' read, the trimmed
#: mean's selection and sum, the M-fit's bucketed read.
VARIANT_FIT_READS = {
    "linear": 1, "mean_std": 2, "mean_nmad": 3, "mean_niqr": 2,
    "median_std": 3, "median_nmad": 3, "median_niqr": 3,
    "trimmed_mean_std": 4, "trimmed_mean_nmad": 5, "trimmed_mean_niqr": 4,
    "huber": 4, "tukey": 4,
}

#: Reads of the scores by an M-estimate: summary, median, nMAD, the bucketed read.
M_FIT_STREAMS = (VARIANT_FIT_READS["huber"], 0)


def _variant(name: str) -> Operation:
    targets = [Target(5)]
    if name == "mean_nmad":
        targets.append(Target(10, n=10**3, label=">=10x (N=1e3)"))
    return Operation(
        f"fit_transform {name}",
        partial(_fit_transform, name),
        "NumPy/SciPy" + ("/statsmodels" if name in ("huber", "tukey") else ""),
        lambda c: baselines.variant_fit_transform(name, c.x),
        PROBABILITIES,
        tuple(targets),
        scaling_target=1.7,
        slow_baseline=name in ("huber", "tukey"),
        kind="scaling",
        streams=(VARIANT_FIT_READS[name] + 1, 1),  # the fit's reads, then the map
    )


def _partial_fit(name: str, case: Case, threads: int) -> Tuple[float, float]:
    """partial_fit in 10 batches; the fitted pair."""
    s = outprob.scaler(name, threads=threads)
    for batch in np.array_split(case.x, 10):
        s.partial_fit(batch)
    a, b = type(s)._PAIR
    return getattr(s, a), getattr(s, b)


def _fitted_pair(name: str, case: Case) -> Tuple[float, float]:
    s = outprob.scaler(name).fit(case.x)
    a, b = type(s)._PAIR
    return getattr(s, a), getattr(s, b)


def _kll_ours(case: Case, threads: int) -> int:
    from outprob.streaming import KLLSketch

    s = KLLSketch(k=800, dtype="float32" if case.dtype == np.float32 else "float64")
    for batch in np.array_split(case.x, 10):
        s.update(batch)
    return s.n


def _kll_datasketches(case: Case) -> int:
    import datasketches  # outprob[stream]

    s = (datasketches.kll_floats_sketch(800) if case.dtype == np.float32
         else datasketches.kll_doubles_sketch(800))
    for batch in np.array_split(case.x, 10):
        s.update(batch)
    return int(s.n)


def _same_count(ours: Any, base: Any, case: Case) -> Optional[str]:
    return None if int(ours) == int(base) == case.n else f"n {ours} vs {base}"


#: Streaming rows (contract §9): partial_fit against the in-memory fit of
#: the same scores (goal: at most 2x the time), the KLL update against
#: DataSketches' C++ sketch (goal: at least 4x as fast; needs outprob[stream]).
STREAMING: Tuple[Operation, ...] = tuple(
    Operation(
        f"partial_fit {name} (10 batches)", partial(_partial_fit, name),
        f"outprob fit {name} (in memory)", partial(_fitted_pair, name),
        close(1e-15, 1e-6), (Target(0.5, label="<=2x fit"),), kind="streaming",
    )
    for name in ("mean_std", "linear")
) + (
    Operation(
        "KLL update k=800 (10 batches)", _kll_ours, "datasketches kll update",
        _kll_datasketches, _same_count, (Target(4),), kind="streaming",
    ),
)


OPERATIONS: Tuple[Operation, ...] = (
    Operation("floor: read", None, "x.sum()", lambda c: c.x.sum(), kind="floor"),
    Operation("floor: read+write", None, "np.copyto(out, x)", lambda c: np.copyto(c.scratch, c.x), kind="floor"),
    Operation(
        "gaussian transform (out=)", _transform,
        "np.maximum(0, erf((x-mu)/(sigma*sqrt2)))",
        lambda c: baselines.gaussian_scaling(c.x, c.mu, c.sigma),
        PROBABILITIES, (Target(10),), scaling_target=1.7, kind="scaling", streams=(1, 1),
    ),
    Operation(
        "gaussian transform (out=)", _transform, "np.copyto(out, x) [floor]",
        lambda c: np.copyto(c.scratch, c.x),
        targets=(Target(0.5, label="<=2x floor"),), kind="scaling",
    ),
    Operation(
        "median", lambda c, t: stats.median(c.x, threads=t), "np.median",
        lambda c: np.median(c.x), VALUES, (Target(4),), scaling_target=1.7,
        streams=(1, 0),  # the selection's read takes the census
    ),
    Operation(
        "median", lambda c, t: stats.median(c.x, threads=t), "np.partition (1 rank)",
        lambda c: baselines.partition_rank(c.x, c.n // 2), median_rank_check, (Target(1),),
    ),
    Operation(
        "quantile (.25, .75)", lambda c, t: stats.quantile(c.x, [0.25, 0.75], threads=t),
        "np.quantile", lambda c: baselines.quartiles(c.x), VALUES, scaling_target=1.7,
        streams=(2, 0),  # summary, one read bracketing both quartiles
    ),
    Operation(
        "mean", lambda c, t: stats.mean(c.x, threads=t), "np.mean",
        lambda c: c.x.mean(), VALUES, scaling_target=1.7,
        streams=(1, 0),  # the summary's certified sum
    ),
    Operation(
        "std", lambda c, t: stats.std(c.x, threads=t), "np.std",
        lambda c: c.x.std(), VALUES, scaling_target=1.7,
        streams=(2, 0),  # summary (the mean), squares about it
    ),
    Operation(
        "nmad", lambda c, t: stats.nmad(c.x, threads=t), "scipy median_abs_deviation",
        lambda c: baselines.nmad(c.x), VALUES, (Target(8),), scaling_target=1.7,
        streams=(3, 0),  # summary, median, deviations' median
    ),
    Operation(
        "niqr", lambda c, t: stats.niqr(c.x, threads=t), "scipy iqr(scale=normal)",
        lambda c: baselines.niqr(c.x), VALUES, (Target(5),), scaling_target=1.7,
        streams=(2, 0),  # summary, one read bracketing both quartiles
    ),
    Operation(
        "upper trimmed mean (a=0.1)",
        lambda c, t: stats.upper_trimmed_mean(c.x, baselines.ALPHA, threads=t),
        "np.partition + mean", lambda c: baselines.upper_trimmed_mean(c.x),
        VALUES, (Target(3),), scaling_target=1.7,
        streams=(3, 0),  # summary, the cut's selection, the sum below it
    ),
    Operation(
        "huber fit (m_estimate)", partial(_m_estimate, "huber"), "statsmodels Huber(HuberT)",
        lambda c: baselines.m_estimate(c.x, "huber"), m_estimate_check, (Target(50),),
        scaling_target=1.7, slow_baseline=True, streams=M_FIT_STREAMS,
    ),
    Operation(
        "tukey fit (m_estimate)", partial(_m_estimate, "tukey"), "statsmodels Huber(TukeyBiweight)",
        lambda c: baselines.m_estimate(c.x, "tukey"), m_estimate_check, (Target(100),),
        scaling_target=1.7, slow_baseline=True, streams=M_FIT_STREAMS,
    ),
    *(_variant(name) for name in outprob.VARIANTS),
    *(
        Operation(
            f"fit_transform {name}",
            partial(_fit_transform, name),
            "NumPy + scipy.special.gammainc",
            lambda c, f=base: f(c.x),
            PROBABILITIES,
            (Target(10, n=10**6),),
            scaling_target=1.7,
            kind="scaling",
        )
        for name, base in (
            ("gamma", baselines.gamma_fit_transform),
            ("robust_gamma", baselines.robust_gamma_fit_transform),
        )
    ),
    Operation(
        "metrics.evaluate", lambda c, t: metrics.evaluate(c.y, c.p, threads=t),
        "outprob.reference.metrics", lambda c: baselines.reference_evaluate(c.y, c.p),
        evaluation_check, (Target(20, n=10**6),), max_n=10**6, slow_baseline=True, kind="metrics",
    ),
    *STREAMING,
)


# -- contract §10: transformations beyond the paper --------------------------------------


def _beyond_fit_transform(name: str, case: Case, threads: int, **params: Any) -> np.ndarray:
    return outprob.scaler(name, threads=threads, **params).fit_transform(case.x)


def _rank_transform(case: Case, threads: int) -> np.ndarray:
    s = case.__dict__.get("_rank_fitted")
    if s is None:
        s = case.__dict__["_rank_fitted"] = outprob.scaler("rank").fit(case.x)
    return s.set_params(threads=threads).transform(case.x, out=case.out)


def _rank_transform_baseline(case: Case) -> np.ndarray:
    sorted_x = case.__dict__.get("_sorted")
    if sorted_x is None:
        sorted_x = case.__dict__["_sorted"] = np.sort(case.x.astype(np.float64))
    return baselines.rank_transform(sorted_x, case.x)


def _exceed(case: Case, threads: int) -> np.ndarray:
    from outprob.pyod import predict_confidence

    return predict_confidence(_exceed_detector(case), None)


def _exceed_detector(case: Case) -> Any:
    d = case.__dict__.get("_exceed")
    if d is None:
        d = case.__dict__["_exceed"] = baselines.exceed_detector(case.x)
    return d


#: The ≥ 10× goal of issue #12 at N = 1e6.
BEYOND_TARGET = (Target(10, n=10**6),)

BEYOND: Tuple[Operation, ...] = (
    Operation(
        "fit_transform rank", partial(_beyond_fit_transform, "rank"),
        "scipy rankdata(average)", lambda c: baselines.rank_fit_transform(c.x),
        PROBABILITIES, BEYOND_TARGET, kind="beyond",
    ),
    Operation(
        "rank transform (out=)", _rank_transform, "2x np.searchsorted",
        _rank_transform_baseline, PROBABILITIES, BEYOND_TARGET, kind="beyond",
    ),
    Operation(
        "fit_transform top_k (k=10%)", partial(_beyond_fit_transform, "top_k"),
        "np.partition + compare", lambda c: baselines.top_k_fit_transform(c.x, math.ceil(0.1 * c.n)),
        PROBABILITIES, BEYOND_TARGET, kind="beyond",
    ),
    Operation(
        "fit_transform sigmoid", partial(_beyond_fit_transform, "sigmoid"),
        "NumPy EM (reference)", lambda c: baselines.sigmoid_fit_transform(c.x),
        close(0.0, 0.0, 1e-6, 1e-5), BEYOND_TARGET, slow_baseline=True, kind="beyond",
    ),
    Operation(
        "fit_transform mixture", partial(_beyond_fit_transform, "mixture"),
        "NumPy EM (reference)", lambda c: baselines.mixture_fit_transform(c.x),
        close(0.0, 0.0, 1e-6, 1e-5), BEYOND_TARGET, slow_baseline=True, kind="beyond",
    ),
    Operation(
        "ExCeeD predict_confidence (m = n)", _exceed, "PyOD predict_confidence",
        lambda c: baselines.pyod_predict_confidence(_exceed_detector(c)),
        close(0.0, 0.0, 1e-12, 1e-12), (Target(10, n=10**5),), max_n=10**5,
        # Confidences from a detector's (float64) scores and rank counts, as
        # PyOD's: float64 whatever the data's dtype.
        slow_baseline=True, kind="beyond", keeps_dtype=False,
    ),
)
OPERATIONS = OPERATIONS + BEYOND

# -- peak memory --------------------------------------------------------------------------

#: A call to measure, after its set-up: () -> result.
Thunk = Callable[[], Any]


@dataclass(frozen=True)
class MemoryOp:
    """A call whose peak memory is measured. ``ours(x, threads)`` and
    ``baseline(x)`` do any set-up (fitting, allocating an output) and return
    the call to measure."""

    name: str
    ours: Callable[[np.ndarray, int], Thunk]
    baseline: Callable[[np.ndarray], Thunk]
    #: Peak increase allowed, as a multiple of the input's bytes.
    max_multiple: float
    slow_baseline: bool = False


def _fit_thunk(name: str, x: np.ndarray, threads: int) -> Thunk:
    return partial(outprob.scaler(name, threads=threads, **_variant_params(name)).fit, x)


def _transform_thunk(x: np.ndarray, threads: int) -> Thunk:
    s = outprob.scaler("mean_nmad", threads=threads).fit(x)
    out = np.zeros_like(x)  # touched: its pages are resident before measuring
    return partial(s.transform, x, out=out)


def _baseline_transform_thunk(x: np.ndarray) -> Thunk:
    mu, sigma = baselines.fit_variant("mean_nmad", x)
    return partial(baselines.gaussian_scaling, x, mu, sigma)


MEMORY_OPS: Tuple[MemoryOp, ...] = (
    MemoryOp(
        "transform (out=)", _transform_thunk, _baseline_transform_thunk, max_multiple=0.01,
    ),
    *(
        MemoryOp(
            f"fit {name}",
            partial(_fit_thunk, name),
            lambda x, name=name: partial(baselines.fit_variant, name, x),
            max_multiple=1.2,
            slow_baseline=name in ("huber", "tukey"),
        )
        for name in outprob.VARIANTS
    ),
)


def memory_op(name: str) -> MemoryOp:
    return next(op for op in MEMORY_OPS if op.name == name)


def fmt_n(n: int) -> str:
    """1e7 rather than 10000000."""
    e = int(round(math.log10(n))) if n > 0 else 0
    return f"1e{e}" if 10**e == n else str(n)
