"""Scalers: fitted maps from outlier scores to outlier probabilities.

contract §4 (the maps), §5 (the input contract), §7 (the API). The
scikit-learn machinery they share (fitting column by column, publishing the
fitted state, output containers, serialisation, pickling) is
:class:`outprob._base.ScalerBase`.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from ._base import Notes, ScalerBase, column_label
from ._core import fit_gaussian, fit_linear
from ._exceptions import ConvergenceWarning, ZeroScaleWarning
from ._input import MAX_ITER, check_fraction, check_int, check_positive, check_threads, estimator_spec

Floats = Union[float, npt.NDArray[np.float64]]


class GaussianScaler(ScalerBase):
    r"""(Robust) Gaussian scaling of outlier scores.

    .. math:: p = \max\left(0, \operatorname{erf}\left(\frac{s - \mu}{\sigma\sqrt{2}}\right)\right)

    with μ from the ``center`` estimator and σ from the ``scale`` estimator,
    fitted on the scores (contract §4). ``center="mean", scale="std"`` is the
    classic, non-robust Gaussian scaling (GS, Kriegel et al. 2011); robust
    estimators keep the outliers' long upper tail from inflating μ and σ and
    so give outliers higher probabilities (Röchner et al. 2024).

    Parameters
    ----------
    center : {"mean", "median", "trimmed_mean", "huber", "tukey"} or float
        Location estimator (contract §1), or a fixed number (e.g. 1.0 for LOF).
    scale : {"std", "nmad", "niqr", "trimmed_std", "huber", "tukey"} or float
        Scale estimator (contract §2), or a fixed positive number. When it is
        zero the fit falls back to ``"niqr"``, then ``"std"``, with a
        :class:`~outprob.ZeroScaleWarning`; if all are zero the scores are
        constant and every fitted score maps to 0.
    trim : float, default 0.1
        Fraction of the largest scores dropped by ``"trimmed_mean"`` and of
        the largest squared deviations dropped by ``"trimmed_std"``.
    ddof : int, default 0
        Delta degrees of freedom of ``"std"`` (0 as ``numpy.std``).
    maxiter : int, default 30
        Iteration limit of Huber's proposal 2 (``"huber"``, ``"tukey"``).
    tol : float, default 1e-8
        Relative convergence tolerance of Huber's proposal 2.
    nan_policy : {"omit", "raise"}, default "omit"
        NaN in fitting data are ignored, or raise ``ValueError``.
    higher_is_outlier : bool, default True
        False negates the scores first (for ``score_samples``-style scores
        where lower is stranger).
    threads : int, optional
        Threads for large inputs (default: every core, capped by the
        ``OUTPROB_NUM_THREADS`` environment variable). Results are bitwise
        the same for any thread count.

    Attributes
    ----------
    center_, scale_ : float or ndarray of shape (k,)
        Fitted μ and σ (per column for 2-D scores).
    scale_used_ : str or ndarray of shape (k,)
        The scale estimator that produced ``scale_``: ``scale`` itself or
        its fallback.
    n_iter_, converged_ : int/bool or ndarray of shape (k,)
        Only for M-estimates: outer iterations and convergence.
    n_features_in_ : int
        Number of score columns (1 for 1-D scores).
    feature_names_in_ : ndarray of str
        Column names, when fitted on a DataFrame with string column names.

    Notes
    -----
    A scikit-learn transformer (``Pipeline``, ``clone``, ``GridSearchCV``,
    ``set_output(transform="pandas")``), which also accepts one 1-D score
    vector, keeps NaN and keeps float32.

    Thread safety: ``fit`` builds the whole fitted state before publishing
    it with one assignment, so ``transform``, ``fit`` and ``to_dict`` may
    run concurrently on one scaler from several threads: each ``transform``
    uses either the previous fit or the new one, never a mix of both or no
    fit. Changing parameters (``set_params``) while another thread fits is
    not safe, as in scikit-learn.

    Examples
    --------
    >>> import outprob
    >>> s = outprob.GaussianScaler("mean", "nmad")
    >>> s.fit_transform([1.0, 1.1, 0.9, 1.2, 9.0])
    array([0., 0., 0., 0., 1.])
    >>> s
    GaussianScaler(scale='nmad')  # fitted: center_=2.64, scale_=0.1483
    """

    _FITTED = {
        "center_": float,
        "scale_": float,
        "scale_used_": str,
        "n_iter_": int,
        "converged_": bool,
    }
    _PAIR = ("center_", "scale_")
    _KIND = "gaussian"

    def __init__(
        self,
        center: Any = "mean",
        scale: Any = "std",
        *,
        trim: float = 0.1,
        ddof: int = 0,
        maxiter: int = 30,
        tol: float = 1e-8,
        nan_policy: str = "omit",
        higher_is_outlier: bool = True,
        threads: Optional[int] = None,
    ) -> None:
        self.center = center
        self.scale = scale
        self.trim = trim
        self.ddof = ddof
        self.maxiter = maxiter
        self.tol = tol
        self.nan_policy = nan_policy
        self.higher_is_outlier = higher_is_outlier
        self.threads = threads

    def _check_params(self) -> None:
        super()._check_params()
        estimator_spec(self.center, "center")
        estimator_spec(self.scale, "scale")
        check_fraction(self.trim, "trim")
        check_int(self.ddof, "ddof", 0)
        check_int(self.maxiter, "maxiter", 1, MAX_ITER)
        check_positive(self.tol, "tol")

    def _fit_column(self, x: np.ndarray, column: Optional[int]) -> Tuple[Dict[str, Any], Notes]:
        center, scale, scale_used, m_estimates = fit_gaussian(
            x,
            estimator_spec(self.center, "center"),
            estimator_spec(self.scale, "scale"),
            float(self.trim),
            int(self.ddof),
            int(self.maxiter),
            float(self.tol),
            self.nan_policy,
            not self.higher_is_outlier,
            check_threads(self.threads),
        )
        where = column_label(column)
        notes: Notes = []
        for norm, (_, _, n_iter, converged, start) in m_estimates:
            if start not in ("nmad", "constant"):
                notes.append((ZeroScaleWarning, (
                    f"the nMAD{where} is zero (more than half of the scores tie); "
                    f"Huber's proposal 2 ({norm}) started from the {start} instead"
                )))
            if not converged:
                notes.append((ConvergenceWarning, (
                    f"Huber's proposal 2 ({norm}){where} did not converge: stopped after "
                    f"{n_iter} of at most maxiter={self.maxiter} iterations (tol={self.tol}); "
                    "using the last iterate"
                )))
        chosen = self.scale if isinstance(self.scale, str) else "value"
        if scale == 0.0:
            notes.append((ZeroScaleWarning, (
                f"every scale estimate{where} is zero: the scores are constant "
                f"({center!r}); scores at or below it map to 0, higher ones to 1"
            )))
        elif scale_used != chosen:
            notes.append((ZeroScaleWarning, (
                f"scale {chosen!r}{where} is zero (common when many scores tie); "
                f"fell back to {scale_used!r}"
            )))
        fit: Dict[str, Any] = {"center_": center, "scale_": scale, "scale_used_": scale_used}
        if m_estimates:
            fit["n_iter_"] = max(m[1][2] for m in m_estimates)
            fit["converged_"] = all(m[1][3] for m in m_estimates)
        return fit, notes

    def _check_pair(self, first: List[float], second: List[float]) -> None:
        if any(s < 0 for s in second):
            raise ValueError("scale_ must be non-negative")

    @property
    def center_(self) -> Floats:
        """Fitted μ (per column for 2-D scores)."""
        return self._fitted("center_")  # type: ignore[no-any-return]

    @property
    def scale_(self) -> Floats:
        """Fitted σ (per column for 2-D scores)."""
        return self._fitted("scale_")  # type: ignore[no-any-return]

    @property
    def scale_used_(self) -> Union[str, npt.NDArray[np.str_]]:
        """The scale estimator that produced ``scale_``."""
        return self._fitted("scale_used_")  # type: ignore[no-any-return]

    @property
    def n_iter_(self) -> Union[int, npt.NDArray[np.int_]]:
        """Outer iterations of Huber's proposal 2 (M-estimates only)."""
        return self._fitted("n_iter_")  # type: ignore[no-any-return]

    @property
    def converged_(self) -> Union[bool, npt.NDArray[np.bool_]]:
        """Whether Huber's proposal 2 converged (M-estimates only)."""
        return self._fitted("converged_")  # type: ignore[no-any-return]


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
        As for :class:`GaussianScaler`.

    Attributes
    ----------
    min_, max_ : float or ndarray of shape (k,)
        Smallest and largest fitted score (per column).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        As for :class:`GaussianScaler`, which also describes the
        scikit-learn behaviour and thread safety shared by both.

    Examples
    --------
    >>> import outprob
    >>> outprob.LinearScaler().fit_transform([2.0, 4.0, 3.0])
    array([0. , 1. , 0.5])
    """

    _FITTED = {"min_": float, "max_": float}
    _PAIR = ("min_", "max_")
    _KIND = "linear"

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
        lo, hi = fit_linear(
            x, self.nan_policy, not self.higher_is_outlier, check_threads(self.threads)
        )
        return {"min_": lo, "max_": hi}, []

    def _check_pair(self, first: List[float], second: List[float]) -> None:
        if any(a > b for a, b in zip(first, second)):
            raise ValueError("min_ must not exceed max_")

    @property
    def min_(self) -> Floats:
        """Smallest fitted score (per column for 2-D scores)."""
        return self._fitted("min_")  # type: ignore[no-any-return]

    @property
    def max_(self) -> Floats:
        """Largest fitted score (per column for 2-D scores)."""
        return self._fitted("max_")  # type: ignore[no-any-return]


def from_dict(data: Dict[str, Any]) -> Union[GaussianScaler, LinearScaler]:
    """Rebuilds any fitted scaler from its :meth:`~GaussianScaler.to_dict`."""
    kinds = {f"outprob.{c.__name__}": c for c in (GaussianScaler, LinearScaler)}
    fmt = data.get("format") if isinstance(data, dict) else None
    if fmt not in kinds:
        raise ValueError(f"not a serialised outprob scaler: format must be one of {sorted(kinds)}")
    return kinds[fmt].from_dict(data)
