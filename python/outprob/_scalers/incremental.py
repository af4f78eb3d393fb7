"""The incremental half of the scalers (contract §9): ``partial_fit``,
``merge``, ``refit`` and windows, a mixin of
:class:`outprob._scalers.base.ScalerBase`.

A scaler that is fitted incrementally keeps one
:class:`outprob.streaming.StreamingFit` (exact moments, a KLL sketch, or an
exact window) in ``_stream``; after each batch the fitted state is rebuilt
from its results and published whole, as ``fit`` does, so ``transform``
never sees a mix of two fits. The methods exist only on scalers whose
``_CAN_STREAM`` is true.
"""

from __future__ import annotations

import functools
import inspect
import threading
import types
import warnings
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple, TypeVar

import numpy as np
import numpy.typing as npt

from .._common.exceptions import NotIncrementalError
from .._common.validation import (
    as_float_array,
    check_count,
    check_names,
    feature_names,
    shape_message,
)
from ..streaming._fit import StreamingFit
from ..streaming._state import StreamingResult
from .checked_params import cached, snapshot, unchanged

if TYPE_CHECKING:
    from .._maps.stored_state import State

_S = TypeVar("_S", bound="Incremental")
_C = TypeVar("_C")
Notes = List[Tuple[type, str]]

if TYPE_CHECKING:

    def _if_streamable(method: _C) -> _C:
        return method

else:

    class _if_streamable:
        """partial_fit/merge/refit exist only on scalers that can stream:
        on the others reading the method raises NotIncrementalError, a
        TypeError (contract §9) and an AttributeError, so that tools that
        probe for partial_fit (scikit-learn's checks, incremental learners)
        do not find it."""

        def __init__(self, fn: Callable[..., Any]) -> None:
            self.fn = fn
            functools.update_wrapper(self, fn)

        def __get__(self, obj: Any, owner: Any = None) -> Any:
            if obj is None:
                return self.fn
            if not obj._CAN_STREAM:
                raise NotIncrementalError(
                    f"{type(obj).__name__} cannot be fitted incrementally (partial_fit, merge, "
                    "refit): fit it on all scores at once with fit()"
                )
            return types.MethodType(self.fn, obj)


class Incremental:
    """``partial_fit``, ``merge``, ``refit`` and the hooks they call."""

    #: Whether the scaler implements partial_fit/merge/refit (contract §9).
    _CAN_STREAM = False
    #: The running state of ``partial_fit`` (None: fitted by ``fit``, or
    #: not at all).
    _stream: Optional[StreamingFit] = None

    if not TYPE_CHECKING:

        def __init_subclass__(cls, **kwargs: Any) -> None:
            # A class that streams gets the plain methods (a descriptor read
            # at every partial_fit would cost a bound method made in
            # Python); one that does not keeps the descriptor that refuses
            # them. Methods a class defines itself stay.
            super().__init_subclass__(**kwargs)
            for name in _STREAM_METHODS:
                found = inspect.getattr_static(cls, name, None)
                guarded = Incremental.__dict__[name]
                if found is guarded and cls._CAN_STREAM:
                    setattr(cls, name, guarded.fn)
                elif found is guarded.fn and not cls._CAN_STREAM:
                    setattr(cls, name, guarded)

    if TYPE_CHECKING:  # provided by ScalerBase and scikit-learn's BaseEstimator
        _state: Optional[State]
        window: Optional[int]
        refit_every: Optional[int]

        def get_params(self, deep: bool = True) -> Dict[str, Any]: ...
        def _check_params(self) -> None: ...
        def _fitted_state(self) -> State: ...
        def _state_of(
            self, fits: List[Dict[str, Any]], ndim: int, names: Optional[np.ndarray]
        ) -> State: ...
        def __sklearn_is_fitted__(self) -> bool: ...

    @_if_streamable
    def partial_fit(self: _S, X: npt.ArrayLike, y: Any = None) -> _S:
        """Fits the scaling incrementally: adds a batch of scores.

        After each call the fitted attributes describe every score seen
        since the first ``partial_fit`` (or, with ``window=W``, the newest
        W of them), as ``fit`` on their concatenation would (contract §9):

        * mean, SD, min and max exactly (the mean bit for bit, the SD
          within 1e-15 relative, min/max exactly), whatever the batches;
        * order statistics (median, quantiles, trimmed mean, nMAD, nIQR,
          trimmed SD) from a KLL quantile sketch of size ``k`` (rank error
          ε(800) = 0.345 %), with guaranteed intervals for μ and σ in
          ``center_interval_``/``scale_interval_``, the sketch's
          ``rank_error_`` and the implied bound ``probability_error_`` on
          ``|p̂ − p|`` over all scores; M-estimates from the sketch (no
          interval);
        * with ``window=W``: exactly the in-memory fit of the newest W
          scores, refitted every ``refit_every`` scores (default: every
          call) or by :meth:`refit`.

        Each batch obeys contract §5 on its own (NaN omitted or refused,
        ±inf refused): a refused batch changes nothing, in no column.
        ``fit`` starts afresh and keeps no streaming state (except with
        ``window``, where ``fit(X)`` is a fresh ``partial_fit(X)``).
        Threads may call ``partial_fit`` and ``merge`` on one scaler
        concurrently: the batches are added one after another.

        Parameters
        ----------
        X : array_like, shape (n,) or (n, k)
            A batch of scores, of the kind (1-D, or k columns with the same
            names) of the first batch.
        y : ignored

        Returns
        -------
        self

        Examples
        --------
        >>> import numpy as np, outprob
        >>> s = outprob.GaussianScaler("mean", "std")
        >>> for batch in np.array_split(np.arange(10.0), 3):
        ...     _ = s.partial_fit(batch)
        >>> float(s.center_), s.n_samples_seen_
        (4.5, 10)
        """
        with self._stream_lock():
            self._partial_fit(X, 3)
        return self

    @_if_streamable
    def merge(self: _S, other: _S) -> _S:
        """Adds the scores another scaler saw through ``partial_fit``.

        For workers that fit shards of one stream: afterwards this scaler
        is fitted on both parts' scores (exact statistics exactly, sketch
        statistics from the merged sketches, with their bounds). Both
        scalers need the same parameters and kind of scores; windowed
        scalers do not merge.

        Returns
        -------
        self

        Examples
        --------
        >>> import numpy as np, outprob
        >>> a = outprob.LinearScaler().partial_fit(np.array([1.0, 5.0]))
        >>> b = outprob.LinearScaler().partial_fit(np.array([-2.0, 3.0]))
        >>> float(a.merge(b).min_), float(a.max_)
        (-2.0, 5.0)
        """
        if type(other) is not type(self):
            raise TypeError(
                f"can only merge another {type(self).__name__}, got {type(other).__name__}"
            )
        with self._stream_lock():
            self._merge(other)
        return self

    def _merge(self, other: "Incremental") -> None:
        theirs = other._stream
        if theirs is None:
            if other.__sklearn_is_fitted__():
                raise _fitted_without_stream("the other scaler")
            return  # nothing seen: the union is this fit
        ours = self._stream
        if ours is None and self.__sklearn_is_fitted__():
            raise _fitted_without_stream("this scaler")
        mine = self._new_stream()
        if mine.params != theirs.params or (ours is not None and ours.params != theirs.params):
            raise ValueError("only scalers with the same parameters can be merged")
        if mine.params["window"] is not None:
            raise ValueError(
                "windowed scalers do not merge: a window is the newest scores of one stream"
            )
        state = other._fitted_state()
        if ours is not None:
            mine_state = self._fitted_state()
            if (mine_state.ndim, mine_state.n_features) != (state.ndim, state.n_features):
                raise ValueError("the scalers were fitted on different numbers of score columns")
            if not _names_equal(mine_state.names, state.names):
                raise ValueError("the scalers were fitted on columns of different names")
            mine = ours
        results = mine._merge_and_results(theirs)
        self._publish(mine, results, state.ndim, state.names, 4)

    @_if_streamable
    def refit(self: _S) -> _S:
        """Refits a ``window`` scaler on its newest scores now (other
        incremental fits are always current).

        Returns
        -------
        self
        """
        with self._stream_lock():
            stream = self._stream
            if stream is None:
                raise ValueError(
                    f"this {type(self).__name__} has no streaming state to refit: "
                    "call partial_fit first"
                )
            results = stream.refit()
            state = self._fitted_state()
            self._publish(stream, results, state.ndim, state.names, 3)
        return self

    def _stream_lock(self) -> "threading.RLock":
        """The lock that serialises this scaler's partial_fit, merge and
        refit (made on first use; never pickled): concurrent calls add
        their batches one after another and each publishes the state of
        all batches added so far (contract §9)."""
        lock = self.__dict__.get("_stream_mutex")
        if lock is None:
            # setdefault is atomic: two threads get the same lock.
            lock = self.__dict__.setdefault("_stream_mutex", threading.RLock())
        return lock  # type: ignore[no-any-return]

    def _partial_fit(self, X: Any, stacklevel: int) -> None:
        """Adds a batch to the stream and publishes the new fit; warnings
        point ``stacklevel`` frames up from here."""
        x = as_float_array(X)
        names = None if type(X) is np.ndarray else feature_names(X)
        stream = self._stream
        if stream is None:
            fresh = self._new_stream()
            if x.ndim not in (1, 2) or (x.ndim == 2 and x.shape[1] == 0):
                raise ValueError(
                    "scores must be 1-D (one score vector) or 2-D (n_samples, n_columns) with "
                    f"at least one column, got shape {x.shape}"
                )
            _check_first_batch(x)
            stream = fresh
        else:
            # The parameters the stream last checked, the very objects: not
            # checked again (the first batch, set_params and assignment
            # leave other objects).
            if not unchanged(self, stream._checked):
                params = cached(self, "stream", self._checked_stream_params)
                if stream.params is not params and stream.params != params:
                    raise ValueError(
                        f"the parameters of this {type(self).__name__} changed since its "
                        "first partial_fit; call fit() to start again with the new ones"
                    )
                stream._checked = snapshot(self)
            state = self._fitted_state()
            if state.ndim == 2 and (x.ndim != 2 or x.shape[1] != state.n_features):
                raise ValueError(shape_message(type(self).__name__, x, state.n_features))
            if x.ndim != state.ndim:
                raise ValueError(
                    f"a batch of shape {x.shape} does not match the 1-D scores fitted so far"
                )
            if type(X) is not np.ndarray or state.names is not None:
                check_names(self, names, state.names)
                names = state.names
        # A batch whose fit is refused is not kept (contract §9).
        results = stream._update_checked(x)
        self._publish(stream, results, x.ndim, names, stacklevel + 1)

    def _publish(
        self, stream: StreamingFit, results: List[StreamingResult], ndim: int, names: Any,
        stacklevel: int,
    ) -> None:
        """Builds the fitted state from the stream's results and publishes it."""
        if ndim == 1:  # one column (a batch of partial_fit's most common kind)
            fit, notes = self._stream_column(results[0], None)
            for category, message in notes:
                warnings.warn(message, category, stacklevel=stacklevel)
            state = self._state_of([fit], 1, names)
            self._stream = stream
            self._state = state
            return
        fits = []
        for j, r in enumerate(results):
            fit, notes = self._stream_column(r, j if ndim == 2 else None)
            fits.append(fit)
            for category, message in notes:
                warnings.warn(message, category, stacklevel=stacklevel)
        state = self._state_of(fits, ndim, names)
        self._stream = stream
        self._state = state

    def _check_window(self) -> None:
        """Checks ``window`` and ``refit_every`` (the scalers that stream)."""
        for key, value in (("window", self.window), ("refit_every", self.refit_every)):
            if value is not None:
                check_count(value, key)

    def _new_stream(self) -> StreamingFit:
        """A fresh :class:`StreamingFit` with the scaler's parameters (raises
        ``TypeError`` for scalers that cannot be fitted incrementally)."""
        self._check_params()
        return StreamingFit(**self._stream_params())

    def _checked_stream_params(self) -> Dict[str, Any]:
        """The parameters of :meth:`_new_stream`'s fit, checked as it checks
        them (what a later batch compares its stream's with)."""
        return self._new_stream().params

    def _resume(self, stream: Any) -> None:
        """Keeps a stored stream (``from_dict``, unpickling) once checked
        against the stored fit: the scaler's parameters, the fit's columns,
        and the fitted attributes exactly those the stream publishes (a
        window's: its last fit). Stored state is untrusted; a stream and a
        fit that contradict each other are refused."""
        if not isinstance(stream, StreamingFit):
            raise ValueError("the stored stream must be a StreamingFit state")
        if stream.params != self._new_stream().params:
            raise ValueError("the stored stream's parameters differ from the scaler's")
        if stream.n == 0:
            raise ValueError("the stored stream holds no scores")
        state = self._fitted_state()
        results = stream.results()
        if stream._ndim != state.ndim or len(results) != state.n_features:
            raise ValueError(
                f"the stored stream has {len(results)} score column(s) ({stream._ndim}-D), "
                f"the fit {state.n_features} ({state.ndim}-D)"
            )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the original fit warned already
            fits = [
                self._stream_column(r, j if state.ndim == 2 else None)[0]
                for j, r in enumerate(results)
            ]
        expected = self._state_of(fits, state.ndim, state.names).attributes
        differ = sorted(
            name for name in set(expected) | set(state.attributes)
            if not _equal(expected.get(name), state.attributes.get(name))
        )
        if differ:
            raise ValueError(
                f"the stored fitted attributes {differ} contradict the stored stream, "
                "which gives other values"
            )
        self._stream = stream

    def _stream_params(self) -> Dict[str, Any]:
        """The :class:`outprob.streaming.StreamingFit` parameters of
        ``partial_fit``; scalers that cannot be fitted incrementally raise
        ``TypeError`` here."""
        raise TypeError(
            f"{type(self).__name__} cannot be fitted incrementally (partial_fit, merge): "
            "fit it on all scores at once with fit()"
        )

    def _check_streamable(self, supported: Tuple[str, ...]) -> None:
        """Refuses parameters ``partial_fit`` does not implement: any
        parameter outside ``supported`` must keep its default."""
        defaults = parameter_defaults(type(self))
        for name, value in self.get_params(deep=False).items():
            if name not in supported and not _same(value, defaults.get(name)):
                raise TypeError(
                    f"{type(self).__name__}({name}={value!r}) cannot be fitted incrementally "
                    f"(partial_fit, merge): fit it on all scores at once with fit()"
                )

    def _stream_column(
        self, result: StreamingResult, column: Optional[int]
    ) -> Tuple[Dict[str, Any], Notes]:
        """Fitted attributes of one column from a streaming result, and the
        warnings to emit."""
        raise NotImplementedError


#: The methods that exist only on scalers that stream.
_STREAM_METHODS = ("partial_fit", "merge", "refit")


def add_bounds(fit: Dict[str, Any], r: StreamingResult, first: str, second: str) -> None:
    """Adds the stream's size and error bounds to ``fit`` as fitted
    attributes (the intervals named ``first`` and ``second``)."""
    fit["n_samples_seen_"] = r.n
    fit["rank_error_"] = r.rank_error
    interval = r.center_interval
    if interval is not None:
        fit[first] = tuple(interval)
    interval = r.scale_interval
    if interval is not None:
        fit[second] = tuple(interval)
    if r.probability_error is not None:
        fit["probability_error_"] = r.probability_error


def refit_every(window: Optional[int], refit_every: Optional[int]) -> Optional[int]:
    """A window refits at every partial_fit unless told otherwise."""
    if window is None:
        return refit_every
    return 1 if refit_every is None else refit_every


def parameter_defaults(cls: type) -> Dict[str, Any]:
    """Constructor parameters and their defaults (pickles of older versions
    lack the parameters added since, which take their defaults); cached per
    class (``partial_fit`` reads them on every call)."""
    return dict(_parameter_defaults(cls))


@functools.lru_cache(maxsize=None)
def _parameter_defaults(cls: type) -> Tuple[Tuple[str, Any], ...]:
    sig = inspect.signature(cls.__init__)  # type: ignore[misc]
    return tuple(
        (name, p.default)
        for name, p in sig.parameters.items()
        if name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    )


def _check_first_batch(x: np.ndarray) -> None:
    """The first batch must give every column a score: a fit needs one."""
    if x.size == 0:
        raise ValueError("cannot fit on an empty array of scores")
    if not np.isnan(x[0]).any():
        return  # every column has a score in the first row
    empty = np.isnan(x).all(axis=0)
    if np.any(empty):
        where = "" if x.ndim == 1 else f" in column {int(np.flatnonzero(empty)[0])}"
        raise ValueError(
            f"all scores{where} are NaN: nothing is left to fit after omitting NaN"
        )


def _fitted_without_stream(which: str) -> ValueError:
    return ValueError(
        f"{which} was fitted with fit(), which keeps no streaming state; "
        "merge combines scalers fitted with partial_fit"
    )


def _equal(a: Any, b: Any) -> bool:
    """Whether two fitted attributes hold the same values (NaN is never
    equal: no fit publishes it)."""
    if a is None or b is None:
        return a is None and b is None
    x, y = np.asarray(a), np.asarray(b)
    if x.shape != y.shape:
        return False
    if x.dtype.kind in "fiub" and y.dtype.kind in "fiub":
        return bool(np.array_equal(x.astype(float), y.astype(float)))
    return bool(np.array_equal(x, y))


def _names_equal(a: Optional[np.ndarray], b: Optional[np.ndarray]) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return len(a) == len(b) and bool(np.all(a == b))


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a is b or a == b)
    except (TypeError, ValueError):  # arrays and the like: not a default
        return False
