"""Rank-based scalings beyond the paper (contract §10): ELKI's ranking
pseudo-probabilities (``"rank"``), their logarithmic variant
(``"log_rank"``) and top-k scaling (``"top_k"``)."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import _core, _persist
from ._base import Notes, ScalerBase
from ._input import as_float_array, check_fraction, check_int, check_out, check_threads
from ._parametric import ParametricScaler
from ._persist import State

Floats = Union[float, npt.NDArray[np.float64]]


class RankScaler(ScalerBase):
    r"""Ranking pseudo-probabilities: the mid-rank of a score among the fitted
    scores (ELKI's ``RankingPseudoOutlierScaling``).

    With the fitted scores :math:`x_{(0)} \le \dots \le x_{(n-1)}`,
    :math:`lo = \#\{x < s\}` and :math:`hi = \#\{x \le s\}`,

    .. math:: p = \operatorname{clip}\left(\frac{lo + hi - 1}{2(n - 1)}, 0, 1\right)

    On a fitted score this is the mean 0-based rank of its ties divided by
    n − 1 — exactly ELKI's value, so the lowest fitted score maps to 0 and
    the highest to 1 (ties share their mean rank). A new score between two
    fitted ones maps to the midpoint of their values; below the fitted range
    to 0, above it to 1. One fitted score (n = 1) or constant scores: the
    fitted value maps to ½, lower scores to 0 and higher to 1. ``log=True``
    (``"log_rank"``) maps to :math:`\log(1 + p)/\ln 2` (see
    :class:`LogRankScaler`).

    The fit keeps a sorted float64 copy of the non-NaN scores (8 bytes per
    fitted score and column; ``to_dict`` stores them all); a transform costs
    O(log n) per score. NaN stays NaN, +inf → 1, −inf → 0; the map is
    monotone non-decreasing.

    Parameters
    ----------
    nan_policy : {"omit", "raise"}, default "omit"
    higher_is_outlier : bool, default True
    threads : int, optional
        As for :class:`~outprob.GaussianScaler`.

    Attributes
    ----------
    sorted_ : ndarray, or list of ndarray (one per column for 2-D scores)
        The fitted (oriented) scores, sorted ascending.
    n_features_in_ : int

    Examples
    --------
    >>> import outprob
    >>> outprob.RankScaler().fit_transform([3.0, 1.0, 2.0, 2.0, 9.0])
    array([0.75 , 0.   , 0.375, 0.375, 1.   ])
    """

    _FITTED = {"sorted_": float}
    _PAIR = ("sorted_", "sorted_")
    _KIND = "rank"
    _LOG = False

    def __init__(
        self,
        *,
        nan_policy: str = "omit",
        higher_is_outlier: bool = True,
        threads: Optional[int] = None,
    ) -> None:
        self.nan_policy = nan_policy
        self.higher_is_outlier = higher_is_outlier
        self.threads = threads

    def _fit_column(self, x: np.ndarray, column: Optional[int]) -> Tuple[Dict[str, Any], Notes]:
        sorted_ = _core.fit_rank(
            x, nan_policy=self.nan_policy, negate=not self.higher_is_outlier,
            threads=check_threads(self.threads),
        )
        return {"sorted_": sorted_}, []

    def _fit_state(self, x: np.ndarray, names: Optional[np.ndarray]) -> State:
        self._check_params()
        if x.ndim not in (1, 2) or (x.ndim == 2 and x.shape[1] == 0):
            return super()._fit_state(x, names)  # its messages for bad shapes
        columns = [x] if x.ndim == 1 else list(np.ascontiguousarray(x.T))
        fits = [self._fit_column(c, None)[0]["sorted_"] for c in columns]
        return _rank_state(fits, x.ndim, names, not self.higher_is_outlier)

    def fit_transform(self, X: npt.ArrayLike, y: Any = None, out: Optional[np.ndarray] = None) -> Any:
        """``fit(X).transform(X)``; for 1-D scores one sort gives both (the
        same values)."""
        x = as_float_array(X)
        if x.ndim != 1:
            return super().fit_transform(X, y, out)
        self._check_params()
        if out is None:
            out = np.empty_like(x)
        else:
            check_out(out, x)
            if np.shares_memory(out, x):
                x = x.copy()
        sorted_ = _core.fit_transform_rank(
            x, out, log=self._LOG, nan_policy=self.nan_policy, negate=not self.higher_is_outlier
        )
        state = _rank_state([sorted_], 1, None, not self.higher_is_outlier)
        self._state = state
        return self._output(out, X, state)

    def _apply(self, state: State, x: np.ndarray, out: Optional[np.ndarray]) -> Any:
        if out is None:
            out = np.empty_like(x)
        else:
            check_out(out, x)
            if np.shares_memory(out, x):
                x = x.copy()
        sorted_ = state.attributes["sorted_"]
        columns = [sorted_] if state.ndim == 1 else list(sorted_)
        _core.transform_rank(
            x, out, sorted=columns, log=self._LOG, negate=state.negate,
            threads=check_threads(self.threads),
        )
        return out if out.ndim else out[()]

    def to_dict(self) -> Dict[str, Any]:
        """A JSON-serialisable description of the fitted scaler (builtin
        types only), including every fitted score."""
        state = self._get_state()
        plain = state._replace(attributes={})
        data = _persist.to_dict(self, plain)
        s = state.attributes["sorted_"]
        data["fitted"] = {"sorted_": s.tolist() if state.ndim == 1 else [c.tolist() for c in s]}
        return data

    def _restore(self, fitted: Any, ndim: Any, names: Any, negate: bool) -> State:
        if ndim not in (1, 2):
            raise ValueError(f"ndim must be 1 or 2, got {ndim!r}")
        if not isinstance(fitted, dict) or set(fitted) != {"sorted_"}:
            raise ValueError("a fitted rank scaler stores exactly the attribute 'sorted_'")
        raw = fitted["sorted_"]
        columns = [raw] if ndim == 1 else list(raw)
        checked = []
        for c in columns:
            try:
                a = np.array(c, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"fitted attribute sorted_: {exc}") from None
            if a.ndim != 1 or a.size == 0 or not np.all(np.isfinite(a)) or np.any(a[1:] < a[:-1]):
                raise ValueError("sorted_ must hold non-empty, finite, ascending scores per column")
            checked.append(np.ascontiguousarray(a))
        if not checked:
            raise ValueError("a fitted scaler needs at least one score column; the lists are empty")
        if names is not None:
            names = np.asarray([str(t) for t in names], dtype=object)
            if ndim != 2 or len(names) != len(checked):
                raise ValueError("feature_names_in must name each of the fitted score columns")
        return _rank_state(checked, ndim, names, bool(negate))

    def __repr__(self, N_CHAR_MAX: int = 700) -> str:
        text: str = super(ScalerBase, self).__repr__(N_CHAR_MAX)
        state = self.__dict__.get("_state")
        if state is None:
            return text
        counts = [len(c) for c in ([state.attributes["sorted_"]] if state.ndim == 1
                                   else state.attributes["sorted_"])]  # fmt: skip
        shown = counts[0] if state.ndim == 1 else counts
        return f"{text}  # fitted: {shown} scores"

    @property
    def sorted_(self) -> Union[npt.NDArray[np.float64], List[npt.NDArray[np.float64]]]:
        """The fitted scores, sorted (one array per column for 2-D scores)."""
        return self._fitted("sorted_")  # type: ignore[no-any-return]


def _rank_state(
    fits: List[np.ndarray], ndim: int, names: Optional[np.ndarray], negate: bool
) -> State:
    for f in fits:
        f.setflags(write=False)
    value: Any = fits[0] if ndim == 1 else fits
    lo = [float(f[0]) for f in fits]
    hi = [float(f[-1]) for f in fits]
    return State({"sorted_": value}, ndim, len(fits) if ndim == 2 else 1, names, negate, lo, hi)


class LogRankScaler(RankScaler):
    r"""Logarithmic ranking pseudo-probabilities (ELKI's
    ``LogRankingPseudoOutlierScaling``, normalised to [0, 1]).

    .. math:: p = \frac{\log(1 + r)}{\ln 2}

    with r the mid-rank of :class:`RankScaler`. ELKI returns
    :math:`\log(1 + r)` (range [0, ln 2]) and resolves ties by whichever
    position its binary search hits; here ties share their mean rank and the
    result is divided by ln 2 so that the highest fitted score maps to 1.
    Monotone non-decreasing; all other rules as :class:`RankScaler`.

    Examples
    --------
    >>> import outprob
    >>> outprob.LogRankScaler().fit_transform([1.0, 2.0, 3.0])
    array([0.       , 0.5849625, 1.       ])
    """

    _KIND = "log_rank"
    _LOG = True


class TopKScaler(ParametricScaler):
    r"""Top-k scaling (ELKI's ``TopKOutlierScaling``): the k highest fitted
    scores are outliers.

    ``binary=True`` (default):

    .. math:: p = [s \ge c]

    with c the k-th largest fitted score (so with ties at c more than k
    fitted scores map to 1). ``binary=False`` is ELKI's linear variant:
    :math:`p = \operatorname{clip}((s - g)/(\max - g), 0, 1)` for
    :math:`s \ge c` and 0 below, with :math:`g = \min(0, c)` and max the
    largest fitted score (1 when max ≤ g).

    Parameters
    ----------
    k : int, optional
        Number of outliers to keep (capped at the number of non-NaN scores).
    fraction : float, default 0.1
        Used when ``k`` is None: :math:`k = \max(1, \lceil \text{fraction} \cdot n\rceil)`.
    binary : bool, default True
        0/1 output, or ELKI's linear variant.
    nan_policy, higher_is_outlier, threads
        As for :class:`~outprob.GaussianScaler`.

    Attributes
    ----------
    cutoff_ : float or ndarray of shape (k,)
        The k-th largest fitted score c.
    max_ : float or ndarray
        The largest fitted score.
    k_ : int or ndarray
        The k used.
    binary_ : bool or ndarray
        ``binary`` as fitted.

    Examples
    --------
    >>> import outprob
    >>> outprob.TopKScaler(k=2).fit_transform([1.0, 5.0, 3.0, 4.0])
    array([0., 1., 0., 1.])
    """

    _FITTED = {"cutoff_": float, "max_": float, "k_": int, "binary_": bool}
    _PAIR = ("cutoff_", "max_")
    _PARAMS = ("cutoff_", "max_", "binary_")
    _KIND = "top_k"

    def __init__(
        self,
        k: Optional[int] = None,
        *,
        fraction: float = 0.1,
        binary: bool = True,
        nan_policy: str = "omit",
        higher_is_outlier: bool = True,
        threads: Optional[int] = None,
    ) -> None:
        self.k = k
        self.fraction = fraction
        self.binary = binary
        self.nan_policy = nan_policy
        self.higher_is_outlier = higher_is_outlier
        self.threads = threads

    def _check_params(self) -> None:
        super()._check_params()
        if self.k is not None:
            check_int(self.k, "k", 1)
        check_fraction(self.fraction, "fraction")
        if self.k is None and self.fraction == 0.0:
            raise ValueError("fraction must be in (0, 1) when k is None, got 0.0")
        if not isinstance(self.binary, (bool, np.bool_)):
            raise TypeError(f"binary must be a bool, got {self.binary!r}")

    def _fit_column(self, x: np.ndarray, column: Optional[int]) -> Tuple[Dict[str, Any], Notes]:
        if self.k is not None:
            k = int(self.k)
        else:
            n = int(np.count_nonzero(~np.isnan(x)))
            k = max(1, math.ceil(float(self.fraction) * n))
        f = _core.fit_top_k(
            x, k=k, nan_policy=self.nan_policy, negate=not self.higher_is_outlier,
            threads=check_threads(self.threads),
        )
        cutoff, hi = f.cutoff, f.max
        n_valid = int(np.count_nonzero(~np.isnan(x)))
        fit = {"cutoff_": cutoff, "max_": hi, "k_": min(k, n_valid), "binary_": bool(self.binary)}
        return fit, []

    def _rows(self, state: State) -> List[List[float]]:
        cut = np.atleast_1d(np.asarray(state.attributes["cutoff_"], dtype=float))
        hi = np.atleast_1d(np.asarray(state.attributes["max_"], dtype=float))
        # As fitted (a parameter changed after fit takes effect at the next fit).
        binary = np.atleast_1d(np.asarray(state.attributes.get("binary_", True), dtype=bool))
        binary = np.broadcast_to(binary, cut.shape)
        return [[float(c), float(m), float(b)] for c, m, b in zip(cut, hi, binary)]

    def _restore(self, fitted: Any, ndim: Any, names: Any, negate: bool) -> State:
        return ScalerBase._restore(self, fitted, ndim, names, negate)

    def _check_pair(self, first: List[float], second: List[float]) -> None:
        if any(a > b for a, b in zip(first, second)):
            raise ValueError("cutoff_ must not exceed max_")

    @property
    def cutoff_(self) -> Floats:
        """The k-th largest fitted score (per column)."""
        return self._fitted("cutoff_")  # type: ignore[no-any-return]

    @property
    def max_(self) -> Floats:
        """The largest fitted score (per column)."""
        return self._fitted("max_")  # type: ignore[no-any-return]

    @property
    def k_(self) -> Union[int, npt.NDArray[np.int_]]:
        """The k used (per column)."""
        return self._fitted("k_")  # type: ignore[no-any-return]
