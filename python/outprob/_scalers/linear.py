"""Linear scaling of outlier scores (contract §4)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from .._common.public import public
from .. import _core
from .base import Notes, ScalerBase, _values
from .fitted_attributes import Fitted, Floats
from .incremental import refit_every
from .._common.validation import check_threads
from ..streaming._state import StreamingResult



@public("outprob")
class LinearScaler(ScalerBase):
    r"""Linear scaling of outlier scores to [0, 1].

    .. math:: p = \operatorname{clip}\left(\frac{s - \min}{\max - \min}, 0, 1\right)

    with min and max of the fitted scores (contract §4). New scores outside the
    fitted range are clipped. If all fitted scores are equal, scores at or
    below them map to 0 and higher ones to 1.

    Parameters
    ----------
    nan_policy : {"omit", "raise"}, default "omit"
    higher_is_outlier : bool, default True
    threads : int, optional
    window, refit_every : int, optional
        As for :class:`~outprob.GaussianScaler`; :meth:`partial_fit` keeps min and max
        exactly (no sketch).

    Attributes
    ----------
    min_, max_ : float or ndarray of shape (k,)
        Smallest and largest fitted score (per column).
    n_samples_seen_ : int or ndarray of shape (k,)
        After :meth:`partial_fit`: the scores fitted so far.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        As for :class:`~outprob.GaussianScaler`, which also describes the
        scikit-learn behaviour and thread safety shared by both.

    Examples
    --------
    >>> import outprob
    >>> outprob.LinearScaler().fit_transform([2.0, 4.0, 3.0])
    array([0. , 1. , 0.5])
    """

    _KIND = "linear"
    _MAP = {"min": "min_", "max": "max_"}
    _PAIR = ("min_", "max_")
    _CAN_STREAM = True

    min_ = Fitted[Floats](float, "Smallest fitted score (per column for 2-D scores).")
    max_ = Fitted[Floats](float, "Largest fitted score (per column for 2-D scores).")

    def __init__(
        self,
        *,
        nan_policy: str = "omit",
        higher_is_outlier: bool = True,
        threads: Optional[int] = None,
        window: Optional[int] = None,
        refit_every: Optional[int] = None,
    ) -> None:
        self.nan_policy = nan_policy
        self.higher_is_outlier = higher_is_outlier
        self.threads = threads
        self.window = window
        self.refit_every = refit_every

    def _check_params(self) -> None:
        super()._check_params()
        self._check_window()

    def _fit_column(self, x: np.ndarray, column: Optional[int]) -> Tuple[Dict[str, Any], Notes]:
        fit = _core.fit_linear(
            x, nan_policy=self.nan_policy, negate=not self.higher_is_outlier,
            threads=check_threads(self.threads),
        )
        return {"min_": fit.min, "max_": fit.max}, []

    def _fit_transform_fused(self, X: np.ndarray) -> Any:
        # Checked at every call: three checks cost less than a cache lookup.
        if self.window is not None:
            return None
        self._check_params()
        done = _core.fit_transform_linear(
            X, nan_policy=self.nan_policy, negate=not self.higher_is_outlier,
            threads=check_threads(self.threads),
        )
        if done is None:
            return None
        _, result, fitted = done  # a linear fit is its map's parameters
        low, high = fitted.column(0)
        return self._publish_fused({"min_": low, "max_": high}, fitted, None, result, X)

    def _stream_params(self) -> Dict[str, Any]:
        self._check_streamable(("nan_policy", "higher_is_outlier", "threads", "window", "refit_every"))
        return dict(
            scaling="linear", nan_policy=self.nan_policy,
            higher_is_outlier=bool(self.higher_is_outlier), window=self.window,
            refit_every=refit_every(self.window, self.refit_every),
        )

    def _stream_column(
        self, result: StreamingResult, column: Optional[int]
    ) -> Tuple[Dict[str, Any], Notes]:
        return {"min_": result.center, "max_": result.scale, "n_samples_seen_": result.n}, []

    def _one_column_map(self, attributes: Dict[str, Any], negate: bool) -> Any:
        low, high = _values(attributes["min_"]), _values(attributes["max_"])
        if len(low) != 1 or len(high) != 1:
            return None  # (the state's check explains)
        return _core.FittedMap.one_column("linear", negate, [low[0], high[0]])

    def _check_pair(self, first: List[float], second: List[float]) -> None:
        if any(a > b for a, b in zip(first, second)):
            raise ValueError("min_ must not exceed max_")
