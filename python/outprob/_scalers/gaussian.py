"""Gaussian scaling (contract §4): the paper's robust statistical scaling
and ELKI's options (contract §10)."""

from __future__ import annotations

import operator
import warnings
from typing import Any, Dict, List, Literal, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from .._common.public import public
from .. import _core
from .auto_trim import FALLBACK as FALLBACK_TRIM
from .auto_trim import auto_trim
from .base import Notes, ScalerBase, _new_tuple, _values, column_label
from .checked_params import cached, found_last
from .._common.exceptions import ConvergenceWarning, ZeroScaleWarning
from .fitted_attributes import Fitted, Bools, Floats, Intervals, Ints, Strs
from .incremental import add_bounds, refit_every
from .._common.fit_warnings import scale_notes, stream_notes
from .._common.validation import (
    check_count,
    check_fraction,
    check_positive,
    check_threads,
    estimator_spec,
)
from .._maps.stored_state import State
from .output import NO_CONFIG, THREAD_CONFIG
from ..streaming._sketch import DEFAULT_K
from ..streaming._state import StreamingResult

#: Class → the fused plan ``cached`` found last and its identity test.
_FUSED_LAST = found_last("fused")


@public("outprob")
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
        largest ``|p̂ − p|`` over all scores the intervals allow.
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

    _KIND = "gaussian"
    _MAP = {"center": "center_", "scale": "scale_"}
    _PAIR = ("center_", "scale_")
    _CAN_STREAM = True

    center_ = Fitted[Floats](float, "Fitted μ (per column for 2-D scores).")
    scale_ = Fitted[Floats](float, "Fitted σ (per column for 2-D scores).")
    scale_used_ = Fitted[Strs](str, "The scale estimator that produced ``scale_``.")
    n_iter_ = Fitted[Ints](int, "Outer iterations of Huber's proposal 2 (M-estimates only).")
    converged_ = Fitted[Bools](bool, "Whether Huber's proposal 2 converged (M-estimates only).")
    pre_min_ = Fitted[Floats](float, "The smallest fitted score (``pretransform=\"sqrt\"`` only).")
    trim_ = Fitted[Floats](
        float, "The trim fraction chosen by ``trim=\"auto\"`` (per column for 2-D scores)."
    )
    rank_error_ = Fitted[Floats](
        float, "The sketch's normalized rank error ε after :meth:`partial_fit`.", stream=True
    )
    center_interval_ = Fitted[Intervals](
        "interval", "Interval holding the exact μ after a sketch-based :meth:`partial_fit`.",
        stream=True,
    )
    scale_interval_ = Fitted[Intervals](
        "interval", "Interval holding the exact σ after a sketch-based :meth:`partial_fit`.",
        stream=True,
    )
    probability_error_ = Fitted[Floats](
        float, "Bound on ``|p̂ − p|`` over all scores after :meth:`partial_fit`.", stream=True
    )

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
        self.center = center
        self.scale = scale
        self.trim = trim
        self.ddof = ddof
        self.maxiter = maxiter
        self.tol = tol
        self.nan_policy = nan_policy
        self.higher_is_outlier = higher_is_outlier
        self.threads = threads
        self.k = k
        self.window = window
        self.refit_every = refit_every
        self.pretransform = pretransform
        self.fixed_center = fixed_center
        self.lam = lam

    def _check_params(self) -> None:
        super()._check_params()
        self._check_window()
        estimator_spec(self.center, "center")
        estimator_spec(self.scale, "scale")
        if isinstance(self.trim, str):
            if self.trim != "auto":
                raise ValueError(f"trim must be a number in [0, 1) or 'auto', got {self.trim!r}")
            if self.pretransform is not None:
                raise ValueError("trim='auto' reads the raw scores; it does not combine with a pretransform")
        else:
            check_fraction(self.trim, "trim")
        check_count(self.ddof, "ddof")
        check_count(self.maxiter, "maxiter")
        check_positive(self.tol, "tol")
        check_count(self.k, "sketch_k")
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

    def _fit_transform_fused(self, X: np.ndarray) -> Any:
        # The plan found last for this class, tried inline (see cached).
        last = _FUSED_LAST.get(type(self))
        try:
            found = last is not None and last[0](self)
        except AttributeError:  # a parameter deleted: cached explains
            found = False
        plan = last[1] if found else cached(self, "fused", self._fused_plan)  # type: ignore[index]
        if plan is None:
            return None
        spec, threads, negate, key = plan
        done = (
            _core.fit_transform_gaussian(X, spec=spec) if threads == 0
            else _core.fit_transform_gaussian(X, spec=spec, threads=threads)
        )
        if done is None:
            return None
        fit, result, fitted = done
        if fit is None:
            # A plain fit (no iteration, σ > 0 from the chosen scale, so
            # nothing to warn of): μ and σ are its map's parameters.
            center, scale = fitted.column(0)
            attributes = {"center_": center, "scale_": scale, "scale_used_": self.scale}
        else:
            attributes, notes = self._fit_attributes(fit, None, None)
            for category, message in notes:
                warnings.warn(message, category, stacklevel=3)
        # _publish_fused inlined: on a small fit the Python frames around
        # the extension's call are the bulk of fit_transform (contract §4's
        # latency path).
        state = _new_tuple(State, (attributes, 1, 1, None, negate, fitted, key))
        self._state = state
        self._stream = None
        if getattr(self, "_sklearn_output_config", None) is None and (
            THREAD_CONFIG.__dict__.get("config", NO_CONFIG).get("transform_output") == "default"
        ):
            return result
        return self._output(result, X, state)

    def _fused_plan(self) -> Optional[Tuple[_core.GaussianSpec, int, bool, Tuple[Any, None]]]:
        """The core's spec and thread count of a fused fit of these
        parameters (checked), the fit's negation and its map's key; None
        where the fit has options the fused call does not take."""
        if (
            self.window is not None or self._options() or isinstance(self.trim, str)
            or self.lam != 1.0
        ):
            return None
        self._check_params()
        return (
            self._spec(float(self.trim)), check_threads(self.threads),
            not self.higher_is_outlier, (self.lam, None),
        )

    def _spec(self, trim: float) -> _core.GaussianSpec:
        """The core's specification of this scaler's fit (trim fraction
        ``trim``), of checked parameters."""
        return _core.GaussianSpec(
            center=self.center,
            scale=self.scale,
            trim=trim,
            ddof=self.ddof,
            maxiter=self.maxiter,
            tol=self.tol,
            nan_policy=self.nan_policy,
            negate=not self.higher_is_outlier,
            pretransform=self.pretransform,
            fixed_center=self.fixed_center,
        )

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
        return scale_notes(self._chosen_scale(), center, scale, scale_used, where)

    def _chosen_scale(self) -> str:
        return self.scale if isinstance(self.scale, str) else "value"

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
            refit_every=refit_every(self.window, self.refit_every),
        )

    def _stream_column(
        self, result: StreamingResult, column: Optional[int]
    ) -> Tuple[Dict[str, Any], Notes]:
        r = result
        center, scale, used = r.center, r.scale, r.scale_used
        fit: Dict[str, Any] = {"center_": center, "scale_": scale, "scale_used_": used}
        if r.n_iter is not None:
            fit["n_iter_"], fit["converged_"] = r.n_iter, r.converged
        add_bounds(fit, r, "center_interval_", "scale_interval_")
        chosen = self.scale if isinstance(self.scale, str) else "value"
        if scale != 0.0 and used == chosen and r.converged is not False:
            return fit, []  # stream_notes has nothing to say
        return fit, stream_notes(r, chosen, self.maxiter, self.tol, column_label(column))

    def _check_pair(self, first: List[float], second: List[float]) -> None:
        if any(s < 0 for s in second):
            raise ValueError("scale_ must be non-negative")

    def _map_state(self, attributes: Dict[str, Any], ndim: int, negate: bool) -> Dict[str, Any]:
        # ELKI's λ scales σ in the map (scale_ stays σ); its pretransform
        # maps the raw scores first, "sqrt" from the fitted minimum.
        lam = float(self.lam)
        scale = _values(attributes["scale_"])
        if lam != 1.0:  # (1.0·σ is σ bit for bit)
            scale = [lam * s for s in scale]
        params = {"center": _values(attributes["center_"]), "scale": scale}
        state = {
            "kind": "gaussian", "negate": negate, "two_d": ndim == 2, "pretransform": None,
            "params": params, "sorted": None,
        }
        if self.pretransform is not None:
            state["pretransform"] = self.pretransform
            if self.pretransform == "sqrt":
                mins = attributes.get("pre_min_", np.nan)
                params["pre_min"] = [float(v) for v in np.broadcast_to(
                    np.asarray(mins, dtype=float), (len(params["center"]),)
                )]
        return state

    def _one_column_map(self, attributes: Dict[str, Any], negate: bool) -> Any:
        if self.pretransform is not None:
            return None
        center, scale = _values(attributes["center_"]), _values(attributes["scale_"])
        if len(center) != 1 or len(scale) != 1:
            return None  # (the state's check explains)
        lam = float(self.lam)
        if lam != 1.0:  # as _map_state scales σ
            scale = [lam * scale[0]]
        return _core.FittedMap.one_column("gaussian", negate, [center[0], scale[0]])

    def _map_key(self) -> Any:
        return (self.lam, self.pretransform)

    _MAP_KEY = staticmethod(operator.attrgetter("lam", "pretransform"))

    def _current_map(self, state: State) -> Any:
        if state.map_key == (self.lam, self.pretransform):
            return state.map
        # λ or the pretransform changed since the fit: the map of the
        # parameters set now (made for this call).
        return _core.FittedMap(self._map_state(state.attributes, state.ndim, state.negate))
