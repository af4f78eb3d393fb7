"""Sigmoid scaling (Gao & Tan, ICDM 2006; contract §10): ``"sigmoid"``."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from .._common.public import public
from .. import _core
from .base import Notes, ScalerBase, column_label
from .._common.exceptions import ConvergenceWarning, ZeroScaleWarning
from .fitted_attributes import Fitted, Bools, Floats, Ints
from .._common.validation import check_count, check_threads



@public("outprob")
class SigmoidScaler(ScalerBase):
    r"""Sigmoid scaling fitted by EM (Gao & Tan 2006; ELKI's
    ``SigmoidOutlierScaling``).

    .. math:: p = \frac{1}{1 + \exp\left(-\left(a\,\frac{s - m}{d} + b\right)\right)}

    with m and d the mean and standard deviation (ddof 0) of the fitted
    scores. The EM alternates an E-step that labels the scores with
    :math:`a z + b > 0` as outliers and an M-step that fits (a, b) to
    Platt's regularised targets — :math:`(N_+ + 1)/(N_+ + 2)` for the
    :math:`N_+` outliers, :math:`1/(N_- + 2)` for the :math:`N_-` inliers —
    by Newton's method with backtracking on the cross-entropy in its stable
    :math:`\log(1 + e^{\pm u})` forms (Lin, Lin & Weng 2007), from
    :math:`a = 1, b = 0` (ELKI's start: the first labels are the scores above
    the mean), until no label changes or ``maxiter`` M-steps. ELKI's
    slope and intercept in score units are :math:`A = a/d`,
    :math:`B = b - A m`; fitting on standardised scores is the same model
    (the sigmoid family is closed under affine maps) with a Newton iteration
    equally well conditioned at every score magnitude. (ELKI's code swaps
    the two counts in the targets; this follows Platt.)

    Constant scores: a = b = 0, every score maps to ½ (with a
    :class:`~outprob.ZeroScaleWarning`). NaN stays NaN; with a > 0 the map
    is increasing, +inf → 1, −inf → 0.

    Parameters
    ----------
    maxiter : int, default 100
        EM iterations (M-steps); a :class:`~outprob.ConvergenceWarning` if
        the labels still change.
    nan_policy, higher_is_outlier, threads
        As for :class:`~outprob.GaussianScaler`.

    Attributes
    ----------
    center_, scale_ : float or ndarray
        m and d.
    a_, b_ : float or ndarray
        Slope and intercept on the standardised score.
    n_iter_, converged_ : int/bool or ndarray

    Examples
    --------
    >>> import outprob
    >>> p = outprob.SigmoidScaler().fit_transform([1.0, 1.1, 0.9, 1.2, 1.0, 9.0])
    >>> bool(p[-1] > 0.5 > p[0])
    True
    """

    _KIND = "sigmoid"
    _MAP = {"center": "center_", "scale": "scale_", "a": "a_", "b": "b_"}
    _PAIR = ("a_", "b_")

    center_ = Fitted[Floats](float, "Mean of the fitted scores (per column).")
    scale_ = Fitted[Floats](
        float, "Standard deviation (ddof 0) of the fitted scores (per column)."
    )
    a_ = Fitted[Floats](float, "Slope on the standardised score (per column).")
    b_ = Fitted[Floats](float, "Intercept on the standardised score (per column).")
    n_iter_ = Fitted[Ints](int, "EM iterations run (per column).")
    converged_ = Fitted[Bools](bool, "Whether the EM labels stopped changing (per column).")

    def __init__(
        self,
        *,
        maxiter: int = 100,
        nan_policy: str = "omit",
        higher_is_outlier: bool = True,
        threads: Optional[int] = None,
    ) -> None:
        self.maxiter = maxiter
        self.nan_policy = nan_policy
        self.higher_is_outlier = higher_is_outlier
        self.threads = threads

    def _check_params(self) -> None:
        super()._check_params()
        check_count(self.maxiter, "em_maxiter")

    def _fit_column(self, x: np.ndarray, column: Optional[int]) -> Tuple[Dict[str, Any], Notes]:
        f = _core.fit_sigmoid(
            x, nan_policy=self.nan_policy, negate=not self.higher_is_outlier,
            maxiter=int(self.maxiter), threads=check_threads(self.threads),
        )
        center, scale, a, b, n_iter, converged = f.center, f.scale, f.a, f.b, f.n_iter, f.converged
        where = column_label(column)
        notes: Notes = []
        if scale == 0.0:
            notes.append((ZeroScaleWarning, (
                f"the scores{where} are constant ({center!r}): the sigmoid is flat, "
                "every score maps to 0.5"
            )))
        if not converged:
            notes.append((ConvergenceWarning, (
                f"the sigmoid EM{where} did not converge within maxiter={self.maxiter} "
                "iterations; using the last iterate"
            )))
        fit = {"center_": center, "scale_": scale, "a_": a, "b_": b,
               "n_iter_": n_iter, "converged_": converged}  # fmt: skip
        return fit, notes
