"""The scikit-learn estimator machinery shared by the scalers (contract §7).

A scaler's fitted state is one immutable :class:`~outprob._maps.stored_state.State`,
built completely by ``fit`` and then published with a single attribute
assignment, so a thread that transforms while another one fits sees the
old fit or the new one, never a mix or none. The fitted attributes
(``center_``, ...) are read from it (:class:`~outprob._scalers.fitted_attributes.Fitted`), and
``transform`` applies its fitted map, the extension's ``FittedMap`` of the
scaler's family: one call for a float ndarray, after converting anything
else.
"""

from __future__ import annotations

import warnings
from typing import (
    TYPE_CHECKING, Any, ClassVar, Dict, List, Optional, Tuple, TypeVar, overload,
)  # fmt: skip

import numpy as np
import numpy.typing as npt

from .. import _core
from .._maps import stored_state as _persist
from .._common.exceptions import NotFittedError
from .fitted_attributes import Fitted
from .incremental import Incremental, parameter_defaults
from .._common.validation import (
    as_float_array,
    check_names,
    check_nan_policy,
    check_out,
    check_threads,
    feature_names,
    shape_message,
    warn_names,
)
from .output import (
    NO_CONFIG,
    OUTPUTS,
    THREAD_CONFIG,
    check_output_available,
    default_output,
    global_transform_output,
    wrap_output,
)
from .._maps.stored_state import State
from ..streaming._fit import StreamingFit

_S = TypeVar("_S", bound="ScalerBase")
_E = TypeVar("_E")
# The types of transform results in the default container (NumPy); after
# set_output(transform="pandas"/"polars") they are DataFrames or Series.
_F32 = npt.NDArray[np.float32]
_F64 = npt.NDArray[np.float64]
_Out = Optional[np.ndarray]
Notes = List[Tuple[type, str]]
if TYPE_CHECKING:
    from .._maps.fitted_map import FittedMap

    class _Estimator:
        """What the scalers inherit from scikit-learn, typed: scikit-learn
        publishes no types, and a class derived from an untyped one would
        be partly ``Any`` to type checkers (and so to users' code)."""

        def __init_subclass__(cls, **kwargs: Any) -> None: ...

        def get_params(self, deep: bool = True) -> Dict[str, Any]:
            raise NotImplementedError

        def set_params(self: _E, **params: Any) -> _E:
            raise NotImplementedError

        def get_feature_names_out(
            self, input_features: Optional[npt.ArrayLike] = None
        ) -> npt.NDArray[np.object_]:
            raise NotImplementedError

        def __sklearn_tags__(self) -> Any: ...

        def __repr__(self, N_CHAR_MAX: int = 700) -> str:
            raise NotImplementedError

        def _repr_html_(self) -> str:
            raise NotImplementedError

        @classmethod
        def _get_param_names(cls) -> List[str]:
            raise NotImplementedError

else:
    from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin

    class _Estimator(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
        """scikit-learn's estimator, transformer and one-to-one feature names."""


class ScalerBase(Incremental, _Estimator, auto_wrap_output_keys=None):
    """fit / transform / fit_transform with ``out=``, pandas/polars output,
    feature-name checks, serialisation and pickling."""

    #: The core's family of the fitted map (``_core.FittedMap``).
    _KIND: ClassVar[str]
    #: The map's parameters and the fitted attributes that hold them.
    _MAP: ClassVar[Dict[str, str]] = {}
    #: Two fitted attributes every stored fit has (shown by ``repr``).
    _PAIR: ClassVar[Tuple[str, str]]
    #: Every fitted attribute and its element type (from the class's
    #: :class:`Fitted` descriptors).
    _KINDS: ClassVar[Dict[str, Any]] = {}

    #: The published fit (None: not fitted).
    _state: Optional[State] = None

    @classmethod
    def _get_param_names(cls) -> List[str]:
        """scikit-learn's constructor parameter names (its
        ``inspect.signature`` of ``__init__``), cached per class:
        ``partial_fit`` reads the parameters on every call."""
        names = cls.__dict__.get("_param_names")
        if names is None:
            names = tuple(super()._get_param_names())
            setattr(cls, "_param_names", names)
        return list(names)

    nan_policy: str
    higher_is_outlier: bool
    threads: Optional[int]

    n_samples_seen_ = Fitted[Any](
        int, "Scores fitted by :meth:`partial_fit` so far (NaN excluded).", stream=True
    )

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Output containers are made by this class (see _output), for this
        # class and its subclasses alike: scikit-learn's automatic wrapping
        # of transform would double the cost of a one-score transform.
        super().__init_subclass__(auto_wrap_output_keys=None, **kwargs)
        cls._KINDS = {
            name: d.kind
            for klass in reversed(cls.__mro__)
            for name, d in vars(klass).items()
            if isinstance(d, Fitted)
        }

    # -- fitting and transforming ------------------------------------------
    def fit(self: _S, X: npt.ArrayLike, y: Any = None) -> _S:
        """Fits the scaling to scores.

        Parameters
        ----------
        X : array_like, shape (n,) or (n, k)
            Outlier scores; a 2-D array holds k independent score columns
            (e.g. k detectors), each fitted on its own. NaN are ignored
            (``nan_policy="omit"``) or refused (``"raise"``); ±inf are
            refused. A DataFrame's column names are kept in
            ``feature_names_in_`` and checked by ``transform``.
        y : ignored
            Present for scikit-learn pipelines.

        Returns
        -------
        self
        """
        if getattr(self, "window", None) is not None:
            with self._stream_lock():
                self._stream = None
                self._partial_fit(X, 3)
            return self
        x = as_float_array(X)
        self._state = self._fit_state(x, None if type(X) is np.ndarray else feature_names(X))
        self._stream = None
        return self

    @overload
    def transform(self, X: _F32, out: _Out = None) -> _F32: ...
    @overload
    def transform(self, X: float, out: _Out = None) -> np.float64: ...
    @overload
    def transform(self, X: npt.ArrayLike, out: _Out = None) -> _F64: ...
    def transform(self, X: npt.ArrayLike, out: _Out = None) -> Any:
        """Maps scores to outlier probabilities in [0, 1].

        Parameters
        ----------
        X : array_like
            Scores of the kind fitted on; a scaler fitted on 1-D scores maps
            arrays of any shape element-wise, one fitted on (n, k) scores
            needs shape (m, k) (and, if fitted on a DataFrame, the same
            column names in the same order). NaN stays NaN, +inf → 1,
            −inf → 0.
        out : numpy.ndarray, optional
            Where to write the result: same shape and dtype as the scores
            (float32 for float32 scores, else float64), C-contiguous.

        Returns
        -------
        numpy.ndarray, or a DataFrame/Series after ``set_output``
            The probabilities (``out`` if given); float32 for float32 input,
            a NumPy scalar for a scalar. (Type checkers see the NumPy
            types.)
        """
        state = self._state
        if state is None:
            raise NotFittedError(
                f"this {type(self).__name__} is not fitted yet; call fit(scores) first"
            )
        key = state.map_key
        if key is None or key == self._MAP_KEY(self):
            fitted = state.map
        else:
            fitted = self._current_map(state)
        if out is None and type(X) is np.ndarray and state.names is None:
            # A float ndarray the map takes as it is (contract §4's latency
            # path): one call into the extension.
            threads = self.threads
            result = fitted.transform(X) if threads is None else fitted.transform(
                X, threads=check_threads(threads)
            )
            if result is not None:
                # default_output inlined (this path is a few attribute reads
                # around the extension's call): no set_output of its own and
                # scikit-learn's setting of this thread, once read, default.
                if getattr(self, "_sklearn_output_config", None) is None and (
                    THREAD_CONFIG.__dict__.get("config", NO_CONFIG).get("transform_output")
                    == "default"
                ):
                    return result
                return self._output(result, X, state)
        x = as_float_array(X)
        if type(X) is np.ndarray:
            if state.names is not None:
                warn_names(self, None, 3)
        elif state.ndim == 2:  # names matter only for a column-wise fit
            check_names(self, feature_names(X), state.names)
        if state.ndim == 2 and (x.ndim != 2 or x.shape[1] != state.n_features):
            raise ValueError(shape_message(type(self).__name__, x, state.n_features))
        return self._output(self._map_into(fitted, x, out), X, state)

    def _map_into(self, fitted: Any, x: np.ndarray, out: Optional[np.ndarray]) -> Any:
        """``fitted``'s probabilities of the converted, shape-checked ``x``,
        into ``out`` if given; a NumPy scalar for a 0-d ``x``."""
        if out is not None:
            check_out(out, x)
            if np.shares_memory(out, x):
                x = x.copy()
        threads = check_threads(self.threads)
        if x.ndim == 0:  # a 0-d score maps as a vector of one
            target = None if out is None else out.reshape(1)
            return fitted.transform(x.reshape(1), target, threads=threads)[0]
        return fitted.transform(x, out, threads=threads)

    def _current_map(self, state: State) -> Any:
        """The map of ``state`` for the transform parameters set now (a
        family whose map depends on some: GaussianScaler's λ)."""
        return state.map

    #: ``_map_key()`` read from the scaler by a C getter (``transform``
    #: reads it at every call; families whose map depends on transform
    #: parameters set it).
    _MAP_KEY: ClassVar[Any] = staticmethod(lambda scaler: None)

    @overload
    def fit_transform(self, X: _F32, y: Any = None, out: _Out = None) -> _F32: ...
    @overload
    def fit_transform(self, X: npt.ArrayLike, y: Any = None, out: _Out = None) -> _F64: ...
    def fit_transform(self, X: npt.ArrayLike, y: Any = None, out: _Out = None) -> Any:
        """``fit(X).transform(X)`` converting the input once."""
        if out is None and type(X) is np.ndarray:
            fused = self._fit_transform_fused(X)
            if fused is not None:
                return fused
        x = as_float_array(X)
        if getattr(self, "window", None) is not None:
            with self._stream_lock():
                self._stream = None
                self._partial_fit(x if type(X) is np.ndarray else X, 3)
                state = self._fitted_state()
        else:
            state = self._fit_state(x, None if type(X) is np.ndarray else feature_names(X))
            self._state = state
            self._stream = None
        return self._output(self._map_into(self._current_map(state), x, out), X, state)

    def _fit_transform_fused(self, X: np.ndarray) -> Any:
        """``fit_transform`` of an ndarray in one call into the extension,
        which fits and maps a C-contiguous 1-D float array at once; None
        where this family or parameter set has no such call, or ``X`` needs
        converting (family hook)."""
        return None

    def _publish_fused(
        self, attributes: Dict[str, Any], fitted: Any, key: Any, result: Any, X: Any
    ) -> Any:
        """Publishes a fit of 1-D scores made with its transform (the fitted
        attributes, the map and its key, see ``_map_key``) and returns the
        probabilities as ``fit_transform`` does."""
        state = new_state(attributes, 1, 1, None, not self.higher_is_outlier, fitted, key)
        self._state = state
        self._stream = None
        if default_output(self):
            return result
        return self._output(result, X, state)

    def _fit_state(self, x: np.ndarray, names: Optional[np.ndarray]) -> State:
        """Fits every column on its own, then builds the state to publish."""
        self._check_params()
        if x.ndim == 1:
            columns = [x]
        elif x.ndim == 2:
            if x.shape[1] == 0:
                raise ValueError(
                    f"scores of shape {x.shape} hold no score column: 0 feature(s) "
                    f"(shape={x.shape}) while a minimum of 1 is required."
                )
            columns = list(np.ascontiguousarray(x.T))
        else:
            raise ValueError(
                "scores must be 1-D (one score vector) or 2-D (n_samples, n_columns), "
                f"got shape {x.shape}"
            )
        fits = []
        for j, c in enumerate(columns):
            fit, notes = self._fit_column(c, j if x.ndim == 2 else None)
            fits.append(fit)
            for category, message in notes:
                # Level 3: the caller of fit()/fit_transform().
                warnings.warn(message, category, stacklevel=3)
        return self._state_of(fits, x.ndim, names)

    def _state_of(
        self, fits: List[Dict[str, Any]], ndim: int, names: Optional[np.ndarray]
    ) -> State:
        """The state to publish from each column's fitted attributes."""
        kinds = self._KINDS
        attributes: Dict[str, Any] = {}
        if ndim == 1:  # one column: its attributes as they are
            fit = fits[0]
            if kinds.keys() >= fit.keys():  # (the fit's own dict, made for this state)
                attributes = fit
            else:
                attributes = {name: value for name, value in fit.items() if name in kinds}
        else:
            for name, kind in kinds.items():
                values = [f[name] for f in fits if name in f]
                if values:
                    attributes[name] = np.array(values, dtype=float if kind == "interval" else kind)
        return self._published(attributes, ndim, names, not self.higher_is_outlier)

    def _published(
        self, attributes: Dict[str, Any], ndim: int, names: Optional[np.ndarray], negate: bool
    ) -> State:
        """The state of these fitted attributes, with their map."""
        fitted = self._one_column_map(attributes, negate) if ndim == 1 else None
        if fitted is None:
            fitted = _core.FittedMap(self._map_state(attributes, ndim, negate))
        n = len(np.atleast_1d(attributes[self._PAIR[0]])) if ndim == 2 else 1
        return _new_tuple(State, (attributes, ndim, n, names, negate, fitted, self._map_key()))

    def _one_column_map(self, attributes: Dict[str, Any], negate: bool) -> Any:
        """The map of a 1-D fit made from its two parameters alone
        (``FittedMap.one_column``: no state dict to build and read), or None
        where the family's map needs its state (``_map_state``)."""
        return None

    def _map_state(self, attributes: Dict[str, Any], ndim: int, negate: bool) -> Dict[str, Any]:
        """The state of the map of these fitted attributes, as
        ``_core.FittedMap`` reads it: the attributes named by ``_MAP`` (a
        family with more to say overrides it)."""
        return {
            "kind": self._KIND,
            "negate": negate,
            "two_d": ndim == 2,
            "pretransform": None,
            "params": {p: _values(attributes[a]) for p, a in self._MAP.items()},
            "sorted": None,
        }

    def _map_key(self) -> Any:
        """The transform parameters the map depends on (see ``_current_map``)."""
        return None

    def _set_fitted(
        self: _S,
        columns: List[Dict[str, Any]],
        ndim: int,
        names: Optional[npt.ArrayLike] = None,
    ) -> _S:
        """Publishes a fit computed elsewhere (``outprob.dask``): one dict of
        fitted attributes per score column (one for 1-D scores), checked
        as ``from_dict`` checks them. Keeps no streaming state."""
        self._check_params()
        if ndim not in (1, 2) or not columns or (ndim == 1 and len(columns) != 1):
            raise ValueError("one dict of fitted attributes per score column (one for 1-D)")
        fitted = {
            name: (columns[0][name] if ndim == 1 else [c[name] for c in columns])
            for name in columns[0]
        }
        self._state = self._restore(fitted, ndim, names, not self.higher_is_outlier)
        self._stream = None
        return self

    # -- output containers (scikit-learn's set_output API) ------------------------
    def set_output(self: _S, *, transform: Optional[str] = None) -> _S:
        """Sets the container of ``transform``/``fit_transform`` results.

        Parameters
        ----------
        transform : {"default", "pandas", "polars"} or None
            ``"default"``: NumPy arrays; ``"pandas"``: a DataFrame with the
            input's index and the fitted column names (a Series for 1-D
            scores); ``"polars"``: a polars DataFrame (Series for 1-D).
            None leaves the setting unchanged.

        Returns
        -------
        self
        """
        if transform is None:
            return self
        if transform not in OUTPUTS:
            raise ValueError(f"transform must be one of {OUTPUTS}, got {transform!r}")
        check_output_available(transform)
        config = dict(getattr(self, "_sklearn_output_config", {}))
        config["transform"] = transform
        self._sklearn_output_config = config
        return self

    def _output(self, result: Any, X: Any, state: State) -> Any:
        config = self.__dict__.get("_sklearn_output_config")
        mode = config.get("transform") if config else None
        if mode is None:
            mode = global_transform_output()
        if mode == "default" or not isinstance(result, np.ndarray):
            return result
        fitted = list(self.get_feature_names_out()) if state.ndim == 2 else None
        return wrap_output(mode, result, X, fitted)

    # -- fitted state ------------------------------------------------------------
    def __sklearn_is_fitted__(self) -> bool:
        return self._state is not None

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # NaN: omitted by fit, kept by transform
        # 1-D scores (one score vector, contract §5) are accepted too; the
        # one_d_array tag is not set because scikit-learn reads it as "only
        # 1-D" (its checks then pass 1-D data alone).
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    def _fitted_state(self) -> State:
        state = self._state
        if state is None:
            raise NotFittedError(
                f"this {type(self).__name__} is not fitted yet; call fit(scores) first"
            )
        return state

    @property
    def n_features_in_(self) -> int:
        """Number of score columns (1 for 1-D scores)."""
        return self._fitted_state().n_features

    @property
    def feature_names_in_(self) -> npt.NDArray[np.object_]:
        """Column names of the DataFrame fitted on (absent otherwise)."""
        names = self._fitted_state().names
        if names is None:
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute 'feature_names_in_' "
                "(it was not fitted on a DataFrame with string column names)"
            )
        return names

    def __repr__(self, N_CHAR_MAX: int = 700) -> str:
        """scikit-learn's repr of the parameters, then the fitted values as a
        comment: ``GaussianScaler(scale='nmad')  # fitted: center_=2.64, scale_=0.1483``."""
        text: str = super().__repr__(N_CHAR_MAX)
        state = self._state
        if state is None:
            return text
        return f"{text}  # fitted: {self._fitted_summary(state)}"

    def _fitted_summary(self, state: State) -> str:
        return ", ".join(f"{n}={_short(state.attributes[n])}" for n in self._PAIR)

    def to_map(self) -> "FittedMap":
        """The fitted map alone: what :meth:`transform` applies, as an
        :class:`outprob.FittedMap` that a scoring service loads
        (:func:`outprob.load_map`) without scikit-learn or pandas.

        Examples
        --------
        >>> import outprob
        >>> s = outprob.scaler("median_nmad").fit([1.0, 2.0, 2.5, 3.0, 9.0])
        >>> m = s.to_map()
        >>> bool((m.transform([2.0, 9.0]) == s.transform([2.0, 9.0])).all())
        True
        """
        from .._maps.fitted_map import FittedMap

        fitted = self._current_map(self._fitted_state())
        if not isinstance(fitted, _core.FittedMap):
            raise TypeError(f"a {type(self).__name__}'s map is not one of the fitted maps of "
                            "contract §4/§10; store the scaler with to_dict() instead")
        return FittedMap(fitted)

    # -- serialisation (outprob._maps.stored_state) ---------------------------------------
    def to_dict(self) -> Dict[str, Any]:
        """A JSON-serialisable description of the fitted scaler (builtin
        types only).

        :meth:`from_dict` (or :func:`outprob.from_dict`) rebuilds it, so a
        scaler fitted offline can be shipped to a scoring service.
        """
        with self._stream_lock():  # the fit and its stream of one moment
            data = _persist.to_dict(self, self._fitted_state())
            stream = self._stream
            if stream is not None:
                # partial_fit's state: from_dict resumes the stream from it.
                data["stream"] = stream.to_dict()
        return data

    @classmethod
    def from_dict(cls: type[_S], data: Dict[str, Any]) -> _S:
        """Rebuilds a fitted scaler from :meth:`to_dict` output.

        The dict is untrusted: missing or unknown keys, parameters of the
        wrong type or range, invalid fitted values, and a stream that
        contradicts itself or the fit raise ``ValueError`` (contract §7)."""
        try:
            obj = cls(**_persist.params_of(cls.__name__, cls._get_param_names(), data))
            obj._check_params()
            obj._state = obj._restore(
                data["fitted"], data["ndim"], data.get("feature_names_in"),
                not obj.higher_is_outlier,
            )
            if data.get("stream") is not None:
                obj._resume(StreamingFit.from_dict(data["stream"]))
        except (TypeError, KeyError, AttributeError, IndexError, OverflowError) as exc:
            # A stored value of the wrong type is a corrupt dict too.
            raise ValueError(f"not a valid serialised {cls.__name__}: {exc}") from None
        return obj

    def _restore(self, fitted: Any, ndim: Any, names: Any, negate: bool) -> State:
        """A checked state from stored fitted attributes (``from_dict`` and
        unpickling); the core checks the map made of them."""
        attributes, ndim, names = _persist.restore(
            self._KINDS, self._PAIR, self._check_pair, fitted, ndim, names
        )
        return self._published(attributes, ndim, names, bool(negate))

    def __getstate__(self) -> Dict[str, Any]:
        with self._stream_lock():  # the fit and its stream of one moment
            data = _persist.pickled(self.__dict__)
            stream = self._stream
            if stream is not None:
                # A copy: pickle writes the stream after this returns.
                data["_stream"] = StreamingFit.from_dict(stream.to_dict())
        return data

    def __setstate__(self, data: Dict[str, Any]) -> None:
        attributes, fitted = _persist.unpickled(
            type(self).__name__, parameter_defaults(type(self)), self._KINDS, data
        )
        stream = attributes.pop("_stream", None)
        self.__dict__.update(attributes)
        if fitted is not None:
            stored, ndim, names, negate = fitted
            if negate is None:  # outprob 0.1.0 did not store it
                negate = not self.higher_is_outlier
            self._state = self._restore(stored, ndim, names, negate)
        if stream is not None:
            if fitted is None:
                raise ValueError("cannot load this pickle: it holds a stream but no fit")
            self._resume(stream)

    # -- subclass hooks --------------------------------------------------------
    def _check_params(self) -> None:
        check_nan_policy(self.nan_policy)
        check_threads(self.threads)
        higher = self.higher_is_outlier
        if type(higher) is not bool and not isinstance(higher, np.bool_):
            raise TypeError(f"higher_is_outlier must be a bool, got {higher!r}")

    def _fit_column(self, x: np.ndarray, column: Optional[int]) -> Tuple[Dict[str, Any], Notes]:
        """Fitted attributes of one column and the warnings to emit."""
        raise NotImplementedError

    def _check_pair(self, first: List[float], second: List[float]) -> None:
        """Checks restored per-column parameters beyond finiteness."""


def column_label(column: Optional[int]) -> str:
    return "" if column is None else f" in column {column}"


def _values(v: Any) -> List[float]:
    """A fitted attribute as the map's list of one value per column."""
    if type(v) is float:  # a 1-D fit's value, as the core returns it
        return [v]
    return [float(t) for t in np.atleast_1d(np.asarray(v, dtype=float))]


def new_state(
    attributes: Dict[str, Any], ndim: int, n_features: int, names: Optional[np.ndarray],
    negate: bool, fitted: Any, key: Any,
) -> State:
    """``State(...)`` of every field, without the named tuple's generated
    ``__new__`` (a Python function, a third of a small fit's publishing)."""
    return _new_tuple(State, (attributes, ndim, n_features, names, negate, fitted, key))


_new_tuple = tuple.__new__


def _short(v: Any) -> str:
    if isinstance(v, np.ndarray):
        return np.array2string(
            v, separator=", ", threshold=8, edgeitems=3, formatter={"float_kind": "{:.4g}".format}
        )
    return f"{v:.4g}"
