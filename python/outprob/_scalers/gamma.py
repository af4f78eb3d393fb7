"""Gamma scaling of outlier scores (Kriegel et al. 2011; contract §10)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from .._common.public import public
from .. import _core
from .base import Notes, ScalerBase, column_label
from .._common.exceptions import OutprobWarning, ZeroScaleWarning
from .fitted_attributes import Fitted, Floats, Strs
from .._common.validation import check_threads


_METHODS = ("moments", "quantiles")


@public("outprob")
class GammaScaler(ScalerBase):
    r"""(Robust) gamma scaling of outlier scores.

    The scores, shifted by ``offset``, are taken as gamma distributed,
    Γ(k, θ) with mean m = kθ, and mapped to

    .. math::

        p = \max\left(0, \frac{P(k, t/θ) - P(k, m/θ)}{1 - P(k, m/θ)}\right)
          = \max\left(0, 1 - \frac{Q(k, t/θ)}{Q(k, k)}\right),
        \qquad t = s + \text{offset},

    with P the regularized lower incomplete gamma function and Q = 1 − P
    (Kriegel et al., SDM 2011; ELKI's ``OutlierGammaScaling``). Scores at or
    below the mean map to 0. Gamma scaling suits scores with a natural zero
    and a right-skewed distribution (kNN distances, LOF − 1, ...).

    Parameters
    ----------
    method : {"moments", "quantiles"}, default "moments"
        ``"moments"``: the method of moments as in ELKI, with the mean m and
        the sample variance v (``ddof=1``) of the shifted scores:
        k = m²/v, θ = v/m. ``"quantiles"`` (robust gamma scaling): k and θ
        such that the gamma's quartiles match the scores' — k solves
        (q₇₅ − q₂₅)/q₅₀ = (q̂₇₅ − q̂₂₅)/q̂₅₀ (the ratio depends on k alone
        and decreases in it) and θ = q̂₅₀ / q₅₀(k, 1). The upper quarter of
        the scores, where the outliers are, does not enter the fit. If the
        quartiles determine no gamma (zero IQR or median, or k outside
        [0.01, 1e10]) the fit falls back to the moments with a
        :class:`~outprob.ZeroScaleWarning`.
    offset : "auto" or float, default "auto"
        Added to the scores (after ``higher_is_outlier`` orientation) before
        fitting and mapping. ``"auto"``: 0 when the smallest fitted score is
        >= 0 (a natural zero is kept), else minus the smallest score (so it
        becomes 0), with an :class:`~outprob.OutprobWarning`. A gamma needs
        a positive mean: a fixed offset that leaves the shifted scores with
        mean <= 0 is refused with ``ValueError``.
    nan_policy : {"omit", "raise"}, default "omit"
    higher_is_outlier : bool, default True
    threads : int, optional
        As for :class:`~outprob.GaussianScaler`.

    Attributes
    ----------
    shape_, scale_ : float or ndarray of shape (k,)
        Fitted k and θ (per column for 2-D scores). Constant scores (v = 0,
        or a single score) give ``scale_ = 0`` and ``shape_ = inf``: the
        θ → 0 limit, 0 at or below the mean, 1 above, with a
        :class:`~outprob.ZeroScaleWarning`.
    mean_ : float or ndarray of shape (k,)
        The gamma's mean kθ (of the shifted scores): the cut below which
        probabilities are 0.
    offset_ : float or ndarray of shape (k,)
        The offset used.
    method_used_ : str or ndarray of shape (k,)
        ``method`` or its fallback ``"moments"``.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        As for :class:`~outprob.GaussianScaler`, which also describes the
        scikit-learn behaviour, NaN/inf rules and thread safety shared by
        all scalers.

    Examples
    --------
    >>> import outprob
    >>> s = outprob.GammaScaler()
    >>> s.fit_transform([1.0, 2.0, 3.0, 4.0]).round(4)
    array([0.    , 0.    , 0.3126, 0.7116])
    >>> round(s.shape_, 4), round(s.scale_, 4)
    (3.75, 0.6667)
    """

    _KIND = "gamma"
    _MAP = {"offset": "offset_", "mean": "mean_", "scale": "scale_"}
    _PAIR = ("mean_", "scale_")

    offset_ = Fitted[Floats](float, "The offset added to the scores.")
    mean_ = Fitted[Floats](
        float, "The fitted gamma's mean kθ: probabilities are 0 at or below it."
    )
    scale_ = Fitted[Floats](float, "Fitted θ (per column for 2-D scores).")
    method_used_ = Fitted[Strs](
        str, "``method`` or its fallback ``\"moments\"``."
    )

    def __init__(
        self,
        method: str = "moments",
        *,
        offset: Any = "auto",
        nan_policy: str = "omit",
        higher_is_outlier: bool = True,
        threads: Optional[int] = None,
    ) -> None:
        self.method = method
        self.offset = offset
        self.nan_policy = nan_policy
        self.higher_is_outlier = higher_is_outlier
        self.threads = threads

    def _check_params(self) -> None:
        super()._check_params()
        if self.method not in _METHODS:
            raise ValueError(f"method must be one of {_METHODS}, got {self.method!r}")
        _offset(self.offset)

    def _fit_column(self, x: np.ndarray, column: Optional[int]) -> Tuple[Dict[str, Any], Notes]:
        f = _core.fit_gamma(
            x, method=self.method, offset=_offset(self.offset), nan_policy=self.nan_policy,
            negate=not self.higher_is_outlier, threads=check_threads(self.threads),
        )
        offset, mean, scale, used = f.offset, f.mean, f.scale, f.method_used
        where = column_label(column)
        notes: Notes = []
        if self.offset == "auto" and offset > 0:
            notes.append((OutprobWarning, (
                f"scores{where} include negative values; gamma scaling shifted them by "
                f"offset_={offset!r} so that the smallest is 0 (pass offset=<number> "
                "to choose the shift)"
            )))
        if used != self.method:
            notes.append((ZeroScaleWarning, (
                f"the quartiles{where} determine no gamma distribution (zero IQR or "
                "median, or a shape outside [0.01, 1e10]); fell back to the moments"
            )))
        if scale == 0.0:
            notes.append((ZeroScaleWarning, (
                f"the scores{where} are constant (zero variance): scores at or below "
                f"{mean - offset!r} map to 0, higher ones to 1"
            )))
        fit = {"offset_": offset, "mean_": mean, "scale_": scale, "method_used_": used}
        return fit, notes

    def _check_pair(self, first: List[float], second: List[float]) -> None:
        if any(s < 0 for s in second):
            raise ValueError("scale_ must be non-negative")
        if any(s > 0 and m <= 0 for m, s in zip(first, second)):
            raise ValueError("mean_ must be positive where scale_ is")

    @property
    def shape_(self) -> Floats:
        """Fitted k = ``mean_ / scale_`` (inf for constant scores)."""
        mean, scale = self.mean_, self.scale_
        with np.errstate(divide="ignore", invalid="ignore"):
            k = np.where(np.asarray(scale) > 0, np.asarray(mean) / np.asarray(scale), np.inf)
        return float(k) if k.ndim == 0 else k


def _offset(offset: Any) -> Optional[float]:
    """None for "auto", else the fixed finite offset."""
    if isinstance(offset, str):
        if offset == "auto":
            return None
        raise ValueError(f"offset must be 'auto' or a finite number, got {offset!r}")
    if isinstance(offset, (bool, np.bool_)) or not isinstance(offset, (int, float, np.number)):
        raise TypeError(f"offset must be 'auto' or a finite number, got {offset!r}")
    value = float(offset)
    if not np.isfinite(value):
        raise ValueError(f"offset must be 'auto' or a finite number, got {offset!r}")
    return value
