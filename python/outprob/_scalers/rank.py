"""Rank-based scalings beyond the paper (contract §10): ELKI's ranking
pseudo-probabilities (``"rank"``) and their logarithmic variant
(``"log_rank"``)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from .._common.public import public
from .. import _core
from .._maps import stored_state as _persist
from .base import Notes, ScalerBase
from .fitted_attributes import Fitted
from .._common.validation import as_float_array, check_threads
from .._maps.stored_state import State

Sorted = Union[npt.NDArray[np.float64], List[npt.NDArray[np.float64]]]


@public("outprob")
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

    _KIND = "rank"
    _PAIR = ("sorted_", "sorted_")
    _LOG = False

    sorted_ = Fitted[Sorted](
        float, "The fitted scores, sorted (one array per column for 2-D scores)."
    )

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
        value = fits[0] if x.ndim == 1 else fits
        return self._published({"sorted_": value}, x.ndim, names, not self.higher_is_outlier)

    def _fit_transform_fused(self, X: np.ndarray) -> Any:
        """For 1-D scores one sort gives the fit and the probabilities (the
        same values as ``fit(X).transform(X)``)."""
        x = as_float_array(X)
        if x.ndim != 1:
            return None
        self._check_params()
        out = np.empty_like(x)
        sorted_ = _core.fit_transform_rank(
            x, out, log=self._LOG, nan_policy=self.nan_policy, negate=not self.higher_is_outlier
        )
        state = self._published({"sorted_": sorted_}, 1, None, not self.higher_is_outlier)
        self._state = state
        return self._output(out, X, state)

    def _published(
        self, attributes: Dict[str, Any], ndim: int, names: Optional[np.ndarray], negate: bool
    ) -> State:
        # sorted_ is the map's own memory (read-only views): the fitted
        # scores are kept once.
        sorted_ = attributes["sorted_"]
        columns = [sorted_] if ndim == 1 else list(sorted_)
        fitted = _core.FittedMap({
            "kind": self._KIND, "negate": negate, "two_d": ndim == 2, "pretransform": None,
            "params": {}, "sorted": columns,
        })
        views = [fitted.sorted(j) for j in range(len(columns))]
        value: Any = views[0] if ndim == 1 else views
        return State({"sorted_": value}, ndim, len(views) if ndim == 2 else 1, names, negate, fitted)

    def to_dict(self) -> Dict[str, Any]:
        """A JSON-serialisable description of the fitted scaler (builtin
        types only), including every fitted score."""
        state = self._fitted_state()
        data = _persist.to_dict(self, state._replace(attributes={}))
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
                checked.append(np.ascontiguousarray(c, dtype=np.float64))
            except (TypeError, ValueError) as exc:
                raise ValueError(f"fitted attribute sorted_: {exc}") from None
        if not checked:
            raise ValueError("a fitted scaler needs at least one score column; the lists are empty")
        names = _persist.checked_names(names, ndim, len(checked))
        value = checked[0] if ndim == 1 else checked
        # The core checks the fitted scores: non-empty, finite, ascending.
        return self._published({"sorted_": value}, ndim, names, bool(negate))

    def _fitted_summary(self, state: State) -> str:
        s = state.attributes["sorted_"]
        counts = [len(s)] if state.ndim == 1 else [len(c) for c in s]
        return f"{counts[0] if state.ndim == 1 else counts} scores"


@public("outprob")
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
