"""Top-k scaling (ELKI's ``TopKOutlierScaling``; contract §10): ``"top_k"``."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .._common.public import public
from .. import _core
from .base import Notes, ScalerBase
from .fitted_attributes import Bools, Fitted, Floats, Ints
from .._common.validation import check_count, check_fraction, check_threads


@public("outprob")
class TopKScaler(ScalerBase):
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

    _KIND = "top_k"
    # ``binary`` as fitted: a parameter changed after the fit takes effect
    # at the next fit.
    _MAP = {"cutoff": "cutoff_", "max": "max_", "binary": "binary_"}
    _PAIR = ("cutoff_", "max_")

    cutoff_ = Fitted[Floats](float, "The k-th largest fitted score (per column).")
    max_ = Fitted[Floats](float, "The largest fitted score (per column).")
    k_ = Fitted[Ints](int, "The k used (per column).")
    binary_ = Fitted[Bools](bool, "``binary`` as fitted (per column).")

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
            check_count(self.k, "top_k")
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

    def _check_pair(self, first: List[float], second: List[float]) -> None:
        if any(a > b for a, b in zip(first, second)):
            raise ValueError("cutoff_ must not exceed max_")
