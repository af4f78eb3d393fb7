"""How good are outlier probabilities? The measures of contract §6.

Following Röchner et al., "Evaluating outlier probabilities: assessing
sharpness, refinement, and calibration using stratified and weighted
measures" (DMKD 2024). Every measure is the mean of a per-observation error
e_i in [0, 1]; lower is better:

============================  ==============================================
Brier score                   ``(p_i − y_i)²``
sharpness error               ``H(p_i) = −p log₂ p − (1 − p) log₂(1 − p)``
refinement error              ``2·ȳ_b·(1 − ȳ_b)``, Gini of p_i's bin b
calibration error             ``|p̄_b − ȳ_b|``, binned L¹ error of p_i's bin
============================  ==============================================

Stratified measures average e_i over the outliers (``stratify="outlier"``,
y = 1) or the inliers (``"inlier"``, y = 0); ``"both"`` is the mean of the
two. Bins are always formed from all observations: ``[0, t₁], (t₁, t₂], …,
(t_{k−1}, 1]`` by ``bins="equiareal"`` (equal width × fraction of
observations, the default), ``"equal_width"`` or ``"equal_frequency"``;
``n_bins`` is an int or a sequence of ints whose results are averaged
(default k = 5, …, 20, as in the paper).

Arguments follow scikit-learn: ``(y_true, p)``. Labels are 0/1 integers,
booleans or floats equal to 0/1; probabilities float32 or float64 in
[0, 1]. Results are Python floats. ``threads`` caps the threads used on
large inputs (default: every core, capped by ``OUTPROB_NUM_THREADS``);
results do not depend on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
from ._common.validation import LIMITS, as_float_array, as_labels, check_threads
from ._common.optional import require

__all__ = [
    "DEFAULT_N_BINS",
    "MAX_BINS",
    "MAX_BIN_COUNTS",
    "SCHEMES",
    "brier_score",
    "sharpness_error",
    "refinement_error",
    "calibration_error",
    "bin_edges",
    "reliability_curve",
    "ReliabilityCurve",
    "skill_score",
    "harmonic_improvement_score",
    "evaluate",
    "Evaluation",
    "Strata",
]

#: The paper's bin counts: k = 5, …, 20, results averaged.
DEFAULT_N_BINS: Tuple[int, ...] = tuple(range(5, 21))
#: Largest bin count accepted (contract §5); checked before anything is allocated.
MAX_BINS = LIMITS["bins"][2]
#: Largest number of bin counts in one ``n_bins`` sequence.
MAX_BIN_COUNTS = LIMITS["bin_counts"][2]
#: Binning schemes.
SCHEMES = ("equiareal", "equal_width", "equal_frequency")
_STRATIFY = (None, "outlier", "inlier", "both")
NBins = Union[int, Sequence[int]]


# -- input -----------------------------------------------------------------------


def _labels(y_true: Any) -> np.ndarray:
    return as_labels(y_true, "y_true")


def _pair(y_true: Any, p: Any) -> Tuple[np.ndarray, np.ndarray]:
    y = _labels(y_true)
    q = as_float_array(p, "p")
    if q.ndim != 1:
        raise ValueError(f"p must be 1-D, got shape {q.shape}")
    if q.size != y.size:
        raise ValueError(f"y_true has {y.size} labels but p has {q.size} probabilities")
    return y, q


def _bin_count(k: Any, name: str) -> int:
    # Python ints of any size are compared here, before the extension would
    # convert them to usize (OverflowError) or allocate k edges.
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"{name} must be a positive int, got {k!r}")
    if k > MAX_BINS:
        raise ValueError(f"{name} must be at most {MAX_BINS} bins, got {k}")
    return int(k)


def _n_bins(n_bins: NBins) -> List[int]:
    if isinstance(n_bins, (str, bytes)):
        raise ValueError(f"n_bins must be a positive int or a non-empty sequence of them, got {n_bins!r}")
    ks = [n_bins] if isinstance(n_bins, (int, np.integer)) else list(n_bins)
    if not ks:
        raise ValueError(f"n_bins must be a positive int or a non-empty sequence of them, got {n_bins!r}")
    if len(ks) > MAX_BIN_COUNTS:
        raise ValueError(f"n_bins may hold at most {MAX_BIN_COUNTS} bin counts, got {len(ks)}")
    return [_bin_count(k, "n_bins") for k in ks]


def _scheme(bins: str) -> str:
    if bins not in SCHEMES:
        raise ValueError(f"bins must be one of {', '.join(map(repr, SCHEMES))}, got {bins!r}")
    return bins


# -- strata ----------------------------------------------------------------------------


class Strata(NamedTuple):
    """A measure over all observations, per class, and stratified."""

    overall: float
    outliers: float
    inliers: float

    @property
    def stratified(self) -> float:
        """Mean of the outlier and inlier values (contract §6)."""
        return (self.outliers + self.inliers) / 2

    def select(self, stratify: Optional[str], measure: str) -> float:
        """The value a ``stratify=`` argument asks for; ``ValueError`` when
        it needs a class that ``y_true`` does not hold."""
        if stratify not in _STRATIFY:
            raise ValueError(f"stratify must be None, 'outlier', 'inlier' or 'both', got {stratify!r}")
        if stratify is None:
            return self.overall
        need = ("outlier", "inlier") if stratify == "both" else (stratify,)
        for cls, value in (("outlier", self.outliers), ("inlier", self.inliers)):
            if cls in need and math.isnan(value):
                label = 1 if cls == "outlier" else 0
                raise ValueError(
                    f"y_true holds no {cls}s (y == {label}): the {cls}-stratified "
                    f"{measure} is undefined"
                )
        return {"outlier": self.outliers, "inlier": self.inliers}.get(stratify, self.stratified)


def _strata(s: Any) -> Strata:
    """The core's strata of a measure as a :class:`Strata`."""
    return Strata(s.all, s.outlier, s.inlier)


# -- the four measures --------------------------------------------------------------------


def brier_score(
    y_true: Any, p: Any, *, stratify: Optional[str] = None, threads: Optional[int] = None
) -> float:
    """Brier score: mean of ``(p_i − y_i)²``.

    Unstratified it equals ``sklearn.metrics.brier_score_loss``.

    Examples
    --------
    >>> from outprob import metrics
    >>> metrics.brier_score([0, 0, 1], [0.0, 0.5, 0.5])
    0.16666666666666666
    >>> metrics.brier_score([0, 0, 1], [0.0, 0.5, 0.5], stratify="outlier")
    0.25
    """
    y, q = _pair(y_true, p)
    brier, _ = _core.brier_and_sharpness(q, y, threads=check_threads(threads))
    return _strata(brier).select(stratify, "Brier score")


def sharpness_error(
    y_true: Any, p: Any, *, stratify: Optional[str] = None, threads: Optional[int] = None
) -> float:
    """Sharpness error: mean binary entropy in bits,
    ``H(p) = −p log₂ p − (1 − p) log₂(1 − p)`` with ``H(0) = H(1) = 0``.

    Examples
    --------
    >>> from outprob import metrics
    >>> metrics.sharpness_error([0, 1], [0.5, 1.0])
    0.5
    """
    y, q = _pair(y_true, p)
    _, sharp = _core.brier_and_sharpness(q, y, threads=check_threads(threads))
    return _strata(sharp).select(stratify, "sharpness error")


def _binned(
    y_true: Any, p: Any, bins: str, n_bins: NBins, threads: Optional[int]
) -> Tuple[Strata, Strata]:
    y, q = _pair(y_true, p)
    r, c = _core.refinement_and_calibration(
        q, y, bins=_scheme(bins), n_bins=_n_bins(n_bins), threads=check_threads(threads)
    )
    return _strata(r), _strata(c)


def refinement_error(
    y_true: Any,
    p: Any,
    *,
    stratify: Optional[str] = None,
    bins: str = "equiareal",
    n_bins: NBins = DEFAULT_N_BINS,
    threads: Optional[int] = None,
) -> float:
    """Refinement error: each observation takes the Gini index
    ``2·ȳ_b·(1 − ȳ_b)`` of the labels in its bin b; averaged over ``n_bins``.

    Examples
    --------
    >>> from outprob import metrics
    >>> metrics.refinement_error([0, 1, 0, 1], [0.1, 0.2, 0.8, 0.9], bins="equal_width", n_bins=2)
    0.5
    """
    return _binned(y_true, p, bins, n_bins, threads)[0].select(stratify, "refinement error")


def calibration_error(
    y_true: Any,
    p: Any,
    *,
    stratify: Optional[str] = None,
    bins: str = "equiareal",
    n_bins: NBins = DEFAULT_N_BINS,
    threads: Optional[int] = None,
) -> float:
    """Binned L¹ calibration error: each observation takes ``|p̄_b − ȳ_b|``
    of its bin b (mean probability against outlier fraction); averaged over
    ``n_bins``.

    Examples
    --------
    >>> from outprob import metrics
    >>> round(metrics.calibration_error([0, 0, 1, 1], [0.1, 0.3, 0.6, 0.8],
    ...                                 bins="equal_width", n_bins=2), 12)
    0.25
    """
    return _binned(y_true, p, bins, n_bins, threads)[1].select(stratify, "calibration error")


# -- bins -----------------------------------------------------------------------------------


def bin_edges(
    p: Any, k: int, scheme: str = "equiareal", *, threads: Optional[int] = None
) -> np.ndarray:
    """Edges ``[0, t₁, …, 1]`` of ``k`` bins of the probabilities ``p``.

    ``"equal_width"``: ``t_b = b/k``. ``"equal_frequency"``: ``t_b = Q(b/k)``
    (type-7 quantiles), repeated edges merged — except that ``t₁ = 0`` (more
    than a fraction 1/k of exact zeros) is kept: the first bin ``[0, 0]``
    then holds the zeros. ``"equiareal"``: the greedy
    edges of contract §6 — from a = 0, the next edge is the smallest t whose bin
    area ``(t − a)·#{a < p_i <= t}/N`` reaches the target T (the first bin
    also counts p_i = 0), until an edge would reach 1 — for the smallest T
    (bisection to machine precision) that yields at most k bins. Every bin
    but the last then has area at least T, and exceeds it at most by
    ``width·m/N``, m the observations on its right edge. Fewer than k bins
    come back when the data cannot fill k (few distinct values).

    Examples
    --------
    >>> from outprob import metrics
    >>> metrics.bin_edges([0.1, 0.2, 0.3, 0.9], 4, "equal_width")
    array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    >>> metrics.bin_edges([0.1, 0.2, 0.3, 0.9], 2, "equal_frequency")
    array([0.  , 0.25, 1.  ])
    """
    q = as_float_array(p, "p").reshape(-1)
    return np.array(
        _core.bin_edges(q, k=_bin_count(k, "k"), bins=_scheme(scheme), threads=check_threads(threads))
    )


class ReliabilityCurve(NamedTuple):
    """The data of a reliability diagram; arrays have one entry per bin
    (NaN means and fractions for empty bins)."""

    mean_probability: np.ndarray
    outlier_fraction: np.ndarray
    # A field named like tuple.count (the public name since 0.1.0): typing
    # rules for NamedTuple flag the shadowing, the runtime does not mind.
    count: np.ndarray  # type: ignore[assignment]
    edges: np.ndarray

    def to_frame(self) -> Any:
        """One row per bin: ``lower``/``upper`` edge, ``mean_probability``,
        ``outlier_fraction`` and ``count``, as a pandas DataFrame (needs
        pandas)."""
        pd = require("pandas", "ReliabilityCurve.to_frame")
        return pd.DataFrame(
            {
                "lower": self.edges[:-1],
                "upper": self.edges[1:],
                "mean_probability": self.mean_probability,
                "outlier_fraction": self.outlier_fraction,
                "count": self.count,
            },
            index=pd.RangeIndex(len(self.count), name="bin"),
        )


def reliability_curve(
    y_true: Any,
    p: Any,
    *,
    bins: str = "equiareal",
    n_bins: int = 10,
    threads: Optional[int] = None,
) -> ReliabilityCurve:
    """Per bin: mean probability p̄_b, outlier fraction ȳ_b and count.

    Plot ``outlier_fraction`` against ``mean_probability`` (bins with
    ``count > 0``); calibrated probabilities lie on the diagonal. With
    ``bins="equal_width"`` the non-empty bins equal
    ``sklearn.calibration.calibration_curve(y, p, n_bins=n_bins)``.

    Examples
    --------
    >>> from outprob import metrics
    >>> c = metrics.reliability_curve([0, 0, 1, 1], [0.1, 0.3, 0.6, 0.8],
    ...                               bins="equal_width", n_bins=2)
    >>> c.mean_probability, c.outlier_fraction, c.count
    (array([0.2, 0.7]), array([0., 1.]), array([2, 2]))
    """
    y, q = _pair(y_true, p)
    (k,) = _n_bins(n_bins)
    c = _core.reliability_curve(q, y, bins=_scheme(bins), k=k, threads=check_threads(threads))
    return ReliabilityCurve(
        np.array(c.mean_probability), np.array(c.outlier_fraction),
        np.array(c.count, dtype=np.intp), np.array(c.edges),
    )


# -- comparing transformations ---------------------------------------------------------------

_MEASURES: Dict[str, Callable[..., float]] = {
    "brier_score": brier_score,
    "sharpness_error": sharpness_error,
    "refinement_error": refinement_error,
    "calibration_error": calibration_error,
}
_BINNED = ("refinement_error", "calibration_error")
Measure = Union[str, Callable[..., float]]


def _measure(measure: Measure, bins: str, n_bins: NBins) -> Callable[..., float]:
    """A measure ``f(y_true, p, stratify=...)``: a name (the binned ones get
    ``bins`` and ``n_bins``) or a callable of that signature."""
    if callable(measure):
        return measure
    try:
        f = _MEASURES[measure]
    except (KeyError, TypeError):
        raise ValueError(
            f"measure must be one of {', '.join(_MEASURES)} or a callable, got {measure!r}"
        ) from None
    if measure in _BINNED:
        return lambda y, p, stratify=None: f(y, p, stratify=stratify, bins=bins, n_bins=n_bins)
    return f


def _skill(value: float, reference: float) -> float:
    if value == 0 and reference == 0:
        return 0.0
    if value == 0:
        return math.inf
    if reference == 0:
        return -math.inf
    return -math.log2(value / reference)


def skill_score(
    y_true: Any,
    p: Any,
    p_ref: Any,
    *,
    measure: Measure = "brier_score",
    stratify: Optional[str] = None,
    bins: str = "equiareal",
    n_bins: NBins = DEFAULT_N_BINS,
) -> float:
    """Skill score ``SS = −log₂(M(p, y) / M(p_ref, y))`` of ``p`` against
    reference probabilities ``p_ref`` for a measure M.

    Positive: ``p`` is better; 0: equal; negative: worse. Both measures zero
    give 0, only M(p) = 0 gives +inf, only M(p_ref) = 0 gives −inf.
    ``measure`` is a name (``"brier_score"``, ``"sharpness_error"``,
    ``"refinement_error"``, ``"calibration_error"``; ``bins``/``n_bins`` go
    to the binned two) or a callable ``f(y_true, p, stratify=...)``.

    Examples
    --------
    >>> from outprob import metrics
    >>> y = [0, 0, 1]
    >>> metrics.skill_score(y, [0.0, 0.1, 0.9], [0.0, 0.2, 0.8])  # Brier 4× lower
    2.0
    >>> metrics.skill_score(y, [0.0, 0.1, 0.9], [0.0, 0.2, 0.8], stratify="outlier")
    2.0
    """
    m = _measure(measure, bins, n_bins)
    return _skill(m(y_true, p, stratify=stratify), m(y_true, p_ref, stratify=stratify))


#: The paper's measures for the harmonic improvement score: stratified
#: sharpness, refinement and calibration errors for outliers and inliers.
HIS_MEASURES: Tuple[Tuple[str, str], ...] = tuple(
    (m, s) for m in ("sharpness_error", "refinement_error", "calibration_error") for s in ("outlier", "inlier")
)


def harmonic_improvement_score(
    y_true: Any,
    p: Any,
    candidates: Sequence[Any],
    *,
    measures: Sequence[Tuple[Measure, Optional[str]]] = HIS_MEASURES,
    bins: str = "equiareal",
    n_bins: NBins = DEFAULT_N_BINS,
) -> float:
    """Harmonic improvement score of ``p`` among the probability
    distributions ``candidates`` (contract §6): the harmonic mean over measures
    M_i of ``M_i(p, y) / mean_j M_i(p^j, y)``. Lower is better; 1 is the
    average candidate.

    ``measures`` is a sequence of (measure, stratify) pairs — measures as in
    :func:`skill_score` — by default the stratified sharpness, refinement
    and calibration errors for outliers and inliers. A measure on which every candidate scores 0 gives the ratio 1
    (``p`` is then as good as the average); a ratio of 0 makes the score 0.

    Examples
    --------
    >>> from outprob import metrics
    >>> y = [0, 0, 0, 1]
    >>> good, bad = [0.0, 0.1, 0.2, 0.9], [0.3, 0.4, 0.5, 0.5]
    >>> metrics.harmonic_improvement_score(y, good, [good, bad]) < 1
    True
    """
    if len(candidates) == 0:
        raise ValueError("candidates must hold at least one probability distribution")
    ratios = []
    for measure, stratify in measures:
        m = _measure(measure, bins, n_bins)
        value = m(y_true, p, stratify=stratify)
        mean = math.fsum(m(y_true, c, stratify=stratify) for c in candidates) / len(candidates)
        if mean == 0:
            ratios.append(1.0 if value == 0 else math.inf)
        else:
            ratios.append(value / mean)
    if any(r == 0 for r in ratios):
        return 0.0
    return len(ratios) / math.fsum(1.0 / r for r in ratios)


# -- everything at once ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Evaluation:
    """Every measure of contract §6, overall, per class and stratified.

    Attributes ``brier_score``, ``sharpness_error``, ``refinement_error``,
    ``calibration_error`` are :class:`Strata` (``.overall``, ``.outliers``,
    ``.inliers``, ``.stratified``). Values that need an absent class are NaN
    and ``notes`` says why. ``str(evaluation)`` is a table; ``to_dict()``
    gives plain floats.
    """

    brier_score: Strata
    sharpness_error: Strata
    refinement_error: Strata
    calibration_error: Strata
    n_outliers: int
    n_inliers: int
    bins: str
    n_bins: Tuple[int, ...]
    notes: Tuple[str, ...] = field(default=())

    MEASURES = ("brier_score", "sharpness_error", "refinement_error", "calibration_error")
    COLUMNS = ("overall", "outliers", "inliers", "stratified")

    def to_dict(self) -> Dict[str, Any]:
        """``{measure: {column: value}}`` plus counts and binning."""
        out: Dict[str, Any] = {
            m: {c: float(getattr(getattr(self, m), c)) for c in self.COLUMNS} for m in self.MEASURES
        }
        out.update(
            n_outliers=self.n_outliers,
            n_inliers=self.n_inliers,
            bins=self.bins,
            n_bins=list(self.n_bins),
            notes=list(self.notes),
        )
        return out

    def to_frame(self) -> Any:
        """The table as a pandas DataFrame: one row per measure, columns
        ``overall``, ``outliers``, ``inliers``, ``stratified``; counts,
        binning and notes in ``DataFrame.attrs``. Needs pandas."""
        pd = require("pandas", "Evaluation.to_frame")
        frame = pd.DataFrame(
            [[float(getattr(getattr(self, m), c)) for c in self.COLUMNS] for m in self.MEASURES],
            index=pd.Index(self.MEASURES, name="measure"),
            columns=list(self.COLUMNS),
        )
        frame.attrs.update(
            n_outliers=self.n_outliers,
            n_inliers=self.n_inliers,
            bins=self.bins,
            n_bins=list(self.n_bins),
            notes=list(self.notes),
        )
        return frame

    def __str__(self) -> str:
        ks = self.n_bins
        span = f"k = {ks[0]}..{ks[-1]}" if len(ks) > 1 and list(ks) == list(range(ks[0], ks[-1] + 1)) else f"k = {', '.join(map(str, ks))}"
        lines = [
            f"{self.n_outliers + self.n_inliers} probabilities: {_count(self.n_outliers, 'outlier')}, "
            f"{_count(self.n_inliers, 'inlier')}; binned measures: {self.bins} bins, {span}",
            f"{'measure':<18}" + "".join(f"{c:>11}" for c in self.COLUMNS),
        ]
        for m in self.MEASURES:
            s = getattr(self, m)
            lines.append(f"{m:<18}" + "".join(f"{getattr(s, c):>11.4f}" for c in self.COLUMNS))
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)

    __repr__ = __str__


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def evaluate(
    y_true: Any,
    p: Any,
    *,
    bins: str = "equiareal",
    n_bins: NBins = DEFAULT_N_BINS,
    threads: Optional[int] = None,
) -> Evaluation:
    """All measures of contract §6 at once: one pass for the Brier score and
    sharpness, one sort for every binning.

    Examples
    --------
    >>> import numpy as np
    >>> from outprob import metrics
    >>> e = metrics.evaluate(np.r_[0, 0, 0, 1], np.r_[0.1, 0.0, 0.3, 0.9])
    >>> round(e.brier_score.outliers, 4), round(e.brier_score.inliers, 4)
    (0.01, 0.0333)
    """
    y, q = _pair(y_true, p)
    ks = _n_bins(n_bins)
    e = _core.evaluate(q, y, bins=_scheme(bins), n_bins=ks, threads=check_threads(threads))
    n_out, n = e.n_outliers, e.n
    notes = []
    if n_out == 0:
        notes.append("y_true holds no outliers: the outlier and stratified columns are NaN")
    if n_out == n:
        notes.append("y_true holds no inliers: the inlier and stratified columns are NaN")
    return Evaluation(
        _strata(e.brier),
        _strata(e.sharpness),
        _strata(e.refinement),
        _strata(e.calibration),
        n_outliers=n_out,
        n_inliers=n - n_out,
        bins=bins,
        n_bins=tuple(ks),
        notes=tuple(notes),
    )
