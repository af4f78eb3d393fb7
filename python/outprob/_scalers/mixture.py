"""Mixture-model scaling (Gao & Tan, ICDM 2006; contract §10): ``"mixture"``."""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from .._common.public import public
from .. import _core
from .base import Notes, ScalerBase, column_label
from .._common.exceptions import ConvergenceWarning, ZeroScaleWarning
from .fitted_attributes import Fitted, Bools, Floats, Ints
from .._common.validation import MAX_COUNT, check_int, check_positive, check_threads



@public("outprob")
class MixtureScaler(ScalerBase):
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
    :math:`|\Delta\mu| \le tol\cdot\max(\sigma, |\mu|)`,
    :math:`|\Delta\sigma| \le tol\cdot\sigma`,
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

    _KIND = "mixture"
    _MAP = {"scale": "scale_", "alpha": "alpha_", "mu": "mu_", "sigma": "sigma_", "lambda": "lambda_"}
    _PAIR = ("mu_", "sigma_")

    scale_ = Fitted[Floats](
        float, "Mean of the fitted scores: the unit of the model (per column)."
    )
    alpha_ = Fitted[Floats](float, "Weight of the outlier component (per column).")
    mu_ = Fitted[Floats](float, "Mean of the outlier Gaussian, in units of ``scale_``.")
    sigma_ = Fitted[Floats](
        float, "Standard deviation of the outlier Gaussian, in units of ``scale_``."
    )
    lambda_ = Fitted[Floats](float, "Rate of the inlier exponential, per unit of ``scale_``.")
    n_iter_ = Fitted[Ints](int, "EM iterations run (per column).")
    converged_ = Fitted[Bools](bool, "Whether the EM converged (per column).")

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
        check_int(self.maxiter, "maxiter", 1, MAX_COUNT)
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
                f"the mixture EM{where} reached a degenerate state (one component "
                "lost all its weight); using the last regular iterate"
            )))
        elif not converged:
            notes.append((ConvergenceWarning, (
                f"the mixture EM{where} did not converge within maxiter={self.maxiter} "
                f"iterations (tol={self.tol}); using the last iterate"
            )))
        fit = {"scale_": f.scale, "alpha_": f.alpha, "mu_": f.mu, "sigma_": f.sigma,
               "lambda_": f.lambda_, "n_iter_": n_iter, "converged_": converged}  # fmt: skip
        return fit, notes
