"""The scikit-learn estimator machinery shared by the scalers (contract §7).

A scaler's fitted state is one immutable :class:`State`, built completely
by ``fit`` and then published with a single attribute assignment, so a
thread that transforms while another one fits sees the old fit or the new
one, never a mix or none. The public fitted attributes (``center_``,
``n_features_in_``, ...) are read from it.

Plain float NumPy arrays take a fast path: no feature-name checks (they
have no names) and no scikit-learn ``validate_data`` round trip; the names
of a DataFrame are checked only when one is passed.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, ClassVar, Dict, List, Optional, Tuple, TypeVar, overload

import numpy as np
import numpy.typing as npt

from . import _core, _partial, _persist
from ._incremental import Incremental, _parameter_defaults
from ._latency import LatencyCaches
from ._exceptions import NotFittedError
from ._input import (
    as_float_array,
    check_int,
    check_nan_policy,
    check_out,
    check_threads,
    feature_names,
)
from ._output import OUTPUTS, check_output_available, global_transform_output, wrap_output
from ._persist import State

_S = TypeVar("_S", bound="ScalerBase")
_E = TypeVar("_E")
# The types of transform results in the default container (NumPy); after
# set_output(transform="pandas"/"polars") they are DataFrames or Series.
_F32 = npt.NDArray[np.float32]
_F64 = npt.NDArray[np.float64]
_Out = Optional[np.ndarray]
Notes = List[Tuple[type, str]]
if TYPE_CHECKING:

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


class ScalerBase(Incremental, LatencyCaches, _Estimator, auto_wrap_output_keys=None):
    """fit / transform / fit_transform with ``out=``, pandas/polars output,
    feature-name checks, serialisation and pickling."""

    #: Fitted attributes and their element types, for ``to_dict``.
    _FITTED: ClassVar[Dict[str, type]]
    #: The two fitted attributes the transform needs, in the core's order.
    _PAIR: ClassVar[Tuple[str, str]]
    #: The core's name of the map.
    _KIND: ClassVar[str]
    #: Fitted attributes only ``partial_fit`` makes (the stream's size and
    #: error bounds), with their element types; "interval" marks a pair.
    _STREAM_FITTED: ClassVar[Dict[str, Any]] = {"n_samples_seen_": int}
    _KINDS_CACHE: ClassVar[Optional[Dict[str, Any]]] = None

    nan_policy: str
    higher_is_outlier: bool
    threads: Optional[int]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Output containers are made by this class (see _output), for this
        # class and its subclasses alike: scikit-learn's automatic wrapping
        # of transform would double the cost of a one-score transform.
        super().__init_subclass__(auto_wrap_output_keys=None, **kwargs)

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
            self.__dict__.pop("_stream", None)
            _partial.partial_fit(self, X, 3)
            return self
        x = as_float_array(X)
        self._state = self._fit_state(x, None if type(X) is np.ndarray else feature_names(X))
        self.__dict__.pop("_stream", None)
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
        attributes = self.__dict__
        state = attributes.get("_state")
        fast = attributes.get("_fast")
        if (
            fast is not None and out is None and type(X) is np.ndarray
            and state is not None and fast[0] is state
        ):
            # The latency path (contract §4): a C-contiguous float ndarray
            # goes to the extension's copy of the fitted state in one call.
            result = fast[1].try_apply(X, threads=fast[2])
            if result is not None:
                if global_transform_output() == "default":
                    return result
                return self._output(result, X, state)
        if (
            out is None and type(X) is np.ndarray and state is not None
            and state.names is None and state.transformer is not None and self._plain_map()
        ):
            threads = self.threads
            result = state.transformer.try_apply(
                X, threads=0 if threads is None else check_threads(threads)
            )
            if result is not None:
                return self._output(result, X, state)
        state = self._get_state()
        x = as_float_array(X)
        if type(X) is np.ndarray:
            if state.names is not None:
                _warn_names(self, None, 3)
        elif state.ndim == 2:  # names matter only for a column-wise fit
            _check_names(self, feature_names(X), state.names)
        if state.ndim == 2 and (x.ndim != 2 or x.shape[1] != state.n_features):
            raise ValueError(_shape_message(type(self).__name__, x, state.n_features))
        return self._output(self._apply(state, x, out), X, state)

    @overload
    def fit_transform(self, X: _F32, y: Any = None, out: _Out = None) -> _F32: ...
    @overload
    def fit_transform(self, X: npt.ArrayLike, y: Any = None, out: _Out = None) -> _F64: ...
    def fit_transform(self, X: npt.ArrayLike, y: Any = None, out: _Out = None) -> Any:
        """``fit(X).transform(X)`` converting the input once."""
        if out is None and type(X) is np.ndarray:
            attributes = self.__dict__
            plan = attributes.get("_plan")
            if plan is None:
                # The checked parameters as the extension holds them, made
                # once per parameter change (__setattr__ drops them).
                plan = attributes["_plan"] = self._fit_plan()
            if plan:
                planned = plan(X)
                if planned is not None:
                    fit, result, transformer = planned
                    return self._publish_planned(fit, result, transformer, X)
        x = as_float_array(X)
        if getattr(self, "window", None) is not None:
            self.__dict__.pop("_stream", None)
            _partial.partial_fit(self, x if type(X) is np.ndarray else X, 3)
            state = self._get_state()
        else:
            state = self._fit_state(x, None if type(X) is np.ndarray else feature_names(X))
            self._state = state
            self.__dict__.pop("_stream", None)
        return self._output(self._apply(state, x, out), X, state)

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
        a, b = self._PAIR
        kinds = self._kinds()
        attributes: Dict[str, Any] = {}
        if ndim == 1:  # one column: its attributes as they are (the common, latency-bound case)
            attributes = {name: value for name, value in fits[0].items() if name in kinds}
        else:
            for name, kind in kinds.items():
                values = [f[name] for f in fits if name in f]
                if values:
                    attributes[name] = np.array(values, dtype=float if kind == "interval" else kind)
        return self._with_transformer(State(
            attributes,
            ndim,
            len(fits) if ndim == 2 else 1,
            names,
            not self.higher_is_outlier,
            [f[a] for f in fits],
            [f[b] for f in fits],
        ))

    def _plain_map(self) -> bool:
        """Whether ``_apply`` maps by ``state.first``/``second`` alone, so
        that the extension's copy of them (``state.transformer``) gives the
        same probabilities."""
        return True

    def _with_transformer(self, state: State) -> State:
        """``state`` with the extension's copy of its parameters (for the
        scalings ``_core.Transformer`` knows; others map by ``_apply``)."""
        if self._KIND not in ("gaussian", "linear"):
            return state
        transformer = _core.Transformer(
            scaling=self._KIND, first=state.first, second=state.second, negate=state.negate,
            two_d=state.ndim == 2,
        )
        return State(*state[:-1], transformer)  # as _replace, without its cost

    @classmethod
    def _kinds(cls) -> Dict[str, Any]:
        """Every fitted attribute a state may hold, with its element type
        (built once per class)."""
        kinds: Optional[Dict[str, Any]] = cls.__dict__.get("_KINDS_CACHE")
        if kinds is None:
            kinds = {**cls._FITTED, **cls._STREAM_FITTED}
            cls._KINDS_CACHE = kinds
        return kinds

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
        self.__dict__.pop("_stream", None)
        return self

    def _apply(self, state: State, x: np.ndarray, out: Optional[np.ndarray]) -> Any:
        if out is None and state.transformer is not None and self._plain_map():
            result = state.transformer.try_apply(x, threads=check_threads(self.threads))
            if result is not None:
                return result
        if out is None:
            out = np.empty_like(x)
        else:
            check_out(out, x)
            if np.shares_memory(out, x):
                x = x.copy()
        _core.transform(
            x, out, scaling=self._KIND, first=state.first, second=state.second,
            negate=state.negate, threads=check_threads(self.threads),
        )
        return out if out.ndim else out[()]

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
        config = dict(self.__dict__.get("_sklearn_output_config", {}))
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

    # -- fitted attributes --------------------------------------------------------
    def __sklearn_is_fitted__(self) -> bool:
        return "_state" in self.__dict__

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # NaN: omitted by fit, kept by transform
        # 1-D scores (one score vector, contract §5) are accepted too; the
        # one_d_array tag is not set because scikit-learn reads it as "only
        # 1-D" (its checks then pass 1-D data alone).
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    def _fitted(self, name: str) -> Any:
        state = self.__dict__.get("_state")
        if state is None:
            raise NotFittedError(
                f"this {type(self).__name__} is not fitted yet, so it has no {name}; "
                "call fit(scores) first"
            )
        try:
            return state.attributes[name]
        except KeyError:
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute {name!r} "
                "(this fit did not compute it)"
            ) from None

    def _get_state(self) -> State:
        state: Optional[State] = self.__dict__.get("_state")
        if state is None:
            raise NotFittedError(
                f"this {type(self).__name__} is not fitted yet; call fit(scores) first"
            )
        return state

    @property
    def n_features_in_(self) -> int:
        """Number of score columns (1 for 1-D scores)."""
        return self._get_state().n_features

    @property
    def feature_names_in_(self) -> npt.NDArray[np.object_]:
        """Column names of the DataFrame fitted on (absent otherwise)."""
        names = self._get_state().names
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
        state = self.__dict__.get("_state")
        if state is None:
            return text
        shown = ", ".join(f"{n}={_short(state.attributes[n])}" for n in self._PAIR)
        return f"{text}  # fitted: {shown}"

    # -- serialisation (outprob._persist) ---------------------------------------
    def to_dict(self) -> Dict[str, Any]:
        """A JSON-serialisable description of the fitted scaler (builtin
        types only).

        :meth:`from_dict` (or :func:`outprob.from_dict`) rebuilds it, so a
        scaler fitted offline can be shipped to a scoring service.
        """
        data = _persist.to_dict(self, self._get_state())
        stream = _partial.stream_to_dict(self)
        if stream is not None:
            # partial_fit's state: from_dict resumes the stream from it.
            data["stream"] = stream
        return data

    @classmethod
    def from_dict(cls: type[_S], data: Dict[str, Any]) -> _S:
        """Rebuilds a fitted scaler from :meth:`to_dict` output."""
        obj = cls(**_persist.params_of(cls.__name__, cls._get_param_names(), data))
        obj._check_params()
        obj._state = obj._restore(
            data["fitted"], data["ndim"], data.get("feature_names_in"), not obj.higher_is_outlier
        )
        if data.get("stream") is not None:
            obj.__dict__["_stream"] = _partial.stream_from_dict(obj, data["stream"])
        return obj

    def _restore(self, fitted: Any, ndim: Any, names: Any, negate: bool) -> State:
        """A checked state from stored fitted attributes (``from_dict`` and
        unpickling)."""
        return self._with_transformer(_persist.restore(
            self._kinds(), self._PAIR, self._check_pair, fitted, ndim, names, negate
        ))

    def __getstate__(self) -> Dict[str, Any]:
        return _persist.pickled(self.__dict__)

    def __setstate__(self, data: Dict[str, Any]) -> None:
        attributes, fitted = _persist.unpickled(
            type(self).__name__, _parameter_defaults(type(self)), self._kinds(), data
        )
        self.__dict__.update(attributes)
        if fitted is not None:
            stored, ndim, names, negate = fitted
            if negate is None:  # outprob 0.1.0 did not store it
                negate = not self.higher_is_outlier
            self._state = self._restore(stored, ndim, names, negate)

    # -- subclass hooks --------------------------------------------------------
    def _check_params(self) -> None:
        check_nan_policy(self.nan_policy)
        check_threads(self.threads)
        for name in ("window", "refit_every"):
            value = getattr(self, name, None)
            if value is not None:
                check_int(value, name, 1)
        if not isinstance(self.higher_is_outlier, (bool, np.bool_)):
            raise TypeError(f"higher_is_outlier must be a bool, got {self.higher_is_outlier!r}")

    def _fit_column(self, x: np.ndarray, column: Optional[int]) -> Tuple[Dict[str, Any], Notes]:
        """Fitted attributes of one column and the warnings to emit."""
        raise NotImplementedError

    def _check_pair(self, first: List[float], second: List[float]) -> None:
        """Checks restored per-column parameters beyond finiteness."""



def column_label(column: Optional[int]) -> str:
    return "" if column is None else f" in column {column}"


def _short(v: Any) -> str:
    if isinstance(v, np.ndarray):
        return np.array2string(
            v, separator=", ", threshold=8, edgeitems=3, formatter={"float_kind": "{:.4g}".format}
        )
    return f"{v:.4g}"


def _shape_message(name: str, x: np.ndarray, k: int) -> str:
    got = f"X has {x.shape[1]} features, but " if x.ndim == 2 else ""
    return (
        f"{got}{name} is expecting {k} features as input: it was fitted on {k} score "
        f"columns, so transform needs shape (m, {k}), got shape {x.shape}. "
        f"Reshape your data to (m, {k})."
    )


def _warn_names(est: Any, names: Optional[np.ndarray], stacklevel: int) -> None:
    cls = type(est).__name__
    if names is None:
        message = f"X does not have valid feature names, but {cls} was fitted with feature names"
    else:
        message = f"X has feature names, but {cls} was fitted without feature names"
    warnings.warn(message, UserWarning, stacklevel=stacklevel)


def _check_names(est: Any, names: Optional[np.ndarray], fitted: Optional[np.ndarray]) -> None:
    """scikit-learn's rule: the same names in the same order as at fit time,
    with a warning when only one side has names."""
    if names is None and fitted is None:
        return
    if names is None or fitted is None:
        _warn_names(est, names, 4)
        return
    if len(names) == len(fitted) and bool(np.all(names == fitted)):
        return
    seen, given = set(fitted), set(names)
    unexpected = [n for n in names if n not in seen]
    missing = [n for n in fitted if n not in given]
    message = "The feature names should match those that were passed during fit.\n"
    for title, items in (
        ("Feature names unseen at fit time:\n", unexpected),
        ("Feature names seen at fit time, yet now missing:\n", missing),
    ):
        if items:
            message += title + "".join(f"- {n}\n" for n in items[:5])
            message += "- ...\n" if len(items) > 5 else ""
    if not unexpected and not missing:
        message += "Feature names must be in the same order as they were in fit.\n"
    raise ValueError(message)
