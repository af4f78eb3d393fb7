"""Serialising fitted scalers: the fitted state, ``to_dict``/``from_dict``
and the pickle layout (contract §7).

Pickles use the flat layout of outprob 0.1.0 (parameters and fitted
attributes in one dict), so pickles of every version load through one
path, :func:`unpickled`.
"""

from __future__ import annotations

import inspect
import math
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from .._common.validation import MAX_COUNT

FORMAT_VERSION = 1


class State(NamedTuple):
    """Everything a fit publishes; replaced whole, never mutated."""

    #: Public fitted attributes (``center_``, ``scale_``, ...).
    attributes: Dict[str, Any]
    #: 1: fitted on one score vector (maps any shape element-wise);
    #: 2: fitted on (n, k) score columns.
    ndim: int
    n_features: int
    names: Optional[np.ndarray]
    #: Scores were negated (``higher_is_outlier=False`` at fit time).
    negate: bool
    #: The extension's fitted map (``_core.FittedMap``): what ``transform``
    #: applies.
    map: Any
    #: The transform-time parameters the map was made with (GaussianScaler's
    #: λ and pretransform), or None when the map depends on the fit alone.
    map_key: Any = None


def to_dict(est: Any, state: State) -> Dict[str, Any]:
    """``est.to_dict()``: builtins only, the parameters as fitted."""
    params = {k: _builtin(v) for k, v in est.get_params().items()}
    params["higher_is_outlier"] = not state.negate  # as fitted
    fitted = {
        name: (v.tolist() if isinstance(v, np.ndarray) else _builtin(v))
        for name, v in state.attributes.items()
    }
    data: Dict[str, Any] = {
        "format": f"outprob.{type(est).__name__}",
        "version": FORMAT_VERSION,
        "params": params,
        "ndim": state.ndim,
        "fitted": fitted,
    }
    if state.names is not None:
        data["feature_names_in"] = [str(n) for n in state.names]
    return data


def params_of(kind: str, known: Sequence[str], data: Any) -> Dict[str, Any]:
    """The constructor parameters of a :func:`to_dict` dict, once its
    format, version and keys are checked."""
    expected = f"outprob.{kind}"
    if not isinstance(data, dict) or data.get("format") != expected:
        raise ValueError(f"not a serialised {kind}: format must be {expected!r}")
    if data.get("version") != FORMAT_VERSION:
        raise ValueError(
            f"unsupported serialisation version {data.get('version')!r}; "
            f"this outprob reads version {FORMAT_VERSION}"
        )
    missing = [k for k in ("params", "ndim", "fitted") if k not in data]
    if missing:
        raise ValueError(f"a serialised {kind} lacks the keys {missing}")
    params = data["params"]
    if not isinstance(params, dict) or not isinstance(data["fitted"], dict):
        raise ValueError("'params' and 'fitted' must be dicts")
    # Every parameter is required: a default in the place of a lacking one
    # could change every probability (a dropped higher_is_outlier=False
    # flips them all).
    _check_keys(
        params, known, known,
        "unknown parameters {} for " + kind, "a serialised " + kind + " lacks the parameters {}",
    )
    return params


def _check_keys(
    given: Any, known: Any, required: Any, unknown_message: str, lacking_message: str
) -> None:
    """Refuses keys of ``given`` outside ``known`` and ``required`` keys it
    lacks, each with its message (``{}``: the keys)."""
    unknown = set(given) - set(known)
    if unknown:
        raise ValueError(unknown_message.format(sorted(unknown)))
    lacking = [k for k in required if k not in given]
    if lacking:
        raise ValueError(lacking_message.format(lacking))


Checked = Tuple[Dict[str, Any], int, Optional[np.ndarray]]


def restore(
    kinds: Dict[str, Any],
    pair: Tuple[str, str],
    check_pair: Callable[[List[float], List[float]], None],
    fitted: Any,
    ndim: Any,
    names: Any,
) -> Checked:
    """Checked fitted attributes, ndim and names from storage: ``kinds`` maps
    each attribute to its element type, ``pair`` names two the map needs,
    ``check_pair`` checks them beyond finiteness (the core checks the map
    made of them)."""
    if ndim not in (1, 2):
        raise ValueError(f"ndim must be 1 or 2, got {ndim!r}")
    if not isinstance(fitted, dict):
        raise ValueError("'fitted' must be a dict of fitted attributes")
    _check_keys(
        fitted, kinds, pair, "unknown fitted attributes: {}", "the fitted attributes {} are missing"
    )
    attributes: Dict[str, Any] = {}
    for name, kind in kinds.items():
        if name not in fitted:
            continue
        v = fitted[name]
        try:
            if kind == "interval":
                attributes[name] = _interval(v) if ndim == 1 else np.array(
                    [_interval(t) for t in v], dtype=float
                ).reshape(-1, 2)
            else:
                attributes[name] = kind(v) if ndim == 1 else np.array(v, dtype=kind)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"fitted attribute {name}: {exc}") from None
        if ndim == 2 and kind != "interval" and attributes[name].ndim != 1:
            raise ValueError(f"fitted attribute {name} must be a list, one value per column")
    first, second = _as_list(attributes[pair[0]]), _as_list(attributes[pair[1]])
    n = len(first)
    if n == 0:
        raise ValueError("a fitted scaler needs at least one score column; the lists are empty")
    if any((1 if ndim == 1 else len(v)) != n for v in attributes.values()):
        raise ValueError("fitted attributes must have one value per column, all of one length")
    if not all(math.isfinite(v) for v in first + second):
        raise ValueError("fitted parameters must be finite numbers, one per column")
    check_pair(first, second)
    check_stream_attributes(attributes)
    return attributes, ndim, checked_names(names, ndim, n)



def check_stream_attributes(attributes: Dict[str, Any]) -> None:
    """The stream's size and bounds (``partial_fit``'s fitted attributes)
    as a stream makes them: 1 to 2^53 scores, a rank error in [0, 1), a
    probability bound in [0, 1], intervals holding their estimates."""

    def values(name: str) -> np.ndarray:
        return np.atleast_1d(np.asarray(attributes[name], dtype=float))

    if "n_samples_seen_" in attributes:
        n = values("n_samples_seen_")
        if not np.all((n >= 1) & (n <= MAX_COUNT)):
            raise ValueError(f"n_samples_seen_ must be in [1, 2^53], got {attributes['n_samples_seen_']!r}")
    for name, top, closed in (("rank_error_", 1.0, False), ("probability_error_", 1.0, True)):
        if name in attributes:
            v = values(name)
            if not np.all((v >= 0) & ((v <= top) if closed else (v < top))):
                interval = f"[0, {top:g}{']' if closed else ')'}"
                raise ValueError(f"{name} must be in {interval}, got {attributes[name]!r}")
    for name in attributes:
        estimate = name[: -len("interval_")]
        if name.endswith("_interval_") and estimate in attributes:
            bounds = np.asarray(attributes[name], dtype=float).reshape(-1, 2)
            v = values(estimate)
            if not np.all((bounds[:, 0] <= v) & (v <= bounds[:, 1])):
                raise ValueError(f"{name} must hold {estimate}, got {attributes[name]!r}")


def checked_names(names: Any, ndim: int, n: int) -> Optional[np.ndarray]:
    """Stored column names as ``feature_names_in_`` holds them."""
    if names is None:
        return None
    checked = np.asarray([str(t) for t in names], dtype=object)
    if ndim != 2 or len(checked) != n:
        raise ValueError("feature_names_in must name each of the fitted score columns")
    return checked


def outprob_version() -> str:
    """The installed outprob's version, which stored state records: the
    one place below the package root that reads it."""
    from .. import __version__

    return __version__


def pickled(attributes: Dict[str, Any]) -> Dict[str, Any]:
    """An estimator's ``__dict__`` in the flat pickle layout."""
    data = {
        k: v for k, v in attributes.items()
        if k not in ("_state", "_stream_mutex") and not (k == "_stream" and v is None)
    }
    state: Optional[State] = attributes.get("_state")
    if state is not None:
        data.update(state.attributes)
        data.update(n_features_in_=state.n_features, _ndim=state.ndim, _negate=state.negate)
        if state.names is not None:
            data["feature_names_in_"] = state.names
    data["_outprob_version"] = outprob_version()
    return data


Stored = Tuple[Dict[str, Any], Any, Any, Optional[bool]]


def unpickled(
    kind: str, params: Dict[str, Any], kinds: Dict[str, Any], data: Dict[str, Any]
) -> Tuple[Dict[str, Any], Optional[Stored]]:
    """The plain attributes of a pickle, and its fitted attributes, ndim,
    names and negation (None if unfitted) for :func:`restore`.

    ``params`` maps the constructor parameters to their defaults: a
    parameter added since the pickle was written takes its default (the
    behaviour of the version that wrote it)."""

    data = dict(data)
    version = data.pop("_outprob_version", "0.1.0")  # 0.1.0 wrote no version
    data.pop("_sklearn_version", None)
    fitted = {n: data.pop(n) for n in kinds if n in data}
    ndim = data.pop("_ndim", None)
    data.pop("n_features_in_", None)
    names = data.pop("feature_names_in_", None)
    negate = data.pop("_negate", None)
    missing = [p for p in params if p not in data and params[p] is inspect.Parameter.empty]
    for p, default in params.items():
        if default is not inspect.Parameter.empty:
            data.setdefault(p, default)
    unknown = [
        k for k in data
        if k not in params and k != "_stream" and not k.startswith(("_sklearn", "_metadata"))
    ]
    if missing or unknown:
        raise ValueError(
            f"cannot load this {kind}: it was pickled by outprob {version}, whose layout "
            f"this outprob {outprob_version()} does not know (missing {missing}, unknown "
            f"{unknown}). Move fitted scalers between versions with to_dict() / "
            "outprob.from_dict(), or refit."
        )
    return data, (None if ndim is None else (fitted, ndim, names, negate))


def _interval(v: Any) -> Tuple[float, float]:
    lo, hi = (float(t) for t in v)
    if not lo <= hi:
        raise ValueError(f"an interval needs lo <= hi, got {v!r}")
    return (lo, hi)


def _as_list(v: Any) -> List[float]:
    if isinstance(v, np.ndarray):
        return [float(t) for t in v.reshape(-1)]
    return [float(v)]


def _builtin(v: Any) -> Any:
    """NumPy scalars as the builtin they hold (for JSON)."""
    return v.item() if isinstance(v, np.generic) else v
