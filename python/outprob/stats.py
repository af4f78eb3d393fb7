"""Location and scale estimators of contract §1–§3, computed by the Rust core.

All functions follow the input contract of contract §5: float32 and float64 are
computed natively (results are ``numpy.float32`` for float32 input, else
``numpy.float64``), NaN are omitted (``nan_policy="omit"``, the default) or
refused (``"raise"``), ±inf and empty input raise ``ValueError``. With
``axis=None`` the input is flattened; with an integer ``axis`` the estimator
is applied along that axis. ``threads`` caps the threads used on large
inputs (default: every core, capped by the ``OUTPROB_NUM_THREADS``
environment variable); results are bitwise the same for any thread count.

Types: with ``axis=None`` (the default) the result is a NumPy scalar,
``numpy.float64`` — a subclass of ``float``, so ``m: float = median(x)``
type-checks — or ``numpy.float32`` for float32 arrays; with an integer
``axis`` it is an array. Overloads tell type checkers which.

The input is read in place, never copied: order statistics come from a
sample that brackets the wanted ranks and one pass that keeps only what
falls inside the bracket (Floyd–Rivest), sums are correctly rounded.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, NamedTuple, Optional, Sequence, Union, overload

import numpy as np
import numpy.typing as npt

from . import _core
from ._common import exceptions as _exceptions
from ._common.validation import (
    MAX_ITER,
    as_float_array,
    check_count,
    check_fraction,
    check_nan_policy,
    check_positive,
    check_threads,
)

__all__ = [
    "MAX_ITER",
    "MEstimate",
    "mean",
    "median",
    "quantile",
    "upper_trimmed_mean",
    "std",
    "nmad",
    "niqr",
    "trimmed_std",
    "m_estimate",
    "NMAD_DIVISOR",
    "NIQR_DIVISOR",
]

#: Φ⁻¹(3/4): ``nmad = median(|s − median(s)|) / NMAD_DIVISOR``.
NMAD_DIVISOR = 0.6744897501960817
#: Φ⁻¹(3/4) − Φ⁻¹(1/4): ``niqr = (Q(.75) − Q(.25)) / NIQR_DIVISOR``.
NIQR_DIVISOR = 1.3489795003921634

Result = Union[np.floating[Any], npt.NDArray[np.floating[Any]]]
# Overload shorthands: float32 arrays give float32, anything else float64.
F32 = npt.NDArray[np.float32]
Like = npt.ArrayLike
Out = npt.NDArray[np.floating[Any]]
Threads = Optional[int]


def _reduce(
    x: Like, axis: Optional[int], nan_policy: str, fn: Callable[[np.ndarray], float]
) -> Result:
    """Applies a 1-D estimator to the flattened array or along an axis."""
    check_nan_policy(nan_policy)
    a = as_float_array(x)
    if axis is None:
        value: np.floating[Any] = a.dtype.type(fn(a.reshape(-1)))
        return value
    moved, rows = _rows(a, axis)
    values: Out = np.array([fn(r) for r in rows], dtype=a.dtype)
    return values.reshape(moved.shape[:-1])


def _rows(a: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """``a`` with ``axis`` moved last, and its 1-D lanes along that axis."""
    moved = np.moveaxis(a, axis, -1)
    if moved.shape[-1] == 0:
        raise ValueError(
            f"x is empty along axis {axis} (shape {a.shape}): there are no scores "
            "to estimate from"
        )
    return moved, np.ascontiguousarray(moved).reshape(-1, moved.shape[-1])


@overload
def mean(
    x: F32, axis: None = None, *, nan_policy: str = ..., threads: Threads = ...
) -> np.float32: ...
@overload
def mean(
    x: Like, axis: None = None, *, nan_policy: str = ..., threads: Threads = ...
) -> np.float64: ...
@overload
def mean(x: Like, axis: int, *, nan_policy: str = ..., threads: Threads = ...) -> Out: ...
def mean(
    x: Like,
    axis: Optional[int] = None,
    *,
    nan_policy: str = "omit",
    threads: Optional[int] = None,
) -> Result:
    """Arithmetic mean ``(1/N) Σ s_i`` with a correctly rounded sum.

    Equal to ``math.fsum(s) / N`` whatever the order of ``s``.

    Examples
    --------
    >>> from outprob import stats
    >>> float(stats.mean([1e16, 1.0, -1e16]))
    0.3333333333333333
    """
    t = check_threads(threads)
    return _reduce(x, axis, nan_policy, lambda r: _core.mean(r, nan_policy=nan_policy, threads=t))


@overload
def std(
    x: F32, ddof: int = ..., axis: None = None, *, nan_policy: str = ..., threads: Threads = ...
) -> np.float32: ...
@overload
def std(
    x: Like, ddof: int = ..., axis: None = None, *, nan_policy: str = ..., threads: Threads = ...
) -> np.float64: ...
@overload
def std(x: Like, ddof: int, axis: int, *, nan_policy: str = ..., threads: Threads = ...) -> Out: ...
@overload
def std(
    x: Like, ddof: int = ..., *, axis: int, nan_policy: str = ..., threads: Threads = ...
) -> Out: ...
def std(
    x: Like,
    ddof: int = 0,
    axis: Optional[int] = None,
    *,
    nan_policy: str = "omit",
    threads: Optional[int] = None,
) -> Result:
    """Standard deviation ``sqrt(Σ(s − mean)² / (N − ddof))`` (contract §2).

    ``ddof=0`` as ``numpy.std`` and PyOD; ``ddof >= N`` raises ``ValueError``.

    Examples
    --------
    >>> from outprob import stats
    >>> float(stats.std([2, 4, 4, 4, 5, 5, 7, 9]))
    2.0
    """
    ddof = check_count(ddof, "ddof")
    t = check_threads(threads)
    return _reduce(x, axis, nan_policy, lambda r: _core.std(r, ddof=ddof, nan_policy=nan_policy, threads=t))


@overload
def median(
    x: F32, axis: None = None, *, nan_policy: str = ..., threads: Threads = ...
) -> np.float32: ...
@overload
def median(
    x: Like, axis: None = None, *, nan_policy: str = ..., threads: Threads = ...
) -> np.float64: ...
@overload
def median(x: Like, axis: int, *, nan_policy: str = ..., threads: Threads = ...) -> Out: ...
def median(
    x: Like,
    axis: Optional[int] = None,
    *,
    nan_policy: str = "omit",
    threads: Optional[int] = None,
) -> Result:
    """Median: the middle order statistic, or the mean of the two middle
    ones (``numpy.median``), by selection instead of sorting.

    Examples
    --------
    >>> from outprob import stats
    >>> float(stats.median([4.0, 1.0, 3.0, 2.0]))
    2.5
    """
    t = check_threads(threads)
    return _reduce(x, axis, nan_policy, lambda r: _core.median(r, nan_policy=nan_policy, threads=t))


@overload
def quantile(
    x: F32, q: float, axis: None = None, *, nan_policy: str = ..., threads: Threads = ...
) -> np.float32: ...
@overload
def quantile(
    x: Like, q: float, axis: None = None, *, nan_policy: str = ..., threads: Threads = ...
) -> np.float64: ...
@overload
def quantile(
    x: Like, q: Union[Sequence[float], npt.NDArray[Any]], axis: None = None,
    *, nan_policy: str = ..., threads: Threads = ...
) -> Out: ...
@overload
def quantile(
    x: Like, q: Like, axis: int, *, nan_policy: str = ..., threads: Threads = ...
) -> Out: ...
def quantile(
    x: Like,
    q: Any,
    axis: Optional[int] = None,
    *,
    nan_policy: str = "omit",
    threads: Optional[int] = None,
) -> Result:
    """Type-7 quantiles (``numpy.quantile``'s default ``"linear"``).

    ``h = (N − 1)·q``, ``Q(q) = s_(⌊h⌋+1) + (h − ⌊h⌋)·(s_(⌊h⌋+2) − s_(⌊h⌋+1))``
    with 1-based order statistics (contract §1). ``q`` is a number or an array
    in [0, 1]; as in NumPy, the dimensions of ``q`` come first in the result.

    Examples
    --------
    >>> from outprob import stats
    >>> stats.quantile([1, 2, 3, 4], [0.25, 0.75])
    array([1.75, 3.25])
    """
    qs = np.asarray(q, dtype=np.float64)
    if qs.size and not (np.all(qs >= 0.0) and np.all(qs <= 1.0)):
        raise ValueError("q: quantiles must be in [0, 1]")
    flat_q = [float(v) for v in qs.reshape(-1)]
    check_nan_policy(nan_policy)
    t = check_threads(threads)
    a = as_float_array(x)
    if axis is None:
        values = np.array(_core.quantile(a.reshape(-1), q=flat_q, nan_policy=nan_policy, threads=t), dtype=a.dtype)
        return values.reshape(qs.shape) if qs.ndim else values[0]
    moved, rows = _rows(a, axis)
    table = np.array([_core.quantile(r, q=flat_q, nan_policy=nan_policy, threads=t) for r in rows], dtype=a.dtype)
    out = np.moveaxis(table.reshape(moved.shape[:-1] + (len(flat_q),)), -1, 0)
    return out.reshape(qs.shape + moved.shape[:-1])


@overload
def upper_trimmed_mean(
    x: F32, alpha: float = ..., axis: None = None, *, nan_policy: str = ..., threads: Threads = ...
) -> np.float32: ...
@overload
def upper_trimmed_mean(
    x: Like, alpha: float = ..., axis: None = None, *, nan_policy: str = ..., threads: Threads = ...
) -> np.float64: ...
@overload
def upper_trimmed_mean(
    x: Like, alpha: float, axis: int, *, nan_policy: str = ..., threads: Threads = ...
) -> Out: ...
@overload
def upper_trimmed_mean(
    x: Like, alpha: float = ..., *, axis: int, nan_policy: str = ..., threads: Threads = ...
) -> Out: ...
def upper_trimmed_mean(
    x: Like,
    alpha: float = 0.1,
    axis: Optional[int] = None,
    *,
    nan_policy: str = "omit",
    threads: Optional[int] = None,
) -> Result:
    """Asymmetric, upper-trimmed mean: the mean of all but the
    ``floor(alpha·N)`` largest scores; the lower tail is untouched.

    At most ``N − 1`` scores are dropped. ``alpha`` in [0, 1).

    Examples
    --------
    >>> from outprob import stats
    >>> float(stats.upper_trimmed_mean([1, 2, 3, 4, 5, 6, 7, 8, 9, 100], 0.1))
    5.0
    """
    alpha = check_fraction(alpha, "alpha")
    t = check_threads(threads)
    return _reduce(
        x, axis, nan_policy, lambda r: _core.upper_trimmed_mean(r, alpha=alpha, nan_policy=nan_policy, threads=t)
    )


@overload
def nmad(
    x: F32, axis: None = None, *, nan_policy: str = ..., threads: Threads = ...
) -> np.float32: ...
@overload
def nmad(
    x: Like, axis: None = None, *, nan_policy: str = ..., threads: Threads = ...
) -> np.float64: ...
@overload
def nmad(x: Like, axis: int, *, nan_policy: str = ..., threads: Threads = ...) -> Out: ...
def nmad(
    x: Like,
    axis: Optional[int] = None,
    *,
    nan_policy: str = "omit",
    threads: Optional[int] = None,
) -> Result:
    """Normalised median absolute deviation about the median,
    ``median(|s − median(s)|) / Φ⁻¹(3/4)`` — equal to
    ``scipy.stats.median_abs_deviation(s, scale="normal")``.

    Examples
    --------
    >>> from outprob import stats
    >>> round(float(stats.nmad([1, 2, 3, 4, 100])), 6)
    1.482602
    """
    t = check_threads(threads)
    return _reduce(x, axis, nan_policy, lambda r: _core.nmad(r, nan_policy=nan_policy, threads=t))


@overload
def niqr(
    x: F32, axis: None = None, *, nan_policy: str = ..., threads: Threads = ...
) -> np.float32: ...
@overload
def niqr(
    x: Like, axis: None = None, *, nan_policy: str = ..., threads: Threads = ...
) -> np.float64: ...
@overload
def niqr(x: Like, axis: int, *, nan_policy: str = ..., threads: Threads = ...) -> Out: ...
def niqr(
    x: Like,
    axis: Optional[int] = None,
    *,
    nan_policy: str = "omit",
    threads: Optional[int] = None,
) -> Result:
    """Normalised interquartile range ``(Q(0.75) − Q(0.25)) / 1.3489795...``
    — equal to ``scipy.stats.iqr(s, scale="normal")``.

    Examples
    --------
    >>> from outprob import stats
    >>> round(float(stats.niqr([1, 2, 3, 4, 100])), 6)
    1.482602
    """
    t = check_threads(threads)
    return _reduce(x, axis, nan_policy, lambda r: _core.niqr(r, nan_policy=nan_policy, threads=t))


@overload
def trimmed_std(
    x: F32, center: float, alpha: float = ..., axis: None = None,
    *, nan_policy: str = ..., threads: Threads = ...
) -> np.float32: ...
@overload
def trimmed_std(
    x: Like, center: float, alpha: float = ..., axis: None = None,
    *, nan_policy: str = ..., threads: Threads = ...
) -> np.float64: ...
@overload
def trimmed_std(
    x: Like, center: float, alpha: float, axis: int,
    *, nan_policy: str = ..., threads: Threads = ...
) -> Out: ...
@overload
def trimmed_std(
    x: Like, center: float, alpha: float = ...,
    *, axis: int, nan_policy: str = ..., threads: Threads = ...
) -> Out: ...
def trimmed_std(
    x: Like,
    center: float,
    alpha: float = 0.1,
    axis: Optional[int] = None,
    *,
    nan_policy: str = "omit",
    threads: Optional[int] = None,
) -> Result:
    """Trimmed standard deviation about ``center``: drop the
    ``floor(alpha·N)`` largest ``(s − center)²``, then ``sqrt`` of the mean
    of the rest. No consistency factor (contract §2).

    Examples
    --------
    >>> from outprob import stats
    >>> float(stats.trimmed_std([1, 2, 3, 4, 100], center=0.0, alpha=0.2))
    2.7386127875258306
    """
    alpha = check_fraction(alpha, "alpha")
    c = float(center)
    if not np.isfinite(c):
        raise ValueError(f"center must be finite, got {center!r}")
    t = check_threads(threads)
    return _reduce(
        x, axis, nan_policy, lambda r: _core.trimmed_std(r, center=c, alpha=alpha, nan_policy=nan_policy, threads=t)
    )


class MEstimate(NamedTuple):
    """Result of :func:`m_estimate`."""

    location: float
    scale: float
    n_iter: int
    converged: bool


def m_estimate(
    x: Like,
    norm: str = "huber",
    *,
    c: float = 1.5,
    tuning: Optional[float] = None,
    maxiter: int = 30,
    tol: float = 1e-8,
    nan_policy: str = "omit",
    threads: Optional[int] = None,
) -> MEstimate:
    """Joint location and scale by Huber's proposal 2 (contract §3).

    From μ₀ = median and σ₀ = nMAD, alternate a location step — the
    iteratively reweighted mean with Huber's T (``norm="huber"``,
    ``w = min(1, t/|r|)``, t = 1.345) or Tukey's biweight (``"tukey"``,
    ``w = (1 − (r/c_T)²)²`` for ``|r| <= c_T = 4.685``) — and the scale step

    ``σ² ← [Σ_{|s−μ|/σ <= c} (s − μ_new)² + Σ_{others} (c·σ)²] / ((N − 1)·γ)``

    with ``γ = (2Φ(c) − 1) + c²(1 − (2Φ(c) − 1)) − 2c·φ(c)``, until both move
    less than ``tol·σ``. The semantics of
    ``statsmodels.robust.scale.Huber(c, tol, maxiter, norm)``, except that
    non-convergence returns the last iterate with ``converged=False`` and a
    :class:`~outprob.ConvergenceWarning` instead of raising. If the nMAD is
    zero, the iteration starts from the nIQR (or the SD); constant scores
    give ``(value, 0.0)``.

    Parameters
    ----------
    x : array_like
        Scores (flattened).
    norm : {"huber", "tukey"}
    c : float, default 1.5
        Clipping constant of the scale step.
    tuning : float, optional
        Tuning constant of the norm (default 1.345 for Huber's T, 4.685 for
        Tukey's biweight).
    maxiter : int, default 30
        At most ``MAX_ITER`` = 1000 (contract §5).
    tol : float, default 1e-8
    nan_policy : {"omit", "raise"}, default "omit"

    Returns
    -------
    MEstimate
        ``(location, scale, n_iter, converged)``.

    Examples
    --------
    >>> from outprob import stats
    >>> est = stats.m_estimate([2.2, 2.2, 2.4, 2.4, 2.5, 2.7, 2.8, 2.9, 3.03, 28.95])
    >>> est.converged, round(est.location, 4), round(est.scale, 4)
    (True, 2.6297, 0.3994)
    """
    check_nan_policy(nan_policy)
    c = check_positive(c, "c")
    t = None if tuning is None else check_positive(tuning, "tuning")
    maxiter = check_count(maxiter, "maxiter")
    tol = check_positive(tol, "tol")
    a = as_float_array(x)
    e = _core.m_estimate(
        a.reshape(-1), norm=norm, c=c, tuning=t, maxiter=maxiter, tol=tol,
        nan_policy=nan_policy, threads=check_threads(threads),
    )
    loc, scale, n_iter, converged = e.location, e.scale, e.n_iter, e.converged
    if not converged:
        warnings.warn(
            f"Huber's proposal 2 ({norm}) did not converge: stopped after {n_iter} of at "
            f"most maxiter={maxiter} iterations (tol={tol}); returning the last iterate",
            _exceptions.ConvergenceWarning,  # made on first use: imports scikit-learn
            stacklevel=2,
        )
    return MEstimate(loc, scale, n_iter, converged)
