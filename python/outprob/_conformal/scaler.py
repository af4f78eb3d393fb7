"""Conformal p-values as a scaler (contract §11): ``ConformalScaler``.

The fit keeps the sorted calibration scores; a score's p-value is
``(1 + #{sᵢ ≥ s})/(n + 1)`` (Bates, Candès, Lei, Romano, Sesia, Annals of
Statistics 2023), optionally made valid conditionally on the calibration
set (their §3: Simes, DKWM, Monte Carlo); ``transform`` gives ``1 − p`` so
that the scaler is measured and compared as the other scalers are.
``partial_fit`` (a KLL sketch, or an exact window) lives in
:mod:`._conformal_stream`.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from .._common.public import public
from . import calibration_stream as _stream
from . import labelled as _labelled
from . import tails as _tails
from .. import _core
from .._maps import stored_state as _persist
from .._scalers.auto_trim import auto_trim
from .._scalers.base import Notes, ScalerBase
from .._scalers.fitted_attributes import Fitted, Floats, Ints
from .._common.validation import (
    as_float_array,
    check_count,
    check_int,
    check_fraction,
    check_names,
    check_threads,
    feature_names,
    shape_message,
    warn_names,
)
from .._maps.stored_state import State
from . import stored_state as _stored
from .stored_state import SPEC_KEYS
from ..streaming._sketch import DEFAULT_K

CONDITIONAL = (None, "simes", "dkwm", "mc")
TIE_BREAKS = ("classical", "randomized")
#: Stored with the spec when a tail is fitted (absent in older stored maps).
TAIL_KEYS = ("tail", "tail_quantile")


@public("outprob")
class ConformalScaler(ScalerBase):
    r"""Conformal p-values of outlier scores, with a guarantee.

    Fitted on calibration scores s₁…sₙ of inliers, the p-value of a score s
    is

    .. math:: p(s) = \frac{1 + \#\{i : s_i \ge s\}}{n + 1}

    For a new inlier exchangeable with the calibration scores,
    :math:`P(p \le \alpha) \le \alpha` for every α, and the p-values of a
    batch of test points are positively dependent (PRDS), so that
    Benjamini–Hochberg selection (:func:`outprob.select`) controls the false
    discovery rate (Bates et al., Annals of Statistics 2023). ``transform``
    gives :math:`1 - p(s)`, an outlier "probability" the rest of outprob
    measures and compares; :meth:`pvalues` gives p itself.

    Parameters
    ----------
    conditional : {None, "simes", "dkwm", "mc"}, default None
        None: the marginal p-value above. Otherwise a calibration-conditional
        p-value (Bates et al. §3): with probability 1 − ``delta`` over the
        calibration set, :math:`P(p \le \alpha \mid \text{calibration}) \le
        \alpha` for all α at once. ``"simes"``: generalised Simes
        (``simes_k``, default ⌊n/2⌋); ``"dkwm"``: :math:`\min(1, p +
        \sqrt{\ln(2/\delta)/(2n)})`; ``"mc"``: the Monte Carlo boundary
        (``mc_simulations`` draws, seeded with ``seed``; DKWM below 17
        calibration scores). Contract §11.
    delta : float, default 0.05
        The failure probability δ of the conditional p-values.
    simes_k : int, optional
        k of the Simes adjustment (default ⌊n/2⌋), in [1, 2⁵³].
    mc_simulations : int, default 10000
        Simulated calibration sets of the Monte Carlo adjustment, in
        [100, 10⁷] (cost: ``mc_simulations · n`` draws at ``fit``). The
        Simes and Monte Carlo adjustments take at most 2²⁴ calibration
        scores (contract §5).
    tie_break : {"classical", "randomized"}, default "classical"
        ``"randomized"``: :math:`p = (\#\{s_i > s\} + U(1 + \#\{s_i = s\}))
        /(n + 1)` with U uniform, exactly valid for tied scores; U of the
        score at (flat) position j is output j of the SplitMix64 stream
        seeded with ``seed`` (deterministic; pass another seed per batch for
        fresh draws).
    seed : int, default 0
        Seed of the tie-breaking stream and of the Monte Carlo adjustment.
    contamination : float, "auto" or None, default None
        The calibration scores hold outliers: drop the largest ⌊c·n⌋ before
        computing p-values (c a fraction in [0, 1), or ``"auto"``: c chosen
        from the scores by the Q–Q criterion of ``trim="auto"``, contract
        §10). What validity is left is stated in contract §11: trimming
        inliers' scores (detectors rank some outliers below inliers) makes
        the p-values of inliers anti-conservative — measured on the shipped
        datasets, P(p ≤ 0.1 | inlier) = 0.25 with ``"auto"``.
    nan_policy : {"omit", "raise"}, default "omit"
    higher_is_outlier : bool, default True
    threads : int, optional
        As for :class:`~outprob.GaussianScaler`.
    k : int, default 800
        Size of the KLL sketch behind :meth:`partial_fit`; its p-values add
        the sketch's rank-error bound ⌈εn⌉ to the count of calibration
        scores ≥ s, which keeps them conservative (contract §11).
    window : int, optional
        :meth:`partial_fit` keeps the newest ``window`` scores (in
        [1, 2³²]) exactly and computes exact p-values against them.
    tail : {None, "gpd", "gaussian", "gamma"}, default None
        Beyond the ``tail_quantile`` quantile u of the calibration scores,
        p-values from a fitted tail, :math:`p(s) = p_u\,G(s)` with
        :math:`p_u = (1 + m)/(n + 1)`, m the calibration scores above u and
        G the fitted survival beyond u: a generalised Pareto fit to the
        exceedances (``"gpd"``), or the median/nMAD Gaussian or robust gamma
        of all calibration scores (``"gaussian"``, ``"gamma"``). Below u the
        p-values stay conformal, so :math:`P(p \le \alpha) \le \alpha`
        still holds exactly for :math:`\alpha \ge p_u`; below :math:`p_u`
        it rests on the tail model. A tail whose Kolmogorov distance to the
        exceedances exceeds the DKWM bound :math:`\sqrt{\ln(2/\delta)/(2m)}`
        is rejected and the p-values are the conformal ones (``tail_``
        says which). Needs ``fit`` (not ``partial_fit``) and
        ``conditional=None``; contract §11.
    tail_quantile : float, default 0.9
        The quantile of the calibration scores above which the tail is used.

    Attributes
    ----------
    sorted_ : ndarray, or list of ndarray (one per column)
        The calibration scores used (oriented, sorted ascending, after the
        contamination trim); absent after a sketch ``partial_fit``.
    n_calibration_ : int or ndarray
        n, the number of calibration scores the p-values count against.
    trimmed_ : int or ndarray
        Calibration scores dropped as contamination.
    contamination_ : float or ndarray
        The contamination fraction used (0 without ``contamination``).
    mc_correction_ : float or ndarray
        Only with ``conditional="mc"`` and n ≥ 17: the boundary's
        correction γ.
    n_samples_seen_, rank_error_ : int/float or ndarray
        After :meth:`partial_fit`: the scores seen and the sketch's ε (0
        when exact).

    Examples
    --------
    >>> import outprob
    >>> cal = [0.1, 0.4, 0.2, 0.3, 0.5, 0.25, 0.35, 0.15, 0.45]
    >>> s = outprob.ConformalScaler().fit(cal)
    >>> s.pvalues([0.05, 0.3, 0.9])
    array([1. , 0.6, 0.1])
    >>> s.transform([0.05, 0.3, 0.9])
    array([0. , 0.4, 0.9])
    """

    sorted_ = Fitted[Union[npt.NDArray[np.float64], List[npt.NDArray[np.float64]]]](
        float, "The calibration scores used, oriented and sorted (one array per column)."
    )
    n_calibration_ = Fitted[Ints](int, "n, the calibration scores the p-values count against.")
    trimmed_ = Fitted[Ints](int, "Calibration scores dropped as contamination.")
    contamination_ = Fitted[Floats](float, "The contamination fraction used (0 without it).")
    mc_correction_ = Fitted[Floats](float, "The Monte Carlo boundary's correction γ.")
    excluded_ = Fitted[Ints](int, "Calibration rows left out by fit(exclude=...).")
    n_outliers_ = Fitted[Ints](int, "Labelled outliers an integrative fit counts against.")
    total_weight_ = Fitted[Floats](float, "Total calibration weight of a weighted fit.")
    rank_error_ = Fitted[Floats](
        float, "After partial_fit: the sketch's normalized rank error ε (0 when exact).", stream=True
    )
    #: Fitted attributes as to_dict stores them.
    _STORED = ("sorted_", "n_calibration_", "trimmed_", "contamination_", "mc_correction_",
               "n_samples_seen_", "rank_error_")
    _PAIR = ("sorted_", "sorted_")
    _KIND = "conformal"
    _CAN_STREAM = True

    def __init__(
        self,
        *,
        conditional: Optional[str] = None,
        delta: float = 0.05,
        simes_k: Optional[int] = None,
        mc_simulations: int = 10_000,
        tie_break: str = "classical",
        seed: int = 0,
        contamination: Union[None, float, str] = None,
        nan_policy: str = "omit",
        higher_is_outlier: bool = True,
        threads: Optional[int] = None,
        k: int = DEFAULT_K,
        window: Optional[int] = None,
        tail: Optional[str] = None,
        tail_quantile: float = 0.9,
    ) -> None:
        self.conditional = conditional
        self.delta = delta
        self.simes_k = simes_k
        self.mc_simulations = mc_simulations
        self.tie_break = tie_break
        self.seed = seed
        self.contamination = contamination
        self.nan_policy = nan_policy
        self.higher_is_outlier = higher_is_outlier
        self.threads = threads
        self.k = k
        self.window = window
        self.tail = tail
        self.tail_quantile = tail_quantile

    # -- parameters ------------------------------------------------------------
    def _check_params(self) -> None:
        super()._check_params()
        if self.conditional not in CONDITIONAL:
            raise ValueError(
                f"conditional must be None, 'simes', 'dkwm' or 'mc', got {self.conditional!r}"
            )
        delta = self.delta
        if isinstance(delta, bool) or not isinstance(delta, (int, float, np.floating)):
            raise TypeError(f"delta must be a number in (0, 1), got {delta!r}")
        if not 0.0 < float(delta) < 1.0:
            raise ValueError(f"delta must be in (0, 1), got {delta!r}")
        # Every size and count against the core's bounds (contract §5),
        # simes_k even when no adjustment reads it.
        if self.simes_k is not None:
            check_count(self.simes_k, "simes_k")
        check_count(self.mc_simulations, "mc_simulations")
        if self.tie_break not in TIE_BREAKS:
            raise ValueError(
                f"tie_break must be 'classical' or 'randomized', got {self.tie_break!r}"
            )
        check_count(self.seed, "seed")
        c = self.contamination
        if isinstance(c, str):
            if c != "auto":
                raise ValueError(f"contamination must be a fraction in [0, 1), 'auto' or None, got {c!r}")
        elif c is not None:
            check_fraction(c, "contamination")
        check_count(self.k, "sketch_k")
        if self.window is not None:
            check_count(self.window, "window")
        _tails.check_tail_params(self.tail, self.tail_quantile, self.conditional)

    def _spec_params(self) -> Dict[str, Any]:
        return {
            "conditional": self.conditional,
            "delta": float(self.delta),
            "simes_k": None if self.simes_k is None else int(self.simes_k),
            "mc_simulations": int(self.mc_simulations),
            "tie_break": self.tie_break,
            "seed": int(self.seed),
            **({} if self.tail is None else {"tail": self.tail, "tail_quantile": float(self.tail_quantile)}),
        }

    # -- fitting ---------------------------------------------------------------
    def fit(
        self,
        X: npt.ArrayLike,
        y: Any = None,
        *,
        exclude: Optional[npt.ArrayLike] = None,
        outlier_scores: Optional[npt.ArrayLike] = None,
        weights: Optional[npt.ArrayLike] = None,
    ) -> "ConformalScaler":
        r"""Fits the calibration scores (see the class docstring); with
        ``window`` it is a fresh :meth:`partial_fit`.

        Parameters
        ----------
        X : array_like
            Calibration scores of inliers: 1-D, (n, k) columns, or with
            ``outlier_scores`` (n, 2) pairs.
        exclude : sequence of int, optional
            Rows of ``X`` to leave out: calibration points known to be
            outliers — Label-Trim's annotated outliers
            (:func:`outprob.label_trim_candidates`) or any others. Contract
            §13 states the guarantee that remains.
        outlier_scores : array_like, optional
            Scores of labelled outliers: the p-values become the integrative
            conformal p-values of Liang, Sesia & Sun (contract §13). With
            (n, 2) pairs (a, b) — a from a detector trained on inliers, b
            from a model trained on other labelled outliers (higher = more
            like them) — they gain power; with 1-D scores they equal the
            plain p-values.
        weights : array_like, optional
            One weight per calibration score, ``w(x) = dP_test/dP_cal(x)``
            under covariate shift: the p-values become weighted conformal
            p-values and :meth:`pvalues` needs the test scores' weights
            (contract §13).
        """
        self.__dict__.pop("_calibration_stream", None)
        labelled = outlier_scores is not None or weights is not None
        if self.window is not None:
            if exclude is not None or labelled:
                raise ValueError("exclude, outlier_scores and weights are fit options; "
                                 "window fits stream with partial_fit")
            return self.partial_fit(X)
        x, excluded = _labelled.drop_rows(as_float_array(X), exclude)
        names = None if type(X) is np.ndarray else feature_names(X)
        if not labelled:
            state = self._fit_state(x, names)
            state.attributes["excluded_"] = excluded
            self._state = state
            return self
        self._check_params()
        if outlier_scores is not None and weights is not None:
            raise ValueError("pass outlier_scores or weights, not both")
        if self.conditional is not None or self.contamination is not None or self.tail is not None:
            raise ValueError("weighted and integrative p-values are marginal: "
                             "conditional, contamination and tail must be None")
        if outlier_scores is not None:
            if self.tie_break != "classical":
                raise ValueError("integrative p-values compare exact ratios: tie_break must be 'classical'")
            self._state = _labelled.fit_integrative(self, x, outlier_scores, excluded, self._spec_params())
        else:
            self._state = _labelled.fit_weighted(self, x, weights, excluded, self._spec_params())
        return self

    def fit_transform(self, X: npt.ArrayLike, y: Any = None, out: Optional[np.ndarray] = None) -> Any:
        """``fit(X).transform(X)``."""
        return self.fit(X).transform(X, out=out)

    def _fit_state(self, x: np.ndarray, names: Optional[np.ndarray]) -> State:
        self._check_params()
        if x.ndim not in (1, 2) or (x.ndim == 2 and x.shape[1] == 0):
            return super()._fit_state(x, names)  # its messages for bad shapes
        columns = [x] if x.ndim == 1 else list(np.ascontiguousarray(x.T))
        threads = check_threads(self.threads)
        negate = not self.higher_is_outlier
        fits = [
            self.calibrate(_core.fit_rank(c, nan_policy=self.nan_policy, negate=negate, threads=threads)) for c in columns
        ]
        return self._state_from(fits, x.ndim, names, self._spec_params(), negate)

    def _fit_column(self, x: np.ndarray, column: Optional[int]) -> Tuple[Dict[str, Any], Notes]:
        negate = not self.higher_is_outlier
        sorted_ = _core.fit_rank(x, nan_policy=self.nan_policy, negate=negate, threads=check_threads(self.threads))
        return self.calibrate(sorted_), []

    def calibrate(self, sorted_: np.ndarray) -> Dict[str, Any]:
        """The fitted attributes of one column from its sorted, oriented
        scores: the contamination trim and the Monte Carlo correction."""
        n = sorted_.size
        c = self.contamination
        fraction = 0.0 if c is None else (auto_trim(sorted_) if c == "auto" else float(c))
        trimmed = int(math.floor(fraction * n))
        kept = np.ascontiguousarray(sorted_[: n - trimmed])
        fit: Dict[str, Any] = {
            "sorted_": kept,
            "n_calibration_": int(kept.size),
            "trimmed_": trimmed,
            "contamination_": fraction,
        }
        fit.update(self._mc_fields(int(kept.size)))
        return fit

    def _mc_fields(self, n: int) -> Dict[str, Any]:
        """``mc_correction_`` for n calibration scores (``conditional="mc"``,
        n ≥ 17; smaller sets use DKWM)."""
        if self.conditional != "mc" or n < 17:
            return {}
        return {"mc_correction_": _core.conformal_mc_correction(
            n, delta=float(self.delta), simulations=int(self.mc_simulations), seed=int(self.seed),
            threads=check_threads(self.threads),
        )}

    def _state_from(
        self,
        fits: List[Dict[str, Any]],
        ndim: int,
        names: Optional[np.ndarray],
        spec: Dict[str, Any],
        negate: bool,
        sketches: Optional[List[Any]] = None,
    ) -> State:
        """The state to publish: fitted attributes per column and the
        extension's calibration of each column (``State.transformer``)."""
        core_spec = _spec(spec, fits)
        if sketches is None:
            for f in fits:
                f["sorted_"].setflags(write=False)
            calibrations = [
                _core.ConformalCalibration(f["sorted_"], spec=s, negate=negate) for f, s in zip(fits, core_spec)
            ]
        else:
            if spec.get("tail") is not None:
                raise ValueError("tail needs the calibration scores themselves: use fit, not "
                                 "partial_fit (contract §11)")
            calibrations = [
                _core.ConformalCalibration.from_sketch(sk, spec=s, negate=negate)
                for sk, s in zip(sketches, core_spec)
            ]
        attributes: Dict[str, Any] = {}
        kinds = {"n_samples_seen_": int, **{n: self._KINDS[n] for n in self._STORED if n in self._KINDS}}
        for name in self._STORED:
            values = [f[name] for f in fits if name in f]
            if len(values) != len(fits):
                continue
            if name == "sorted_":
                attributes[name] = values[0] if ndim == 1 else values
            else:
                attributes[name] = values[0] if ndim == 1 else np.array(values, dtype=kinds[name])
        attributes["spec"] = dict(spec)
        fitted = ConformalMap(calibrations, ndim, tails=_tails.fit_tails(spec, fits))
        return State(attributes, ndim, len(fits) if ndim == 2 else 1, names, negate, fitted)

    # -- p-values ----------------------------------------------------------------
    def pvalues(
        self, X: npt.ArrayLike, out: Optional[np.ndarray] = None, *, weights: Optional[npt.ArrayLike] = None
    ) -> Any:
        """The p-values of scores ``X`` (NaN stays NaN; −inf → 1, +inf →
        1/(n + 1)): the shapes, dtypes, names and containers of
        :meth:`transform`, whose result is ``1 − pvalues(X)``. After a fit
        with ``weights``, ``weights`` gives the test scores' weights (one
        per score, required)."""
        state = self._fitted_state()
        if isinstance(state.map, _labelled.WeightedMap):
            if weights is None:
                raise ValueError("a weighted fit needs the test scores' weights: pvalues(X, weights=...)")
            x = as_float_array(X)
            p = state.map.complement(False).pvalues(x, weights, check_threads(self.threads))
            if out is not None:
                out[...] = p
                return out
            return p if x.ndim else p[()]
        if weights is not None:
            raise ValueError("weights are for a scaler fitted with weights")
        x = as_float_array(X)
        if type(X) is np.ndarray:
            if state.names is not None:
                warn_names(self, None, 2)
        elif state.ndim == 2:
            check_names(self, feature_names(X), state.names)
        if state.ndim == 2 and (x.ndim != 2 or x.shape[1] != state.n_features):
            raise ValueError(shape_message(type(self).__name__, x, state.n_features))
        return self._output(self._map_into(state.map.complement(False), x, out), X, state)

    @property
    def tail_(self) -> Any:
        """With ``tail``: the fitted tail of each column as a dict
        (``accepted``, ``reason``, ``threshold`` (oriented),
        ``threshold_pvalue`` p_u, ``exceedances`` m, ``statistic`` (the
        Kolmogorov distance), ``bound`` (DKWM), ``params``); a list of them
        for 2-D scores; None without a tail."""
        state = self._fitted_state()
        tails = getattr(state.map, "tails", None)
        if tails is None:
            return None
        out = [_tails.summary(t) for t in tails]
        return out[0] if state.ndim == 1 else out

    def fpr_upper_bound(
        self, thresholds: npt.ArrayLike, *, delta: Optional[float] = None, method: str = "dkwm"
    ) -> Any:
        r"""A simultaneous upper confidence bound on the false-positive rate
        of flagging the scores at or above each threshold (Bates et al.):
        with probability 1 − δ over the calibration set, for every threshold
        t at once, :math:`P(S \ge t) \le` the bound, S the score of a new
        inlier. It is the calibration-conditional p-value of t (``method``
        ``"dkwm"``, ``"simes"`` or ``"mc"``, contract §11).

        Examples
        --------
        >>> import numpy as np, outprob
        >>> cal = np.random.default_rng(0).normal(size=1000)
        >>> s = outprob.ConformalScaler().fit(cal)
        >>> bound = s.fpr_upper_bound([1.0, 2.0, 3.0])
        >>> bool(np.all(np.diff(bound) <= 0)), bool(bound[1] > np.mean(cal >= 2.0))
        (True, True)
        """
        if method not in ("dkwm", "simes", "mc"):
            raise ValueError(f"method must be 'dkwm', 'simes' or 'mc', got {method!r}")
        state = self._fitted_state()
        params = {n: getattr(self, n) for n in self._get_param_names()}
        params.update(conditional=method, tie_break="classical", contamination=None, window=None, tail=None,
                      delta=self.delta if delta is None else delta)
        band = type(self)(**params)
        band._check_params()
        spec = band._spec_params()
        sketches = _stream.sketches_of(self)
        if sketches is not None:
            fits = [{"n_calibration_": n, **band._mc_fields(n)} for n in (int(sk.info().n) for sk in sketches)]
            band._state = band._state_from(fits, state.ndim, state.names, spec, state.negate, sketches)
        else:
            sorted_ = state.attributes["sorted_"]
            columns = [sorted_] if state.ndim == 1 else list(sorted_)
            fits = []
            for c in columns:
                f = band.calibrate(c)
                fits.append(f)
            band._state = band._state_from(fits, state.ndim, state.names, spec, state.negate)
        return band.pvalues(thresholds)

    # -- incremental fitting ---------------------------------------------------------
    def partial_fit(self, X: npt.ArrayLike, y: Any = None) -> "ConformalScaler":
        """Adds a batch of calibration scores: to a KLL sketch of size ``k``
        (p-values made conservative by the sketch's rank-error bound), or,
        with ``window``, to the exact window of the newest scores (contract
        §11). Each batch obeys contract §5 on its own.

        Examples
        --------
        >>> import numpy as np, outprob
        >>> s = outprob.ConformalScaler()
        >>> for batch in np.array_split(np.arange(100.0), 4):
        ...     _ = s.partial_fit(batch)
        >>> s.n_samples_seen_, float(s.pvalues(98.5))
        (100, 0.019801980198019802)
        """
        _stream.partial_fit(self, X)
        return self

    def merge(self, other: "ConformalScaler") -> "ConformalScaler":
        """Adds the calibration scores another scaler's sketch saw (both
        fitted by :meth:`partial_fit` without ``window``, same parameters)."""
        _stream.merge(self, other)
        return self

    def refit(self) -> "ConformalScaler":
        """Republishes the fit from the streaming state (p-values are always
        current; kept for the scalers' common API)."""
        _stream.republish(self)
        return self

    # -- serialisation --------------------------------------------------------------
    def to_dict(self) -> Dict[str, Any]:
        """A JSON-serialisable description: parameters, the calibration
        scores (or the sketch's DataSketches bytes, base64), the fitted
        options."""
        state = self._fitted_state()
        data = _persist.to_dict(self, state._replace(attributes={}))
        if "_labelled" in state.attributes:
            data["labelled"] = _labelled.stored(state.attributes["_labelled"])
            data["spec"] = dict(state.attributes["spec"])
            return data
        data["fitted"] = _stored.fitted_dict(state.attributes, state.ndim)
        data["spec"] = dict(state.attributes["spec"])
        data["excluded"] = int(state.attributes.get("excluded_", 0))
        stream = _stream.to_dict(self)
        if stream is not None:
            data["stream"] = stream
        return data

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "ConformalScaler":
        """Rebuilds a fitted scaler from :meth:`to_dict` output. The dict is
        untrusted: a value of the wrong kind, or one that contradicts what
        the rest determines (the count, the trim, the Monte Carlo
        correction, a stream's fit), raises ``ValueError`` naming it
        (contract §11)."""
        try:
            obj = cls(**_persist.params_of(cls.__name__, cls._get_param_names(), data))
            obj._check_params()
            obj._state = obj._restore_dict(data)
        except (TypeError, KeyError, AttributeError, IndexError, OverflowError) as exc:
            # A stored value of the wrong type is a corrupt dict too.
            raise ValueError(f"not a valid serialised {cls.__name__}: {exc}") from None
        return obj

    def _restore_dict(self, data: Dict[str, Any]) -> State:
        ndim, fitted, spec = data.get("ndim"), data.get("fitted"), data.get("spec")
        if "labelled" in data:
            if not isinstance(spec, dict):
                raise ValueError("'spec' must be a dict")
            return _labelled.restore(self, data["labelled"], _check_spec(spec, self.mc_simulations))
        if isinstance(ndim, bool) or ndim not in (1, 2):
            raise ValueError(f"ndim must be 1 or 2, got {ndim!r}")
        if not isinstance(fitted, dict) or not isinstance(spec, dict):
            raise ValueError("'fitted' and 'spec' must be dicts")
        spec = _check_spec(spec, self.mc_simulations)
        unknown = set(fitted) - set(self._STORED)
        if unknown:
            raise ValueError(f"unknown fitted attributes: {sorted(unknown)}")
        names = data.get("feature_names_in")
        negate = not self.higher_is_outlier
        stream = data.get("stream")
        fits = _stored.columns(fitted, ndim)
        if names is not None:
            names = np.asarray([str(t) for t in names], dtype=object)
            if ndim != 2 or len(names) != len(fits):
                raise ValueError("feature_names_in must name each of the fitted score columns")
        if stream is not None:
            # The stream determines the whole fit: it is recomputed, and the
            # stored fit must be that one.
            state = _stream.restore(self, stream, len(fits), ndim, names, negate)
            _stored.agree(fitted, spec, state.attributes, ndim)
            return state
        threads = check_threads(self.threads)
        fits = [_stored.column(f, spec, threads) for f in fits]
        state = self._state_from(fits, ndim, names, spec, negate)
        state.attributes["excluded_"] = check_int(data.get("excluded", 0), "excluded", 0)
        return state

    def __getstate__(self) -> Dict[str, Any]:
        data = {k: v for k, v in self.__dict__.items() if k not in ("_state", "_calibration_stream")}
        if self._state is not None:
            data["_conformal"] = self.to_dict()
        data["_outprob_version"] = _persist.outprob_version()
        return data

    def __setstate__(self, data: Dict[str, Any]) -> None:
        data = dict(data)
        saved = data.pop("_conformal", None)
        data.pop("_outprob_version", None)
        self.__dict__.update(data)
        if saved is not None:
            self.__dict__.update(
                (k, v) for k, v in type(self).from_dict(saved).__dict__.items()
                if k in ("_state", "_calibration_stream")
            )

    def _fitted_summary(self, state: State) -> str:
        n = state.attributes.get("n_calibration_", state.attributes.get("n_samples_seen_"))
        shown = n.tolist() if isinstance(n, np.ndarray) else n
        return f"{shown} calibration scores"


def _spec(spec: Dict[str, Any], fits: List[Dict[str, Any]]) -> List[Any]:
    """The extension's spec of each column (the Monte Carlo correction is
    per column)."""
    return [
        _core.ConformalSpec(
            tie_break=spec["tie_break"], seed=spec["seed"], conditional=spec["conditional"],
            delta=spec["delta"], simes_k=spec["simes_k"], mc_correction=f.get("mc_correction_"),
        )
        for f in fits
    ]


def _check_spec(spec: Dict[str, Any], mc_simulations: int) -> Dict[str, Any]:
    """Stored options, checked as parameters are (``mc_simulations``, absent
    from dicts written before it was stored, is the parameter's; ``tail`` and
    ``tail_quantile`` are there only with a tail)."""
    keys = set(spec) - set(TAIL_KEYS)
    tail = set(spec) & set(TAIL_KEYS)
    if (keys != set(SPEC_KEYS) and keys != set(SPEC_KEYS) - {"mc_simulations"}) or (
        tail and tail != set(TAIL_KEYS)
    ):
        raise ValueError(f"'spec' must hold exactly {list(SPEC_KEYS)} (and, with a tail, {list(TAIL_KEYS)})")
    probe = ConformalScaler(**{"mc_simulations": mc_simulations, **spec})
    probe._check_params()
    return probe._spec_params()


class ConformalMap:
    """The fitted map of a :class:`ConformalScaler`: the extension's
    calibration of each column, applied as ``transform`` (``1 − p``) or, by
    :meth:`complement` ``(False)``, as the p-values. Takes what
    ``ScalerBase`` hands a fitted map: ``transform(x, out=None, *,
    threads=0)``, None for an array it cannot map as it is."""

    __slots__ = ("calibrations", "ndim", "complementary", "tails")

    def __init__(self, calibrations: List[Any], ndim: int, complementary: bool = True,
                 tails: Optional[List[Any]] = None) -> None:
        self.calibrations, self.ndim, self.complementary = calibrations, ndim, complementary
        self.tails = tails

    def complement(self, complementary: bool) -> "ConformalMap":
        return ConformalMap(self.calibrations, self.ndim, complementary, self.tails)

    def _map(self, j: int, x: Any, out: Optional[np.ndarray], threads: int) -> Any:
        if self.tails is None:
            return self.calibrations[j].map(x, out, complement=self.complementary, threads=threads)
        return self.tails[j].map(self.calibrations[j], x, out, complement=self.complementary,
                                 threads=threads)

    def transform(self, x: Any, out: Optional[np.ndarray] = None, *, threads: int = 0) -> Any:
        if self.ndim == 1:
            return self._map(0, x, out, threads)
        if type(x) is not np.ndarray or x.ndim != 2 or x.shape[1] != len(self.calibrations):
            return None
        if x.dtype not in (np.float64, np.float32):
            return None
        result = np.empty_like(x) if out is None else out
        for j in range(len(self.calibrations)):
            mapped = self._map(j, np.ascontiguousarray(x[:, j]), None, threads)
            result[:, j] = mapped
        return result
