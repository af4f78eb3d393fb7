"""Scalers: fitted maps from outlier scores to outlier probabilities.

contract §4 (the maps), §5 (the input contract), §7 (the API). The
scikit-learn machinery they share (fitting column by column, publishing the
fitted state, output containers, serialisation, pickling) is
:class:`outprob._base.ScalerBase`.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Dict, List, Literal, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import _partial
from ._auto_trim import FALLBACK as FALLBACK_TRIM
from ._auto_trim import auto_trim
from ._base import Notes, ScalerBase, column_label
from ._persist import State
from . import _core
from ._gamma import GammaScaler
from ._exceptions import ConvergenceWarning, ZeroScaleWarning
from ._input import (
    MAX_ITER,
    check_fraction,
    check_int,
    check_out,
    check_positive,
    check_threads,
    estimator_spec,
)
from .streaming import DEFAULT_K, StreamingResult

Floats = Union[float, npt.NDArray[np.float64]]
Intervals = Union[Tuple[float, float], npt.NDArray[np.float64]]


def _refit_every(window: Optional[int], refit_every: Optional[int]) -> Optional[int]:
    """A window refits at every partial_fit unless told otherwise."""
    if window is None:
        return refit_every
    return 1 if refit_every is None else refit_every


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
    trim : float or "auto", default 0.1
        Fraction of the largest scores dropped by ``"trimmed_mean"`` and of
        the largest squared deviations dropped by ``"trimmed_std"``.
        ``"auto"`` chooses it per column from the scores, without labels
        (contract §10): the fraction of 0, 0.01, …, 0.30 whose retained
        scores are straightest on a normal Q–Q plot (largest Shapiro–Francia
        correlation, read as a complete sample); the choice is ``trim_``.
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
    k : int, default 800
        Size of the KLL quantile sketch behind :meth:`partial_fit` for
        order statistics and M-estimates (rank error ε(800) = 0.345 %;
        memory ≈ 3k scores per column).
    window : int, optional
        Fit exactly on the newest ``window`` scores: :meth:`partial_fit`
        keeps them in a ring buffer (``fit(X)`` starts it afresh with X).
    refit_every : int, optional
        With ``window``: refit after this many new scores (default: at every
        ``partial_fit``); :meth:`refit` refits at once.
    pretransform : {None, "sqrt", "minus_log"}, default None
        A map y = f(s) of the raw scores, applied before fitting and before
        every transform (ELKI's Sqrt/MinusLog standard-deviation scalings);
        μ, σ and ``higher_is_outlier`` then refer to y. ``"sqrt"``:
        y = √max(0, s − min) with min the smallest fitted score
        (``pre_min_``); new scores below it give y = 0. ``"minus_log"``:
        y = −ln s, for scores where *small* values are strange (e.g. a
        probability of being normal); fitting needs s > 0 (else
        ``ValueError``), and at transform s <= 0 gives y = +inf (p = 1).
    fixed_center : float, optional
        Fix μ to this value (in y units) and measure ``"std"`` and
        ``"nmad"`` about it: σ = √(Σ(y − c)²/(N − ddof)) (ELKI's
        StandardDeviationScaling with a fixed mean, ddof = 0 there) and
        1.4826·median|y − c|. ``"niqr"`` does not depend on a center;
        ``"trimmed_std"`` is about the center anyway. Only with the default
        ``center="mean"`` (``ValueError`` otherwise).
    lam : float, default 1.0
        ELKI's λ: p = max(0, erf((y − μ)/(λσ√2))); ``scale_`` stays σ.

    Attributes
    ----------
    center_, scale_ : float or ndarray of shape (k,)
        Fitted μ and σ (per column for 2-D scores).
    pre_min_ : float or ndarray of shape (k,)
        Only with ``pretransform="sqrt"``: the smallest fitted score.
    scale_used_ : str or ndarray of shape (k,)
        The scale estimator that produced ``scale_``: ``scale`` itself or
        its fallback.
    n_iter_, converged_ : int/bool or ndarray of shape (k,)
        Only for M-estimates: outer iterations and convergence.
    n_samples_seen_ : int or ndarray of shape (k,)
        After :meth:`partial_fit`: the scores fitted so far (NaN excluded).
    rank_error_ : float or ndarray of shape (k,)
        After :meth:`partial_fit`: the sketch's normalized rank error ε
        (0 when the fit is exact).
    center_interval_, scale_interval_ : tuple or ndarray of shape (k, 2)
        After :meth:`partial_fit` (not for M-estimates): the exact μ and σ
        of all scores seen lie in these intervals (with the sketch's
        confidence, 99 %; degenerate when exact).
    probability_error_ : float or ndarray of shape (k,)
        After :meth:`partial_fit` (not for M-estimates): bound on the
        largest |p̂ − p| over all scores the intervals allow.
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
        "pre_min_": float,
        "trim_": float,
    }
    _PAIR = ("center_", "scale_")
    _KIND = "gaussian"

    # The parameters (set by __init__ through __dict__).
    center: Any
    scale: Any
    trim: Union[float, Literal["auto"]]
    ddof: int
    maxiter: int
    tol: float
    k: int
    window: Optional[int]
    refit_every: Optional[int]
    pretransform: Optional[str]
    fixed_center: Optional[float]
    lam: float
    _CAN_STREAM = True
    _STREAM_FITTED = {
        "n_samples_seen_": int,
        "rank_error_": float,
        "center_interval_": "interval",
        "scale_interval_": "interval",
        "probability_error_": float,
    }
    #: Parameters newer than outprob 0.1.0, with the value that reproduces
    #: 0.1.0's behaviour (for loading its pickles).
    _NEW_PARAMS = {"pretransform": None, "fixed_center": None, "lam": 1.0}

    def __init__(
        self,
        center: Any = "mean",
        scale: Any = "std",
        *,
        trim: Union[float, Literal["auto"]] = 0.1,
        ddof: int = 0,
        maxiter: int = 30,
        tol: float = 1e-8,
        nan_policy: str = "omit",
        higher_is_outlier: bool = True,
        threads: Optional[int] = None,
        k: int = DEFAULT_K,
        window: Optional[int] = None,
        refit_every: Optional[int] = None,
        pretransform: Optional[str] = None,
        fixed_center: Optional[float] = None,
        lam: float = 1.0,
    ) -> None:
        # The parameters as they are, as scikit-learn wants, stored without
        # ScalerBase.__setattr__ (nothing is cached yet): a scaler is often
        # made per call, and 15 Python-level assignments cost ~3 µs.
        self.__dict__.update(
            center=center, scale=scale, trim=trim, ddof=ddof, maxiter=maxiter, tol=tol,
            nan_policy=nan_policy, higher_is_outlier=higher_is_outlier, threads=threads, k=k,
            window=window, refit_every=refit_every, pretransform=pretransform,
            fixed_center=fixed_center, lam=lam,
        )

    def _check_params(self) -> None:
        super()._check_params()
        estimator_spec(self.center, "center")
        estimator_spec(self.scale, "scale")
        if isinstance(self.trim, str):
            if self.trim != "auto":
                raise ValueError(f"trim must be a number in [0, 1) or 'auto', got {self.trim!r}")
            if self.pretransform is not None:
                raise ValueError("trim='auto' reads the raw scores; it does not combine with a pretransform")
        else:
            check_fraction(self.trim, "trim")
        check_int(self.ddof, "ddof", 0)
        check_int(self.maxiter, "maxiter", 1, MAX_ITER)
        check_positive(self.tol, "tol")
        check_int(self.k, "k", 8)
        if self.pretransform not in (None, "sqrt", "minus_log"):
            raise ValueError(
                f"pretransform must be None, 'sqrt' or 'minus_log', got {self.pretransform!r}"
            )
        if self.fixed_center is not None:
            c = self.fixed_center
            if isinstance(c, (bool, np.bool_)) or not isinstance(c, (int, float, np.number)):
                raise TypeError(f"fixed_center must be None or a finite number, got {c!r}")
            if not np.isfinite(float(c)):
                raise ValueError(f"fixed_center must be None or a finite number, got {c!r}")
            if self.center != "mean":
                raise ValueError(
                    "fixed_center fixes μ itself; leave center at its default 'mean', "
                    f"got center={self.center!r}"
                )
        check_positive(self.lam, "lam")

    def _options(self) -> bool:
        """Whether the fit needs the options' path (pretransform or fixed center)."""
        return self.pretransform is not None or self.fixed_center is not None

    def _trim_for(self, x: np.ndarray) -> Tuple[float, bool]:
        """The trim fraction of this column, and whether it was chosen
        (``trim="auto"`` with a trimmed estimator, contract §10)."""
        if not isinstance(self.trim, str):
            return float(self.trim), False
        if "trimmed_mean" not in (self.center,) and "trimmed_std" not in (self.scale,):
            return FALLBACK_TRIM, False
        oriented = x[~np.isnan(x)]
        return auto_trim(oriented if self.higher_is_outlier else -oriented), True

    def _fit_column(self, x: np.ndarray, column: Optional[int]) -> Tuple[Dict[str, Any], Notes]:
        trim, chosen = self._trim_for(x)
        fit = _core.fit_gaussian(x, spec=self._spec(trim), threads=check_threads(self.threads))
        return self._fit_attributes(fit, trim if chosen else None, column)

    def _fit_plan(self) -> Any:
        self._check_params()
        if (
            self.window is not None or self._options() or isinstance(self.trim, str)
            or not self._plain_map()
        ):
            return False
        return partial(
            _core.fit_transform_gaussian, spec=self._spec(float(self.trim)),
            threads=check_threads(self.threads),
        )

    def _spec(self, trim: float) -> _core.GaussianSpec:
        """The core's specification of this scaler's fit (trim fraction
        ``trim``)."""
        return _core.GaussianSpec(
            center=estimator_spec(self.center, "center"),
            scale=estimator_spec(self.scale, "scale"),
            trim=trim,
            ddof=int(self.ddof),
            maxiter=int(self.maxiter),
            tol=float(self.tol),
            nan_policy=self.nan_policy,
            negate=not self.higher_is_outlier,
            pretransform=self.pretransform,
            fixed_center=None if self.fixed_center is None else float(self.fixed_center),
        )

    def _planned_attributes(self, fit: Any) -> Tuple[Dict[str, Any], Notes]:
        if fit.m_estimates or fit.scale == 0.0 or fit.scale_used != self.scale:
            return self._fit_attributes(fit, None, None)
        # No iteration ran and the chosen scale was used: nothing to warn of.
        return {"center_": fit.center, "scale_": fit.scale, "scale_used_": fit.scale_used}, []

    def _fit_attributes(
        self, fit: Any, chosen_trim: Optional[float], column: Optional[int]
    ) -> Tuple[Dict[str, Any], Notes]:
        """One column's fitted attributes and warnings from the core's fit."""
        where = column_label(column)
        notes: Notes = []
        for m in fit.m_estimates:
            if m.start not in ("nmad", "constant"):
                notes.append((ZeroScaleWarning, (
                    f"the nMAD{where} is zero (more than half of the scores tie); "
                    f"Huber's proposal 2 ({m.norm}) started from the {m.start} instead"
                )))
            if not m.converged:
                notes.append((ConvergenceWarning, (
                    f"Huber's proposal 2 ({m.norm}){where} did not converge: stopped after "
                    f"{m.n_iter} of at most maxiter={self.maxiter} iterations (tol={self.tol}); "
                    "using the last iterate"
                )))
        notes += self._scale_notes(fit.center, fit.scale, fit.scale_used, where)
        attributes: Dict[str, Any] = {
            "center_": fit.center, "scale_": fit.scale, "scale_used_": fit.scale_used
        }
        if self.pretransform == "sqrt":
            attributes["pre_min_"] = fit.pre_min
        if chosen_trim is not None:
            attributes["trim_"] = chosen_trim
        if fit.m_estimates:
            attributes["n_iter_"] = max(m.n_iter for m in fit.m_estimates)
            attributes["converged_"] = all(m.converged for m in fit.m_estimates)
        return attributes, notes

    def _scale_notes(self, center: float, scale: float, scale_used: str, where: str) -> Notes:
        """The warnings of the §2 fallback chain."""
        chosen = self.scale if isinstance(self.scale, str) else "value"
        if scale == 0.0:
            return [(ZeroScaleWarning, (
                f"every scale estimate{where} is zero: the scores are constant "
                f"({center!r}); scores at or below it map to 0, higher ones to 1"
            ))]
        if scale_used != chosen:
            return [(ZeroScaleWarning, (
                f"scale {chosen!r}{where} is zero (common when many scores tie); "
                f"fell back to {scale_used!r}"
            ))]
        return []

    #: The parameters partial_fit implements (others must keep their defaults).
    _STREAMABLE = ("center", "scale", "trim", "ddof", "maxiter", "tol", "nan_policy",
                   "higher_is_outlier", "threads", "k", "window", "refit_every")

    def _stream_params(self) -> Dict[str, Any]:
        self._check_streamable(self._STREAMABLE)
        if isinstance(self.trim, str):
            raise TypeError(
                "trim='auto' chooses the trim from all scores at once: use fit(), "
                "or a fixed trim with partial_fit"
            )
        return dict(
            center=estimator_spec(self.center, "center"),
            scale=estimator_spec(self.scale, "scale"),
            trim=self.trim, ddof=self.ddof, maxiter=self.maxiter, tol=self.tol,
            nan_policy=self.nan_policy, higher_is_outlier=bool(self.higher_is_outlier),
            k=self.k, window=self.window,
            refit_every=_refit_every(self.window, self.refit_every),
        )

    def _stream_column(
        self, result: StreamingResult, column: Optional[int]
    ) -> Tuple[Dict[str, Any], Notes]:
        r = result
        fit: Dict[str, Any] = {"center_": r.center, "scale_": r.scale, "scale_used_": r.scale_used}
        if r.n_iter is not None:
            fit["n_iter_"], fit["converged_"] = r.n_iter, r.converged
        fit.update(_partial.bounds(r, "center", "scale"))
        where = column_label(column)
        notes = self._scale_notes(r.center, r.scale, r.scale_used, where)
        if r.converged is False:
            notes.append((ConvergenceWarning, (
                f"Huber's proposal 2{where} did not converge within maxiter={self.maxiter} "
                f"iterations (tol={self.tol}); using the last iterate"
            )))
        return fit, notes

    def _check_pair(self, first: List[float], second: List[float]) -> None:
        if any(s < 0 for s in second):
            raise ValueError("scale_ must be non-negative")

    def _plain_map(self) -> bool:
        return self.pretransform is None and float(self.lam) == 1.0

    def _apply(self, state: State, x: np.ndarray, out: Optional[np.ndarray]) -> Any:
        lam = float(self.lam)
        if self._plain_map():
            return super()._apply(state, x, out)
        if out is None:
            out = np.empty_like(x)
        else:
            check_out(out, x)
            if np.shares_memory(out, x):
                x = x.copy()
        scales = [lam * s for s in state.second]
        threads = check_threads(self.threads)
        if self.pretransform is None:
            _core.transform(
                x, out, scaling="gaussian", first=state.first, second=scales,
                negate=state.negate, threads=threads,
            )
        else:
            n = len(state.first)
            mins = state.attributes.get("pre_min_", np.nan)
            pre_mins = [float(v) for v in np.broadcast_to(np.asarray(mins, dtype=float), (n,))]
            _core.gaussian_options_transform(
                x, out, pretransform=self.pretransform, pre_mins=pre_mins, centers=state.first,
                scales=scales, negate=state.negate, threads=threads,
            )
        return out if out.ndim else out[()]

    def __setstate__(self, data: Dict[str, Any]) -> None:
        data = dict(data)
        for name, default in self._NEW_PARAMS.items():  # pickles of 0.1.0 lack them
            data.setdefault(name, default)
        super().__setstate__(data)

    @property
    def pre_min_(self) -> Floats:
        """The smallest fitted score (``pretransform="sqrt"`` only)."""
        return self._fitted("pre_min_")  # type: ignore[no-any-return]

    @property
    def center_(self) -> Floats:
        """Fitted μ (per column for 2-D scores)."""
        return self._fitted("center_")  # type: ignore[no-any-return]

    @property
    def scale_(self) -> Floats:
        """Fitted σ (per column for 2-D scores)."""
        return self._fitted("scale_")  # type: ignore[no-any-return]

    @property
    def trim_(self) -> Floats:
        """The trim fraction chosen by ``trim="auto"`` (per column for 2-D
        scores)."""
        return self._fitted("trim_")  # type: ignore[no-any-return]

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

    @property
    def n_samples_seen_(self) -> Union[int, npt.NDArray[np.int_]]:
        """Scores fitted by :meth:`partial_fit` so far (NaN excluded)."""
        return self._fitted("n_samples_seen_")  # type: ignore[no-any-return]

    @property
    def rank_error_(self) -> Floats:
        """The sketch's normalized rank error ε after :meth:`partial_fit`."""
        return self._fitted("rank_error_")  # type: ignore[no-any-return]

    @property
    def center_interval_(self) -> Intervals:
        """Interval holding the exact μ after a sketch-based :meth:`partial_fit`."""
        return self._fitted("center_interval_")  # type: ignore[no-any-return]

    @property
    def scale_interval_(self) -> Intervals:
        """Interval holding the exact σ after a sketch-based :meth:`partial_fit`."""
        return self._fitted("scale_interval_")  # type: ignore[no-any-return]

    @property
    def probability_error_(self) -> Floats:
        """Bound on |p̂ − p| over all scores after :meth:`partial_fit`."""
        return self._fitted("probability_error_")  # type: ignore[no-any-return]


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
        As for :class:`GaussianScaler`; :meth:`partial_fit` keeps min and max
        exactly (no sketch).

    Attributes
    ----------
    min_, max_ : float or ndarray of shape (k,)
        Smallest and largest fitted score (per column).
    n_samples_seen_ : int or ndarray of shape (k,)
        After :meth:`partial_fit`: the scores fitted so far.
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

    # The parameters (set by __init__ through __dict__).
    window: Optional[int]
    refit_every: Optional[int]
    _CAN_STREAM = True

    def __init__(
        self,
        *,
        nan_policy: str = "omit",
        higher_is_outlier: bool = True,
        threads: Optional[int] = None,
        window: Optional[int] = None,
        refit_every: Optional[int] = None,
    ) -> None:
        # As GaussianScaler: stored without ScalerBase.__setattr__.
        self.__dict__.update(
            nan_policy=nan_policy, higher_is_outlier=higher_is_outlier, threads=threads,
            window=window, refit_every=refit_every,
        )

    def _fit_column(self, x: np.ndarray, column: Optional[int]) -> Tuple[Dict[str, Any], Notes]:
        fit = _core.fit_linear(
            x, nan_policy=self.nan_policy, negate=not self.higher_is_outlier,
            threads=check_threads(self.threads),
        )
        return {"min_": fit.min, "max_": fit.max}, []

    def _fit_plan(self) -> Any:
        self._check_params()
        if self.window is not None:
            return False
        return partial(
            _core.fit_transform_linear, nan_policy=self.nan_policy,
            negate=not self.higher_is_outlier, threads=check_threads(self.threads),
        )

    def _planned_attributes(self, fit: Any) -> Tuple[Dict[str, Any], Notes]:
        return {"min_": fit.min, "max_": fit.max}, []

    def _stream_params(self) -> Dict[str, Any]:
        self._check_streamable(("nan_policy", "higher_is_outlier", "threads", "window", "refit_every"))
        return dict(
            scaling="linear", nan_policy=self.nan_policy,
            higher_is_outlier=bool(self.higher_is_outlier), window=self.window,
            refit_every=_refit_every(self.window, self.refit_every),
        )

    def _stream_column(
        self, result: StreamingResult, column: Optional[int]
    ) -> Tuple[Dict[str, Any], Notes]:
        return {"min_": result.center, "max_": result.scale, "n_samples_seen_": result.n}, []

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

    @property
    def n_samples_seen_(self) -> Union[int, npt.NDArray[np.int_]]:
        """Scores fitted by :meth:`partial_fit` so far (NaN excluded)."""
        return self._fitted("n_samples_seen_")  # type: ignore[no-any-return]


def from_dict(data: Dict[str, Any]) -> Union[GaussianScaler, LinearScaler, GammaScaler]:
    """Rebuilds any fitted scaler from its :meth:`~GaussianScaler.to_dict`."""
    kinds: Dict[str, Any] = {
        f"outprob.{c.__name__}": c for c in (GaussianScaler, LinearScaler, GammaScaler)
    }
    fmt = data.get("format") if isinstance(data, dict) else None
    if fmt in _BEYOND:
        # Its declared type stays the paper's two scalers (typed user code
        # relies on it); the scalers of contract §10 rebuild themselves.
        raise ValueError(f"a serialised {fmt[8:]}: rebuild it with {fmt}.from_dict(data)")
    if fmt not in kinds:
        raise ValueError(f"not a serialised outprob scaler: format must be one of {sorted(kinds)}")
    return kinds[fmt].from_dict(data)  # type: ignore[no-any-return]


_BEYOND = {f"outprob.{n}" for n in ("RankScaler", "LogRankScaler", "TopKScaler", "SigmoidScaler", "MixtureScaler")}
