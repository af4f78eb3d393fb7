"""Streaming fitting with stated error bounds (contract §9).

* :class:`KLLSketch` — a mergeable quantile sketch whose serialized bytes
  are Apache DataSketches' ``kll_doubles_sketch`` / ``kll_floats_sketch``
  bytes: a sketch built by DataSketches (its Python package ``datasketches``,
  Java ``KllDoublesSketch``, Spark's ``kll_sketch_agg_double``) can be read,
  updated and merged here, and vice versa.
* :class:`StreamingFit` — the running state of a Gaussian or linear fit:
  exact for the mean, SD and extremes, from a KLL sketch (with guaranteed
  value intervals) for order statistics, or exact over a window of the most
  recent scores. It is what the scalers' ``partial_fit`` builds on.

>>> import numpy as np
>>> from outprob.streaming import StreamingFit
>>> fit = StreamingFit(center="mean", scale="std")
>>> for batch in np.array_split(np.arange(10.0), 3):
...     _ = fit.update(batch)
>>> r = fit.result()
>>> float(r.center), round(float(r.scale), 6)
(4.5, 2.872281)
"""

from __future__ import annotations

import base64
import binascii
import inspect
import threading
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
from ._input import (
    MAX_COUNT,
    MAX_ITER,
    MAX_K,
    MAX_SEED,
    MAX_WINDOW,
    MIN_K,
    as_float_array,
    check_fraction,
    check_int,
    check_nan_policy,
    check_positive,
)

__all__ = [
    "KLLSketch",
    "StreamingFit",
    "StreamingResult",
    "normalized_rank_error",
    "DEFAULT_K",
]

#: Default k: the single-sided normalized rank error ε(800) = 0.345% ≤ 0.35%.
DEFAULT_K = 800

Spec = Union[str, float]


def normalized_rank_error(k: int, pmf: bool = False) -> float:
    """DataSketches' normalized rank error ε(k) of a KLL sketch.

    ``2.296 / k**0.9723`` single-sided (quantile and rank queries) or
    ``2.446 / k**0.9433`` double-sided (PMF): the 99th percentile of the
    largest rank error over all queries of one sketch, fitted to
    DataSketches' simulations.

    >>> round(normalized_rank_error(800), 5)
    0.00345
    """
    return float(_core.kll_normalized_rank_error(check_int(k, "k", MIN_K, MAX_K), pmf=bool(pmf)))


class KLLSketch:
    """KLL quantile sketch with DataSketches-compatible bytes.

    Parameters
    ----------
    k : int, default 800
        Size/accuracy parameter in [8, 65535]; the sketch keeps about
        ``3k`` items and its rank error is :func:`normalized_rank_error`.
    dtype : "float64" or "float32"
        Item type: ``kll_doubles_sketch`` or ``kll_floats_sketch`` bytes.
    seed : int, default 0
        Selects the compaction coins. Each coin is a SplitMix64 hash of the
        seed, ``n``, the level and the level's middle item: the same calls
        give the same sketch, and a sketch read back from bytes continues
        exactly as the original.

    Notes
    -----
    Queries follow DataSketches: ``quantile(rank, inclusive=True)`` is the
    first retained item whose cumulative weight reaches ``ceil(rank·n)``
    (``inclusive=False``: exceeds ``floor(rank·n)``); ``rank(item,
    inclusive=True)`` is the weight of the items ``<= item`` over n. NaN
    are skipped; ±inf are kept (as DataSketches does).

    Examples
    --------
    >>> import numpy as np
    >>> s = KLLSketch(k=200)
    >>> s.update(np.arange(1000.0))
    >>> s.n, s.is_estimation_mode
    (1000, True)
    >>> abs(s.quantile(0.5) - 500) < 0.02 * 1000
    True
    >>> KLLSketch.deserialize(s.serialize()).n
    1000
    """

    __slots__ = ("_s",)

    def __init__(self, k: int = DEFAULT_K, dtype: str = "float64", seed: int = 0) -> None:
        if dtype not in ("float64", "float32"):
            raise ValueError(f"dtype must be 'float64' or 'float32', got {dtype!r}")
        self._s = _core.KllSketch(
            k=check_int(k, "k", MIN_K, MAX_K),
            double=dtype == "float64",
            seed=check_int(seed, "seed", 0, MAX_SEED),
        )

    @classmethod
    def _wrap(cls, s: Any) -> "KLLSketch":
        obj = cls.__new__(cls)
        obj._s = s
        return obj

    def update(self, values: Any) -> None:
        """Adds scores (any array-like; flattened; NaN skipped)."""
        a = as_float_array(values).reshape(-1)
        self._s.update(a)

    def merge(self, other: "KLLSketch") -> None:
        """Adds everything ``other`` has seen (keeps this sketch's k; the
        error is that of the smaller k)."""
        if not isinstance(other, KLLSketch):
            raise TypeError(f"can only merge a KLLSketch, got {type(other).__name__}")
        self._s.merge(other._s)

    def serialize(self) -> bytes:
        """DataSketches' compact serialized bytes."""
        return bytes(self._s.serialize())

    @classmethod
    def deserialize(cls, data: bytes, dtype: str = "float64", seed: int = 0) -> "KLLSketch":
        """Reads DataSketches' bytes (checked: garbage raises ``ValueError``)."""
        if dtype not in ("float64", "float32"):
            raise ValueError(f"dtype must be 'float64' or 'float32', got {dtype!r}")
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"data must be bytes, got {type(data).__name__}")
        seed = check_int(seed, "seed", 0, MAX_SEED)
        return cls._wrap(
            _core.KllSketch.deserialize(bytes(data), double=dtype == "float64", seed=seed)
        )

    def quantile(self, rank: float, inclusive: bool = True) -> float:
        """The item of normalized rank ``rank`` (DataSketches' ``get_quantile``)."""
        return float(self._s.quantiles([float(rank)], inclusive=bool(inclusive))[0])

    def quantiles(self, ranks: Sequence[float], inclusive: bool = True) -> np.ndarray:
        """:meth:`quantile` of several ranks."""
        return np.array(self._s.quantiles([float(r) for r in ranks], inclusive=bool(inclusive)))

    def rank(self, item: float, inclusive: bool = True) -> float:
        """Normalized rank of ``item`` (DataSketches' ``get_rank``)."""
        return float(self._s.ranks([float(item)], inclusive=bool(inclusive))[0])

    def get_normalized_rank_error(self, pmf: bool = False) -> float:
        """ε of this sketch (of the smallest k merged in)."""
        return float(self._s.normalized_rank_error(pmf=bool(pmf)))

    def weighted_items(self) -> Tuple[np.ndarray, np.ndarray]:
        """Retained items (ascending) and their weights."""
        v, w = self._s.weighted_items()
        return np.asarray(v), np.asarray(w)

    @property
    def k(self) -> int:
        return int(self._s.info().k)

    @property
    def n(self) -> int:
        return int(self._s.info().n)

    @property
    def num_retained(self) -> int:
        return int(self._s.info().num_retained)

    @property
    def is_estimation_mode(self) -> bool:
        return bool(self._s.info().is_estimation_mode)

    @property
    def is_empty(self) -> bool:
        return self.n == 0

    @property
    def dtype(self) -> str:
        return "float64" if self._s.info().is_double else "float32"

    @property
    def min(self) -> Optional[float]:
        e = self._s.info().extremes
        return None if e is None else float(e[0])

    @property
    def max(self) -> Optional[float]:
        e = self._s.info().extremes
        return None if e is None else float(e[1])

    def __reduce__(self) -> Any:
        return (_kll_from_bytes, (self.serialize(), self.dtype, int(self._s.info().seed)))

    def __copy__(self) -> "KLLSketch":
        return KLLSketch._wrap(self._s.copy())

    def __repr__(self) -> str:
        return f"KLLSketch(k={self.k}, dtype={self.dtype!r}, n={self.n}, retained={self.num_retained})"


def _kll_from_bytes(data: bytes, dtype: str, seed: int) -> KLLSketch:
    return KLLSketch.deserialize(data, dtype, seed)


class StreamingResult(NamedTuple):
    """Fitted parameters of a :class:`StreamingFit` (one score column).

    ``center``/``scale`` are μ and σ (Gaussian) or ``min``/``max`` in
    ``center``/``scale`` for linear scaling. ``center_interval`` and
    ``scale_interval`` hold the exact values with the sketch's confidence
    (``None`` for M-estimates, which carry no guarantee);
    ``probability_error`` bounds ``|p̂ − p|`` over all scores;
    ``rank_error`` is the sketch's ε (0 while it is exact or unused).
    """

    center: float
    scale: float
    scale_used: str
    center_interval: Optional[Tuple[float, float]]
    scale_interval: Optional[Tuple[float, float]]
    probability_error: Optional[float]
    rank_error: float
    n_iter: Optional[int]
    converged: Optional[bool]
    n: int


def _spec(value: Spec, name: str) -> Spec:
    if isinstance(value, str):
        return value
    return check_positive(value, name) if name == "scale" else float(value)


class StreamingFit:
    """Running state of a Gaussian or linear fit over batches of scores.

    Parameters
    ----------
    center, scale : str or float
        Estimators of contract §1–§2 (``"mean"``, ``"median"``,
        ``"trimmed_mean"``, ``"huber"``, ``"tukey"``; ``"std"``, ``"nmad"``,
        ``"niqr"``, ``"trimmed_std"``, ...) or fixed numbers. Ignored for
        ``scaling="linear"``.
    scaling : "gaussian" or "linear"
    trim, ddof, maxiter, tol, nan_policy, higher_is_outlier :
        As for :class:`outprob.GaussianScaler`.
    k : int, default 800
        KLL sketch size for order-statistic estimators.
    window : int, optional
        Fit exactly over the most recent ``window`` scores instead (ring
        buffer); ``refit_every`` new scores make :meth:`result` refit,
        otherwise the last fit is returned until :meth:`refit`.
    seed : int
        The sketch's coin seed.

    Mean, SD and min/max are exact whatever the batches (the mean bit for
    bit, the SD within 1e-15 relative of the in-memory fit); order
    statistics come from the sketch with intervals; 2-D batches (N, k) keep
    one state per column.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> fit = StreamingFit(center="median", scale="nmad")
    >>> for _ in range(5):
    ...     _ = fit.update(rng.normal(size=20_000))
    >>> r = fit.result()
    >>> r.center_interval[0] <= r.center <= r.center_interval[1]
    True
    >>> r.probability_error < 0.05
    True
    """

    def __init__(
        self,
        center: Spec = "mean",
        scale: Spec = "std",
        *,
        scaling: str = "gaussian",
        trim: float = 0.1,
        ddof: int = 0,
        maxiter: int = 30,
        tol: float = 1e-8,
        nan_policy: str = "omit",
        higher_is_outlier: bool = True,
        k: int = DEFAULT_K,
        window: Optional[int] = None,
        refit_every: Optional[int] = None,
        seed: int = 0,
    ) -> None:
        if scaling not in ("gaussian", "linear"):
            raise ValueError(f"scaling must be 'gaussian' or 'linear', got {scaling!r}")
        if not isinstance(higher_is_outlier, (bool, np.bool_)):
            raise TypeError(f"higher_is_outlier must be a bool, got {higher_is_outlier!r}")
        self.params: Dict[str, Any] = dict(
            center=_spec(center, "center"),
            scale=_spec(scale, "scale"),
            scaling=scaling,
            trim=check_fraction(trim, "trim"),
            ddof=check_int(ddof, "ddof", 0, MAX_COUNT),
            maxiter=check_int(maxiter, "maxiter", 1, MAX_ITER),
            tol=check_positive(tol, "tol"),
            nan_policy=check_nan_policy(nan_policy),
            higher_is_outlier=bool(higher_is_outlier),
            k=check_int(k, "k", MIN_K, MAX_K),
            window=None if window is None else check_int(window, "window", 1, MAX_WINDOW),
            refit_every=(
                None if refit_every is None else check_int(refit_every, "refit_every", 1, MAX_COUNT)
            ),
            seed=check_int(seed, "seed", 0, MAX_SEED),
        )
        # One state for every column, made by the first batch: the core's
        # streaming state or window (updated and merged whole under its
        # lock), or the extremes of a linear fit.
        self._state: Optional[Any] = None
        self._ndim: Optional[int] = None
        # A window's last fit, published until the next refit: part of the
        # state (to_dict), so that a resumed window continues as the
        # original.
        self._fitted: Optional[List[StreamingResult]] = None
        # Serialises the first batch's state and merges into an empty fit
        # (the core's state serialises everything after).
        self._lock = threading.RLock()

    def spec(self) -> Any:
        """The core's :class:`~outprob._core.GaussianSpec` of these parameters."""
        p = self.params
        gaussian = p["scaling"] == "gaussian"
        return _core.GaussianSpec(
            center=p["center"] if gaussian else "mean", scale=p["scale"] if gaussian else "std",
            trim=p["trim"], ddof=p["ddof"], maxiter=p["maxiter"], tol=p["tol"],
            nan_policy=p["nan_policy"], negate=not p["higher_is_outlier"],
        )

    def _new_state(self, columns: int) -> Any:
        p = self.params
        if p["window"] is not None:
            return _core.WindowState(size=p["window"], refit_every=p["refit_every"] or 0, columns=columns)
        if p["scaling"] == "linear":
            return _Extremes(not p["higher_is_outlier"], p["nan_policy"], columns)
        return _core.StreamingState(spec=self.spec(), k=p["k"], seed=p["seed"], columns=columns)

    @property
    def n(self) -> int:
        """Scores seen (per column; NaN excluded)."""
        if self._state is None:
            return 0
        s = self._state
        return int((s.seen() if self.params["window"] is not None else s.n())[0])

    def update(self, scores: Any) -> "StreamingFit":
        """Adds a batch: 1-D (one column) or 2-D (N, k) scores.

        contract §5 applies per batch: a batch holding ±inf (or NaN with
        ``nan_policy="raise"``) raises ``ValueError`` and changes no column.
        """
        a, state = self._batch(scores)
        if self.params["window"] is None:
            state.update(a)
        else:
            # A window refits when due (refit_every new scores) or on demand.
            state.update(a, nan_policy=self.params["nan_policy"])
        return self

    def _update_and_results(self, scores: Any) -> List[StreamingResult]:
        """:meth:`update`, then :meth:`results`, as one step: a batch whose
        fit is refused (contract §5: a scale beyond the double range)
        raises ``ValueError`` and changes nothing. The scalers'
        ``partial_fit``, which publishes a fit after every batch."""
        a, state = self._batch(scores)
        p = self.params
        if p["scaling"] == "linear":  # the extremes of finite scores: never refused
            return self.update(a).results()
        if p["window"] is None:
            return [_streaming_result(r) for r in state.update_and_fit(a)]
        fits = state.update_and_fit_gaussian(
            a, nan_policy=p["nan_policy"], spec=self.spec(), refit=self._fitted is None
        )
        if fits is not None:
            self._fitted = self._window_fits(fits)
        assert self._fitted is not None  # the first batch of a window refits
        return list(self._fitted)

    def _batch(self, scores: Any) -> Tuple[np.ndarray, Any]:
        """The batch as a float array of the fit's kind, and the state it
        goes to (the first batch makes the state)."""
        a = as_float_array(scores)
        if a.ndim not in (1, 2):
            raise ValueError(f"scores must be 1-D or 2-D, got {a.ndim}-D")
        columns = 1 if a.ndim == 1 else a.shape[1]
        if self._state is None:
            with self._lock:
                if self._state is None:
                    self._ndim = a.ndim
                    self._state = self._new_state(columns)
        state = self._state
        assert state is not None
        fitted = len(state.seen() if self.params["window"] is not None else state.n())
        if a.ndim != self._ndim or columns != fitted:
            raise ValueError(
                f"batch of shape {a.shape} does not match the {fitted} column(s) fitted so far"
            )
        return a, state

    def merge(self, other: "StreamingFit") -> "StreamingFit":
        """Adds the scores ``other`` has seen (same parameters required)."""
        self._merged(other, fit=False)
        return self

    def _merge_and_results(self, other: "StreamingFit") -> List[StreamingResult]:
        """:meth:`merge`, then :meth:`results`, as one step: a merge whose
        fit is refused raises ``ValueError`` and changes nothing."""
        results = self._merged(other, fit=True)
        return self.results() if results is None else results

    def _merged(self, other: "StreamingFit", fit: bool) -> Optional[List[StreamingResult]]:
        if not isinstance(other, StreamingFit) or other.params != self.params:
            raise ValueError("only a StreamingFit with the same parameters can be merged")
        if self.params["window"] is not None:
            raise ValueError("windowed fits do not merge: a window is the newest scores of one stream")
        if other._state is None:
            return None
        with self._lock:
            if self._state is None:
                self._ndim = other._ndim
                self._state = self._state_from(other._state.parts())
                return None
        try:
            if fit and self.params["scaling"] == "gaussian":
                return [_streaming_result(r) for r in self._state.merge_and_fit(other._state)]
            self._state.merge(other._state)
        except ValueError as exc:
            if self._ndim != other._ndim or len(self._state.n()) != len(other._state.n()):
                raise ValueError("the fits have different numbers of columns") from None
            raise exc
        return None

    def _state_from(self, parts: List[Dict[str, Any]]) -> Any:
        """A running state from its per-column parts (``to_dict``, ``merge``)."""
        p = self.params
        if p["scaling"] == "linear":
            return _Extremes.from_parts(not p["higher_is_outlier"], p["nan_policy"], parts)
        return _core.StreamingState.from_parts(spec=self.spec(), parts=parts)

    def refit(self) -> List[StreamingResult]:
        """Refits now (windowed fits); returns :meth:`results`. A refused
        refit keeps the last fit."""
        return self.results(force=True)

    def results(self, force: bool = False) -> List[StreamingResult]:
        """One :class:`StreamingResult` per column."""
        if self._state is None:
            raise ValueError("nothing to fit yet: update the fit with scores first")
        p = self.params
        s = self._state
        if p["window"] is None:
            if p["scaling"] == "linear":
                return [
                    StreamingResult(lo, hi, "value", (lo, lo), (hi, hi), 0.0, 0.0, None, None, n)
                    for (lo, hi), n in zip(s.extremes(), s.n())
                ]
            return [_streaming_result(r) for r in s.results()]
        if self._fitted is None or force or s.due():
            negate = not p["higher_is_outlier"]
            counts = [min(int(n), p["window"]) for n in s.seen()]
            if p["scaling"] == "linear":
                self._fitted = [
                    _window_result(f.min, f.max, "value", None, None, n)
                    for f, n in zip(s.fit_linear(negate=negate), counts)
                ]
            else:
                self._fitted = self._window_fits(s.fit_gaussian(spec=self.spec()))
        return list(self._fitted)

    def _window_fits(self, fits: List[Any]) -> List[StreamingResult]:
        """A window's Gaussian refits (the core's) as results."""
        state = self._state
        assert state is not None
        counts = [min(int(n), self.params["window"]) for n in state.seen()]
        return [
            _window_result(f.center, f.scale, f.scale_used, *_iterations(f), n)
            for f, n in zip(fits, counts)
        ]

    def result(self) -> StreamingResult:
        """The fitted parameters of a 1-D fit (of column 0 for 2-D)."""
        return self.results()[0]

    def to_dict(self) -> Dict[str, Any]:
        """The parameters and state as JSON-compatible data (bytes as
        base64; a window's last fit, which it publishes until the next
        refit, in ``"fitted"``)."""
        out: Dict[str, Any] = {
            "params": dict(self.params), "ndim": self._ndim, "states": None, "fitted": None,
        }
        if self._state is not None:
            if self.params["window"] is None:
                out["states"] = [_encode_parts(s) for s in self._state.parts()]
            else:
                out["states"] = [
                    {"since_refit": s["since_refit"], "seen": s["seen"],
                     "values": base64.b64encode(np.asarray(s["values"], "<f8").tobytes()).decode()}
                    for s in self._state.parts()
                ]
                if self._fitted is not None:
                    out["fitted"] = [
                        {f: getattr(r, f) for f in _CACHED} for r in self._fitted
                    ]
        return out

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "StreamingFit":
        """Inverse of :meth:`to_dict`. The state is untrusted and checked
        (by the core, which refuses a state that contradicts itself): any
        malformed or inconsistent state raises ``ValueError``."""
        try:
            return cls._from_dict(d)
        except (TypeError, KeyError, AttributeError, IndexError, OverflowError,
                binascii.Error) as exc:
            # Wrong types or shapes of stored data are a corrupt state too.
            raise ValueError(f"not a valid StreamingFit state: {exc}") from None

    @classmethod
    def _from_dict(cls, d: Any) -> "StreamingFit":
        if not isinstance(d, dict) or set(d) - {"params", "ndim", "states", "fitted"}:
            raise ValueError("a StreamingFit state is the dict to_dict() makes")
        params = d["params"]
        names = set(inspect.signature(cls.__init__).parameters) - {"self"}
        if not isinstance(params, dict) or set(params) != names:
            raise ValueError(f"a StreamingFit state's params must name exactly {sorted(names)}")
        fit = cls(**params)
        states, ndim = d["states"], d["ndim"]
        if states is None:
            if ndim is not None or d.get("fitted") is not None:
                raise ValueError("a StreamingFit state without scores has no ndim or fit")
            return fit
        if type(ndim) is not int or ndim not in (1, 2):
            raise ValueError(f"ndim must be 1 or 2, got {ndim!r}")
        if not isinstance(states, list) or not states or (ndim == 1 and len(states) != 1):
            raise ValueError("states must hold one state per score column (one for 1-D)")
        if not all(isinstance(t, dict) for t in states):
            raise ValueError("each column's state must be a dict")
        p = fit.params
        if p["window"] is None:
            if d.get("fitted") is not None:
                raise ValueError("only a window keeps its last fit")
            fit._state = fit._state_from([_decode_parts(t) for t in states])
        else:
            parts = [
                {"since_refit": t["since_refit"], "seen": t["seen"],
                 "values": np.frombuffer(base64.b64decode(t["values"], validate=True), "<f8")
                 .astype(np.float64).tolist()}
                for t in states
            ]
            fit._state = _core.WindowState.from_parts(
                size=p["window"], refit_every=p["refit_every"] or 0, parts=parts
            )
            if d.get("fitted") is not None:
                fit._fitted = _cached_fit(fit, d["fitted"], [int(n) for n in fit._state.seen()])
        fit._ndim = ndim
        return fit

    def __getstate__(self) -> Dict[str, Any]:
        return self.to_dict()

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(StreamingFit.from_dict(state).__dict__)

    def __repr__(self) -> str:
        p = self.params
        what = "linear" if p["scaling"] == "linear" else f"{p['center']}/{p['scale']}"
        return f"StreamingFit({what}, n={self.n})"


def _streaming_result(r: Any) -> StreamingResult:
    """A :class:`StreamingResult` from the core's streaming result."""
    n_iter, converged = _iterations(r)
    return StreamingResult(r.center, r.scale, r.scale_used, r.center_interval, r.scale_interval,
                           r.probability_error, r.rank_error, n_iter, converged, r.n)


#: What a window's stored last fit holds per column (its bounds are the
#: exact fit's: points, no rank error).
_CACHED = ("center", "scale", "scale_used", "n_iter", "converged", "n")
_SCALES = ("std", "nmad", "niqr", "trimmed_std", "huber", "tukey", "value")


def _window_result(
    center: float, scale: float, scale_used: str, n_iter: Optional[int],
    converged: Optional[bool], n: int,
) -> StreamingResult:
    """A window's exact fit as a :class:`StreamingResult` (degenerate bounds)."""
    return StreamingResult(center, scale, scale_used, (center, center), (scale, scale), 0.0, 0.0,
                           n_iter, converged, n)


def _iterations(fit: Any) -> Tuple[Optional[int], Optional[bool]]:
    """``n_iter`` and ``converged`` of a fit's M-estimates (None without)."""
    ms = fit.m_estimates
    return (ms[-1].n_iter, all(m.converged for m in ms)) if ms else (None, None)


def _cached_fit(fit: StreamingFit, stored: Any, seen: List[int]) -> List[StreamingResult]:
    """A window's stored last fit, checked: one per column, its parameters a
    valid map (checked by the core's ``FittedMap``), fitted on 1 to
    ``min(window, seen)`` scores."""
    p = fit.params
    if not isinstance(stored, list) or len(stored) != len(seen):
        raise ValueError("a window's last fit holds one fit per score column")
    results = []
    for r, n_seen in zip(stored, seen):
        if not isinstance(r, dict) or set(r) != set(_CACHED):
            raise ValueError(f"a window's last fit names exactly {list(_CACHED)}")
        first, second, used, n_iter, converged, n = (r[f] for f in _CACHED)
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in (first, second)):
            raise ValueError("a window's last fit needs two numbers")
        if used not in (_SCALES if p["scaling"] == "gaussian" else ("value",)):
            raise ValueError(f"a window's last fit has an unknown scale_used {used!r}")
        if (n_iter is None) != (converged is None) or not (
            n_iter is None
            or (type(n_iter) is int and 0 <= n_iter <= p["maxiter"] and type(converged) is bool)
        ):
            raise ValueError("a window's last fit has invalid n_iter/converged")
        if type(n) is not int or not 1 <= n <= min(p["window"], n_seen):
            raise ValueError(f"a window's last fit cannot be of {n!r} scores")
        results.append(_window_result(float(first), float(second), used, n_iter, converged, n))
    linear = p["scaling"] == "linear"
    _core.FittedMap({
        "kind": "linear" if linear else "gaussian", "negate": False, "two_d": len(seen) > 1,
        "pretransform": None, "sorted": None,
        "params": {("min" if linear else "center"): [r.center for r in results],
                   ("max" if linear else "scale"): [r.scale for r in results]},
    })
    return results


def _check_batch(a: np.ndarray, nan_policy: str) -> Tuple[int, float, float]:
    """contract §5 for a whole batch, with the messages of the core; returns
    the count of scores (NaN excluded), their min and max."""
    census = _core.part_census(a.reshape(-1))
    if census.inf_count:
        n = census.inf_count
        raise ValueError(
            f"scores contain {n} infinite value{'s' if n != 1 else ''} "
            f"(first at index {census.inf_first}); fitting needs finite scores: drop or clip them "
            "before fitting"
        )
    if census.nan_count and nan_policy == "raise":
        n = census.nan_count
        raise ValueError(
            f"scores contain {n} NaN value{'s' if n != 1 else ''} (first at "
            f"index {census.nan_first}) and nan_policy='raise'; use nan_policy='omit' to ignore them"
        )
    return census.count, census.min, census.max


class _Extremes:
    """The state of a linear fit of one or more columns: count, min and max
    per column in one pass (linear scaling needs no sums, so it keeps
    none). A batch changes every column or none; calls from several threads
    serialise."""

    __slots__ = ("columns", "negate", "nan_policy", "lock")

    def __init__(self, negate: bool, nan_policy: str, columns: int) -> None:
        self.columns = [(0, float("inf"), float("-inf"))] * columns
        self.negate, self.nan_policy = negate, nan_policy
        self.lock = threading.Lock()

    def update(self, x: np.ndarray) -> None:
        k = len(self.columns)
        if (x.ndim == 1 and k != 1) or (x.ndim == 2 and x.shape[1] != k):
            raise ValueError(f"batch of shape {x.shape} does not match the {k} column(s) fitted so far")
        cols = [x] if x.ndim == 1 else [np.ascontiguousarray(x[:, j]) for j in range(k)]
        if k > 1:
            # The whole batch first: a refused batch changes no column.
            _check_batch(x, self.nan_policy)
        batch = [_check_batch(c, self.nan_policy) for c in cols]
        with self.lock:
            self.columns = [_joined(a, b) for a, b in zip(self.columns, batch)]

    def merge(self, other: "_Extremes") -> None:
        theirs = list(other.columns)
        if len(theirs) != len(self.columns):
            raise ValueError("the fits have different numbers of columns")
        with self.lock:
            self.columns = [_joined(a, b) for a, b in zip(self.columns, theirs)]

    def n(self) -> List[int]:
        return [c[0] for c in self.columns]

    def extremes(self) -> List[Tuple[float, float]]:
        if not all(c[0] for c in self.columns):
            raise ValueError("nothing to fit yet: update the fit with scores first")
        return [(-hi, -lo) if self.negate else (lo, hi) for _, lo, hi in self.columns]

    def parts(self) -> List[Dict[str, Any]]:
        return [{"moments": {"n": n, "min": lo, "max": hi}, "sketch": None, "seed": 0}
                for n, lo, hi in self.columns]

    @classmethod
    def from_parts(cls, negate: bool, nan_policy: str, parts: List[Dict[str, Any]]) -> "_Extremes":
        e = cls(negate, nan_policy, len(parts))
        columns = []
        for part in parts:
            moments = part["moments"]
            try:
                count, lo, hi = moments["n"], float(moments["min"]), float(moments["max"])
            except (KeyError, TypeError, ValueError):
                raise ValueError("not a valid linear-fit state: it needs n, min and max") from None
            if type(count) is not int or not 0 <= count <= MAX_COUNT:
                raise ValueError(f"not a valid linear-fit state: n must be in [0, 2^53], got {count!r}")
            if count and not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi):
                raise ValueError("not a valid linear-fit state: extremes")
            columns.append((count, lo, hi) if count else (0, float("inf"), float("-inf")))
        e.columns = columns
        return e


def _joined(a: Tuple[int, float, float], b: Tuple[int, float, float]) -> Tuple[int, float, float]:
    """The count and extremes of two sets of scores together."""
    if not b[0]:
        return a
    if a[0] + b[0] > MAX_COUNT:
        raise ValueError(
            f"a stream counts at most 2^53 scores; {a[0]} seen and {b[0]} more would exceed it"
        )
    return (a[0] + b[0], min(a[1], b[1]), max(a[2], b[2]))


def _encode_parts(parts: Dict[str, Any]) -> Dict[str, Any]:
    sk = parts["sketch"]
    return {"moments": dict(parts["moments"]), "seed": parts["seed"],
            "sketch": None if sk is None else base64.b64encode(bytes(sk)).decode()}


def _decode_parts(d: Dict[str, Any]) -> Dict[str, Any]:
    """A column's stored state as the core reads it (the core checks it)."""
    if set(d) != {"moments", "seed", "sketch"} or not isinstance(d["moments"], dict):
        raise ValueError("a column's state holds exactly 'moments', 'seed' and 'sketch'")
    sk = d["sketch"]
    if sk is not None and not isinstance(sk, str):
        raise ValueError("a column's sketch is base64 text or None")
    return {"moments": dict(d["moments"]), "seed": d["seed"],
            "sketch": None if sk is None else base64.b64decode(sk, validate=True)}



