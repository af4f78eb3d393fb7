"""Scalers: fitted maps from outlier scores to outlier probabilities.

contract §4 (the maps), §5 (the input contract), §7 (the API). A scaler is a
plain Python object holding its parameters and fitted numbers, so it pickles
and round-trips through :meth:`to_dict` without the compiled core.
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar, Dict, List, Optional, Tuple, TypeVar

import numpy as np

from . import _core
from ._exceptions import ConvergenceWarning, NotFittedError, ZeroScaleWarning
from ._input import (
    as_float_array,
    check_fraction,
    check_int,
    check_nan_policy,
    check_out,
    check_positive,
    check_threads,
    estimator_spec,
)

FORMAT_VERSION = 1
_S = TypeVar("_S", bound="_Scaler")
Notes = List[Tuple[type, str]]


class _Scaler:
    """Shared machinery: scikit-learn parameter protocol, 1-D/2-D fitting,
    transform with ``out=``, serialisation."""

    #: Constructor parameters, in order.
    _PARAMS: ClassVar[Tuple[str, ...]]
    #: Fitted attributes and their element types, for ``to_dict``.
    _FITTED: ClassVar[Dict[str, type]]

    nan_policy: str
    higher_is_outlier: bool
    threads: Optional[int]

    # -- scikit-learn parameter protocol -----------------------------------
    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        """The constructor parameters, as scikit-learn's ``get_params``."""
        return {p: getattr(self, p) for p in self._PARAMS}

    def set_params(self: _S, **params: Any) -> _S:
        """Sets constructor parameters; returns ``self``."""
        for name, value in params.items():
            if name not in self._PARAMS:
                raise ValueError(
                    f"invalid parameter {name!r} for {type(self).__name__}; "
                    f"valid parameters are {', '.join(self._PARAMS)}"
                )
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        defaults = type(self)().get_params()
        shown = [
            f"{k}={v!r}" for k, v in self.get_params().items() if _differs(v, defaults[k])
        ]
        return f"{type(self).__name__}({', '.join(shown)})"

    # -- fitting and transforming ------------------------------------------
    def fit(self: _S, scores: Any, y: Any = None) -> _S:
        """Fits the scaling to scores.

        Parameters
        ----------
        scores : array_like, shape (n,) or (n, k)
            Outlier scores; a 2-D array holds k independent score columns
            (e.g. k detectors), each fitted on its own. NaN are ignored
            (``nan_policy="omit"``) or refused (``"raise"``); ±inf are
            refused.
        y : ignored
            Present for scikit-learn pipelines.

        Returns
        -------
        self
        """
        self._fit_array(as_float_array(scores))
        return self

    def transform(self, scores: Any, out: Optional[np.ndarray] = None) -> Any:
        """Maps scores to outlier probabilities in [0, 1].

        Parameters
        ----------
        scores : array_like
            Scores of the kind fitted on; a scaler fitted on 1-D scores maps
            arrays of any shape element-wise, one fitted on (n, k) scores
            needs shape (m, k). NaN stays NaN, +inf → 1, −inf → 0.
        out : numpy.ndarray, optional
            Where to write the result: same shape and dtype as the scores
            (float32 for float32 scores, else float64), C-contiguous.

        Returns
        -------
        numpy.ndarray
            The probabilities (``out`` if given); float32 for float32 input.
        """
        return self._transform_array(as_float_array(scores), out)

    def fit_transform(self, scores: Any, y: Any = None, out: Optional[np.ndarray] = None) -> Any:
        """``fit(scores).transform(scores)`` converting the input once."""
        x = as_float_array(scores)
        self._fit_array(x)
        return self._transform_array(x, out)

    def _fit_array(self, x: np.ndarray) -> None:
        self._check_params()
        if x.ndim == 1:
            columns = [x]
        elif x.ndim == 2:
            if x.shape[1] == 0:
                raise ValueError("scores of shape (n, 0) hold no score column")
            columns = list(np.ascontiguousarray(x.T))
        else:
            raise ValueError(
                "scores must be 1-D (one score vector) or 2-D (n_samples, n_columns), "
                f"got shape {x.shape}"
            )
        for name in self._FITTED:
            self.__dict__.pop(name, None)
        fits = []
        for j, c in enumerate(columns):
            fit, notes = self._fit_column(c, j if x.ndim == 2 else None)
            fits.append(fit)
            for category, message in notes:
                # Level 3: the caller of fit()/fit_transform().
                warnings.warn(message, category, stacklevel=3)
        self._store(fits, x.ndim)

    def _store(self, fits: List[Dict[str, Any]], ndim: int) -> None:
        for name, kind in self._FITTED.items():
            values = [f[name] for f in fits if name in f]
            if not values:
                continue
            setattr(self, name, values[0] if ndim == 1 else np.array(values, dtype=kind))
        self.n_features_in_ = 1 if ndim == 1 else len(fits)
        self._ndim = ndim

    def _transform_array(self, x: np.ndarray, out: Optional[np.ndarray]) -> Any:
        self._check_fitted()
        if self._ndim == 2 and (x.ndim != 2 or x.shape[1] != self.n_features_in_):
            raise ValueError(
                f"this scaler was fitted on {self.n_features_in_} score columns; "
                f"transform needs shape (m, {self.n_features_in_}), got {x.shape}"
            )
        if out is None:
            out = np.empty_like(x)
        else:
            check_out(out, x)
            if np.shares_memory(out, x):
                x = x.copy()
        self._transform_into(x, out)
        return out if out.ndim else out[()]

    def _check_fitted(self) -> None:
        if not hasattr(self, "_ndim"):
            raise NotFittedError(
                f"this {type(self).__name__} is not fitted yet; call fit(scores) first"
            )

    # -- serialisation -------------------------------------------------------
    def to_dict(self) -> Dict[str, Any]:
        """A JSON-serialisable description of the fitted scaler.

        :meth:`from_dict` (or :func:`outprob.from_dict`) rebuilds it, so a
        scaler fitted offline can be shipped to a scoring service.
        """
        self._check_fitted()
        fitted = {
            name: (v.tolist() if isinstance(v, np.ndarray) else v)
            for name in self._FITTED
            if (v := getattr(self, name, None)) is not None
        }
        return {
            "format": f"outprob.{type(self).__name__}",
            "version": FORMAT_VERSION,
            "params": self.get_params(),
            "ndim": self._ndim,
            "fitted": fitted,
        }

    @classmethod
    def from_dict(cls: type[_S], data: Dict[str, Any]) -> _S:
        """Rebuilds a fitted scaler from :meth:`to_dict` output."""
        expected = f"outprob.{cls.__name__}"
        if not isinstance(data, dict) or data.get("format") != expected:
            raise ValueError(f"not a serialised {cls.__name__}: format must be {expected!r}")
        if data.get("version") != FORMAT_VERSION:
            raise ValueError(
                f"unsupported serialisation version {data.get('version')!r}; "
                f"this outprob reads version {FORMAT_VERSION}"
            )
        ndim = data.get("ndim")
        if ndim not in (1, 2):
            raise ValueError(f"ndim must be 1 or 2, got {ndim!r}")
        obj = cls(**data["params"])
        obj._check_params()
        fitted = data["fitted"]
        unknown = set(fitted) - set(cls._FITTED)
        if unknown:
            raise ValueError(f"unknown fitted attributes: {sorted(unknown)}")
        for name, kind in cls._FITTED.items():
            if name in fitted:
                v = fitted[name]
                setattr(obj, name, kind(v) if ndim == 1 else np.array(v, dtype=kind))
        obj._ndim = ndim
        obj.n_features_in_ = 1 if ndim == 1 else len(obj._columns()[0])
        obj._check_fitted_values()
        return obj

    # -- subclass hooks --------------------------------------------------------
    def _check_params(self) -> None:
        check_nan_policy(self.nan_policy)
        check_threads(self.threads)
        if not isinstance(self.higher_is_outlier, (bool, np.bool_)):
            raise TypeError(f"higher_is_outlier must be a bool, got {self.higher_is_outlier!r}")

    def _fit_column(self, x: np.ndarray, column: Optional[int]) -> Tuple[Dict[str, Any], Notes]:
        """Fitted attributes of one column and the warnings to emit."""
        raise NotImplementedError

    def _columns(self) -> Tuple[List[float], List[float]]:
        raise NotImplementedError

    def _transform_into(self, x: np.ndarray, out: np.ndarray) -> None:
        raise NotImplementedError

    def _check_fitted_values(self) -> None:
        a, b = self._columns()
        if len(a) != len(b) or not all(np.isfinite(a)) or not all(np.isfinite(b)):
            raise ValueError("fitted parameters must be finite numbers, one per column")


def _differs(a: Any, b: Any) -> bool:
    try:
        return bool(a != b)
    except (TypeError, ValueError):
        return True


def _column_label(column: Optional[int]) -> str:
    return "" if column is None else f" in column {column}"


def _as_list(v: Any) -> List[float]:
    if isinstance(v, np.ndarray):
        return [float(t) for t in v.reshape(-1)]
    return [float(v)]


class GaussianScaler(_Scaler):
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

    Examples
    --------
    >>> import outprob
    >>> s = outprob.GaussianScaler("mean", "nmad")
    >>> s.fit_transform([1.0, 1.1, 0.9, 1.2, 9.0])
    array([0., 0., 0., 0., 1.])
    >>> round(s.center_, 4), round(s.scale_, 4)
    (2.64, 0.1483)
    """

    _PARAMS = (
        "center",
        "scale",
        "trim",
        "ddof",
        "maxiter",
        "tol",
        "nan_policy",
        "higher_is_outlier",
        "threads",
    )
    _FITTED = {
        "center_": float,
        "scale_": float,
        "scale_used_": str,
        "n_iter_": int,
        "converged_": bool,
    }

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
        check_int(self.maxiter, "maxiter", 1)
        check_positive(self.tol, "tol")

    def _fit_column(self, x: np.ndarray, column: Optional[int]) -> Tuple[Dict[str, Any], Notes]:
        center, scale, scale_used, m_estimates = _core.fit_gaussian(
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
        where = _column_label(column)
        notes: Notes = []
        for norm, (_, _, _, converged, start) in m_estimates:
            if start not in ("nmad", "constant"):
                notes.append((ZeroScaleWarning, (
                    f"the nMAD{where} is zero (more than half of the scores tie); "
                    f"Huber's proposal 2 ({norm}) started from the {start} instead"
                )))
            if not converged:
                notes.append((ConvergenceWarning, (
                    f"Huber's proposal 2 ({norm}){where} did not converge within "
                    f"maxiter={self.maxiter} iterations (tol={self.tol}); "
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

    def _columns(self) -> Tuple[List[float], List[float]]:
        return _as_list(self.center_), _as_list(self.scale_)

    def _check_fitted_values(self) -> None:
        super()._check_fitted_values()
        if any(s < 0 for s in _as_list(self.scale_)):
            raise ValueError("scale_ must be non-negative")

    def _transform_into(self, x: np.ndarray, out: np.ndarray) -> None:
        centers, scales = self._columns()
        _core.transform(
            x, out, "gaussian", centers, scales, not self.higher_is_outlier, check_threads(self.threads)
        )


class LinearScaler(_Scaler):
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

    Examples
    --------
    >>> import outprob
    >>> outprob.LinearScaler().fit_transform([2.0, 4.0, 3.0])
    array([0. , 1. , 0.5])
    """

    _PARAMS = ("nan_policy", "higher_is_outlier", "threads")
    _FITTED = {"min_": float, "max_": float}

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
        lo, hi = _core.fit_linear(
            x, self.nan_policy, not self.higher_is_outlier, check_threads(self.threads)
        )
        return {"min_": lo, "max_": hi}, []

    def _columns(self) -> Tuple[List[float], List[float]]:
        return _as_list(self.min_), _as_list(self.max_)

    def _check_fitted_values(self) -> None:
        super()._check_fitted_values()
        if any(a > b for a, b in zip(*self._columns())):
            raise ValueError("min_ must not exceed max_")

    def _transform_into(self, x: np.ndarray, out: np.ndarray) -> None:
        mins, maxs = self._columns()
        _core.transform(
            x, out, "linear", mins, maxs, not self.higher_is_outlier, check_threads(self.threads)
        )


def from_dict(data: Dict[str, Any]) -> _Scaler:
    """Rebuilds any fitted scaler from its :meth:`~GaussianScaler.to_dict`."""
    kinds = {f"outprob.{c.__name__}": c for c in (GaussianScaler, LinearScaler)}
    fmt = data.get("format") if isinstance(data, dict) else None
    if fmt not in kinds:
        raise ValueError(f"not a serialised outprob scaler: format must be one of {sorted(kinds)}")
    return kinds[fmt].from_dict(data)
