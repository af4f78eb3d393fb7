"""Sigmoid and mixture-model scaling (Gao & Tan, ICDM 2006; contract §10):
``"sigmoid"`` and ``"mixture"``."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import _core
from ._base import Notes, column_label
from ._exceptions import ConvergenceWarning, ZeroScaleWarning
from ._input import check_int, check_positive, check_threads
from ._parametric import ParametricScaler

Floats = Union[float, npt.NDArray[np.float64]]


class SigmoidScaler(ParametricScaler):
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

    _FITTED = {
        "center_": float,
        "scale_": float,
        "a_": float,
        "b_": float,
        "n_iter_": int,
        "converged_": bool,
    }
    _PAIR = ("a_", "b_")
    _PARAMS = ("center_", "scale_", "a_", "b_")
    _KIND = "sigmoid"

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
        check_int(self.maxiter, "maxiter", 1)

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

    def _check_pair(self, first: List[float], second: List[float]) -> None:
        pass  # the core checks every parameter (ParametricScaler._restore)

    @property
    def center_(self) -> Floats:
        """Mean of the fitted scores (per column)."""
        return self._fitted("center_")  # type: ignore[no-any-return]

    @property
    def scale_(self) -> Floats:
        """Standard deviation (ddof 0) of the fitted scores (per column)."""
        return self._fitted("scale_")  # type: ignore[no-any-return]

    @property
    def a_(self) -> Floats:
        """Slope on the standardised score (per column)."""
        return self._fitted("a_")  # type: ignore[no-any-return]

    @property
    def b_(self) -> Floats:
        """Intercept on the standardised score (per column)."""
        return self._fitted("b_")  # type: ignore[no-any-return]

    @property
    def n_iter_(self) -> Union[int, npt.NDArray[np.int_]]:
        """EM iterations run (per column)."""
        return self._fitted("n_iter_")  # type: ignore[no-any-return]

    @property
    def converged_(self) -> Union[bool, npt.NDArray[np.bool_]]:
        """Whether the EM labels stopped changing (per column)."""
        return self._fitted("converged_")  # type: ignore[no-any-return]


class MixtureScaler(ParametricScaler):
    r"""Mixture-model scaling (Gao & Tan 2006; ELKI's
    ``MixtureModelOutlierScaling``): inliers exponential, outliers Gaussian,
    p the posterior of the outlier component.

    .. math:: p = \frac{\alpha\,\varphi(u; \mu, \sigma)}
              {\alpha\,\varphi(u; \mu, \sigma) + (1 - \alpha)\,\lambda e^{-\lambda u}},
              \qquad u = s / c

    with c the mean of the fitted scores (the model is scale-equivariant:
    fitting on u is the same model at every magnitude), fitted by EM from
    ELKI's start (μ = 2, σ = sample standard deviation of u, λ = ½,
    α = 0.05) for at most ``maxiter`` iterations, until
    :math:`|\Delta\mu|, |\Delta\sigma| \le tol\cdot\sigma`,
    :math:`|\Delta\lambda| \le tol\cdot\lambda` and
    :math:`|\Delta\alpha| \le tol`; σ is floored at 1e-8 (in units of c:
    a Gaussian collapsing onto one tie group has unbounded likelihood). The posterior is evaluated in log space
    (no 0/0 where both densities underflow).

    The scores must be non-negative (the exponential's support): otherwise
    ``ValueError``. Constant scores: α = 0, every score maps to 0 (with a
    :class:`~outprob.ZeroScaleWarning`). The posterior is **not monotone**:
    far above μ the exponential tail dominates the Gaussian one again and p
    falls back towards 0 (±inf → 0); ELKI notes that the EM often fits the
    Gaussian to the inliers instead. NaN stays NaN.

    Parameters
    ----------
    maxiter : int, default 100
    tol : float, default 1e-8
    nan_policy, higher_is_outlier, threads
        As for :class:`~outprob.GaussianScaler`.

    Attributes
    ----------
    scale_ : float or ndarray
        c, the unit of μ, σ and 1/λ.
    alpha_, mu_, sigma_, lambda_ : float or ndarray
        The fitted mixture (in units of ``scale_``).
    n_iter_, converged_ : int/bool or ndarray

    Examples
    --------
    >>> import numpy as np, outprob
    >>> x = np.r_[np.linspace(0.01, 3, 200) ** 2 / 3, np.full(20, 8.0) + np.linspace(0, 1, 20)]
    >>> p = outprob.MixtureScaler().fit_transform(x)
    >>> bool(p[-1] > 0.5 > p[0])
    True
    """

    _FITTED = {
        "scale_": float,
        "alpha_": float,
        "mu_": float,
        "sigma_": float,
        "lambda_": float,
        "n_iter_": int,
        "converged_": bool,
    }
    _PAIR = ("mu_", "sigma_")
    _PARAMS = ("scale_", "alpha_", "mu_", "sigma_", "lambda_")
    _KIND = "mixture"

    def __init__(
        self,
        *,
        maxiter: int = 100,
        tol: float = 1e-8,
        nan_policy: str = "omit",
        higher_is_outlier: bool = True,
        threads: Optional[int] = None,
    ) -> None:
        self.maxiter = maxiter
        self.tol = tol
        self.nan_policy = nan_policy
        self.higher_is_outlier = higher_is_outlier
        self.threads = threads

    def _check_params(self) -> None:
        super()._check_params()
        check_int(self.maxiter, "maxiter", 1)
        check_positive(self.tol, "tol")

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True  # the exponential's support
        return tags

    def _fit_column(self, x: np.ndarray, column: Optional[int]) -> Tuple[Dict[str, Any], Notes]:
        f = _core.fit_mixture(
            x, nan_policy=self.nan_policy, negate=not self.higher_is_outlier,
            maxiter=int(self.maxiter), tol=float(self.tol), threads=check_threads(self.threads),
        )
        n_iter, converged, degenerate = f.n_iter, f.converged, f.degenerate
        where = column_label(column)
        notes: Notes = []
        if degenerate and f.alpha == 0.0 and n_iter == 0:
            notes.append((ZeroScaleWarning, (
                f"the scores{where} are constant: no outlier component, every score maps to 0"
            )))
        elif degenerate:
            notes.append((ConvergenceWarning, (
                f"the mixture EM{where} reached a degenerate state (the outlier component "
                "lost its weight); using the last regular iterate"
            )))
        elif not converged:
            notes.append((ConvergenceWarning, (
                f"the mixture EM{where} did not converge within maxiter={self.maxiter} "
                f"iterations (tol={self.tol}); using the last iterate"
            )))
        fit = {"scale_": f.scale, "alpha_": f.alpha, "mu_": f.mu, "sigma_": f.sigma,
               "lambda_": f.lambda_, "n_iter_": n_iter, "converged_": converged}  # fmt: skip
        return fit, notes

    def _check_pair(self, first: List[float], second: List[float]) -> None:
        pass  # the core checks every parameter (ParametricScaler._restore)

    @property
    def scale_(self) -> Floats:
        """Mean of the fitted scores: the unit of the model (per column)."""
        return self._fitted("scale_")  # type: ignore[no-any-return]

    @property
    def alpha_(self) -> Floats:
        """Weight of the outlier component (per column)."""
        return self._fitted("alpha_")  # type: ignore[no-any-return]

    @property
    def mu_(self) -> Floats:
        """Mean of the outlier Gaussian, in units of ``scale_``."""
        return self._fitted("mu_")  # type: ignore[no-any-return]

    @property
    def sigma_(self) -> Floats:
        """Standard deviation of the outlier Gaussian, in units of ``scale_``."""
        return self._fitted("sigma_")  # type: ignore[no-any-return]

    @property
    def lambda_(self) -> Floats:
        """Rate of the inlier exponential, per unit of ``scale_``."""
        return self._fitted("lambda_")  # type: ignore[no-any-return]

    @property
    def n_iter_(self) -> Union[int, npt.NDArray[np.int_]]:
        """EM iterations run (per column)."""
        return self._fitted("n_iter_")  # type: ignore[no-any-return]

    @property
    def converged_(self) -> Union[bool, npt.NDArray[np.bool_]]:
        """Whether the EM converged (per column)."""
        return self._fitted("converged_")  # type: ignore[no-any-return]
