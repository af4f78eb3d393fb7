"""The running state of a Gaussian or linear fit over batches of scores
(contract §9): :class:`StreamingFit`."""

from __future__ import annotations

import base64
import binascii
import inspect
import threading
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import numpy as np

from .. import _core
from .._common.validation import (
    as_float_array,
    check_count,
    check_fraction,
    check_nan_policy,
    check_positive,
)
from ._sketch import DEFAULT_K
from ._state import (
    _CACHED,
    StreamingResult,
    _cached_fit,
    _decode_parts,
    _encode_parts,
    _iterations,
    _streaming_result,
    _window_result,
)

Spec = Union[str, float]


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
            ddof=check_count(ddof, "ddof"),
            maxiter=check_count(maxiter, "maxiter"),
            tol=check_positive(tol, "tol"),
            nan_policy=check_nan_policy(nan_policy),
            higher_is_outlier=bool(higher_is_outlier),
            k=check_count(k, "sketch_k"),
            window=None if window is None else check_count(window, "window"),
            refit_every=(
                None if refit_every is None else check_count(refit_every, "refit_every")
            ),
            seed=check_count(seed, "seed"),
        )
        # One state for every column, made by the first batch: the core's
        # streaming state (Gaussian, or a linear fit's extremes) or window,
        # updated and merged whole under its lock.
        self._state: Optional[Any] = None
        self._ndim: Optional[int] = None
        # A window's last fit, published until the next refit: part of the
        # state (to_dict), so that a resumed window continues as the
        # original.
        self._fitted: Optional[List[StreamingResult]] = None
        # The parameters of the scaler whose partial_fit feeds this fit, as
        # last checked (outprob._scalers.checked_params.snapshot).
        self._checked: Optional[Callable[[Any], bool]] = None
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
        return _core.StreamingState(spec=self.spec(), k=p["k"], seed=p["seed"], columns=columns,
                                    linear=p["scaling"] == "linear")

    @property
    def n(self) -> int:
        """Scores seen (per column; NaN excluded)."""
        if self._state is None:
            return 0
        return int(self._state.n()[0])

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
        if p["window"] is not None and p["scaling"] == "linear":
            # A window's extremes of finite scores: never refused.
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

    def _update_checked(self, a: np.ndarray) -> List[StreamingResult]:
        """:meth:`_update_and_results` of a float array (``as_float_array``)
        of the kind of the batches before (checked by the caller; the core
        checks its columns again)."""
        state = self._state
        if state is None or self.params["window"] is not None:
            return self._update_and_results(a)
        fits = state.update_and_fit(a)
        if len(fits) == 1:
            return [_streaming_result(fits[0])]
        return [_streaming_result(r) for r in fits]

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
        fitted = len(state.n())
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
            if fit:
                return [_streaming_result(r) for r in self._state.merge_and_fit(other._state)]
            self._state.merge(other._state)
        except ValueError as exc:
            if self._ndim != other._ndim or len(self._state.n()) != len(other._state.n()):
                raise ValueError("the fits have different numbers of columns") from None
            raise exc
        return None

    def _state_from(self, parts: List[Dict[str, Any]]) -> Any:
        """A running state from its per-column parts (``to_dict``, ``merge``)."""
        linear = self.params["scaling"] == "linear"
        return _core.StreamingState.from_parts(spec=self.spec(), parts=parts, linear=linear)

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
            return [_streaming_result(r) for r in s.results()]
        if self._fitted is None or force or s.due():
            negate = not p["higher_is_outlier"]
            counts = [min(int(n), p["window"]) for n in s.n()]
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
        counts = [min(int(n), self.params["window"]) for n in state.n()]
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
                fit._fitted = _cached_fit(fit.params, d["fitted"], [int(n) for n in fit._state.n()])
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
