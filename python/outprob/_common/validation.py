"""Input normalisation shared by the public API (contract §5).

Every array that crosses into the compiled core is float32 or float64,
native byte order, aligned and C-contiguous. The caller's array is never modified:
a copy is made only when its dtype, byte order or layout requires one.

Each kind of input that is not an array of real numbers gets one
:class:`~outprob.InputError` with one message, whichever entry point
(scalers, ``outprob.stats``, the ``y``/``p`` of ``outprob.metrics``, the
PyOD bridge) received it: ragged nesting, sparse matrices, strings (numeric
ones too: text is never parsed implicitly), ``None`` and other objects,
complex numbers.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np

from .. import _core
from .exceptions import InputError

Spec = Union[str, float]
NAN_POLICIES = ("omit", "raise")


def as_float_array(x: Any, name: str = "scores") -> np.ndarray:
    """`x` as a float32/float64, native-endian, aligned, C-contiguous array.

    float32 and float64 keep their type; integers, booleans and other real
    floating types become float64; object arrays whose elements are all
    real numbers become float64. Anything else raises
    :class:`~outprob.InputError` naming what to pass instead.
    """
    a = x if type(x) is np.ndarray else _to_ndarray(x, name)
    dt = a.dtype
    kind = dt.kind
    if kind == "f" and dt.itemsize in (4, 8):
        flags = a.flags
        if dt.isnative and flags.c_contiguous and flags.aligned:
            return a  # the fast path: nothing to convert
        dtype = dt.newbyteorder("=")
    elif kind in "biuf":
        dtype = np.dtype(np.float64)
    elif kind == "O":
        return _from_objects(a, name)
    else:
        raise _dtype_error(dt, name)
    if a.ndim == 0:
        return np.array(a, dtype=dtype)
    out = np.ascontiguousarray(a, dtype=dtype)
    # ascontiguousarray returns a contiguous buffer as it is, aligned or not
    # (buffers that arrive over the wire or from a file may be unaligned).
    return out if out.flags.aligned else out.copy()


def as_labels(y: Any, name: str = "y_true") -> np.ndarray:
    """0/1 labels (1 = outlier) as a 1-D C-contiguous bool array.

    bool, integer and float arrays holding only 0 and 1 are accepted, and so
    are object arrays of such numbers; strings, ``None`` and NaN are not
    labels.
    """
    a = y if type(y) is np.ndarray else _to_ndarray(y, name)
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {a.shape}")
    if a.dtype == np.bool_:
        return np.ascontiguousarray(a)
    if a.dtype.kind == "O":
        a = _from_objects(a, name, what="labels (0 = inlier, 1 = outlier)")
    elif a.dtype.kind not in "iuf":
        raise _dtype_error(a.dtype, name, what="labels (0 = inlier, 1 = outlier)")
    bad = ~((a == 0) | (a == 1))
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"{name}[{i}] = {a[i].item()!r} is not a label: use 0 (or False) for inliers "
            "and 1 (or True) for outliers"
        )
    return np.ascontiguousarray(a == 1)


def feature_names(x: Any) -> Optional[np.ndarray]:
    """The column names of a DataFrame (pandas, polars, ...) as scikit-learn
    records them in ``feature_names_in_``: an object array of str, or None
    when ``x`` has no column names or none of them is a string."""
    columns = getattr(x, "columns", None)
    if columns is None or isinstance(x, np.ndarray):
        return None
    names = list(columns)
    strings = [isinstance(c, str) for c in names]
    if not any(strings):
        return None
    if not all(strings):
        kinds = sorted({type(c).__name__ for c in names})
        raise TypeError(
            "Feature names are only supported if all input features have string names, "
            f"but your input has {kinds} as feature name / column name types. Convert them "
            "all to strings (e.g. X.columns = X.columns.astype(str)) or to non-strings."
        )
    return np.asarray(names, dtype=object)


def shape_message(name: str, x: np.ndarray, k: int) -> str:
    """scikit-learn's message for scores of the wrong number of columns."""
    got = f"X has {x.shape[1]} features, but " if x.ndim == 2 else ""
    return (
        f"{got}{name} is expecting {k} features as input: it was fitted on {k} score "
        f"columns, so transform needs shape (m, {k}), got shape {x.shape}. "
        f"Reshape your data to (m, {k})."
    )


def warn_names(est: Any, names: Optional[np.ndarray], stacklevel: int) -> None:
    """scikit-learn's warning when only the fit or only ``X`` has names."""
    cls = type(est).__name__
    if names is None:
        message = f"X does not have valid feature names, but {cls} was fitted with feature names"
    else:
        message = f"X has feature names, but {cls} was fitted without feature names"
    warnings.warn(message, UserWarning, stacklevel=stacklevel)


def check_names(est: Any, names: Optional[np.ndarray], fitted: Optional[np.ndarray]) -> None:
    """scikit-learn's rule: the same names in the same order as at fit time,
    with a warning when only one side has names."""
    if names is None and fitted is None:
        return
    if names is None or fitted is None:
        warn_names(est, names, 4)
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


# -- conversion ------------------------------------------------------------------

_STRING_HINT = (
    "text is never parsed, numeric text neither: convert it yourself, "
    "e.g. np.asarray(x, dtype=float)"
)


_BUILTINS = (float, int, list, tuple)


def _to_ndarray(x: Any, name: str) -> np.ndarray:
    if type(x) not in _BUILTINS:
        if hasattr(x, "nnz") and (hasattr(x, "toarray") or hasattr(x, "todense")):
            raise InputError(
                f"{name}: sparse matrices are not supported (a score exists for every "
                "sample, so scores are dense); pass x.toarray()"
            )
        if _is_nullable_pandas(x):
            # pandas' nullable dtypes (Int64, Float64, boolean, pyarrow
            # numbers): their missing value pd.NA is a missing score, NaN here.
            return np.asarray(x.to_numpy(dtype=np.float64, na_value=np.nan))
    try:
        return np.asarray(x)
    except ValueError as exc:  # NumPy >= 1.24 refuses ragged nesting
        raise InputError(_ragged(name) + f" (NumPy: {exc})") from None


def _ragged(name: str) -> str:
    return (
        f"{name} are ragged: nested sequences of different lengths do not form an "
        "array. Pass one score vector (1-D) or a rectangular (n, k) table, one column "
        "per detector"
    )


def _is_nullable_pandas(x: Any) -> bool:
    if not type(x).__module__.startswith("pandas"):
        return False
    dtypes = [x.dtype] if hasattr(x, "dtype") else list(getattr(x, "dtypes", ()))
    return (
        bool(dtypes)
        and any(not isinstance(d, np.dtype) for d in dtypes)
        and all(getattr(d, "kind", "O") in "biuf" for d in dtypes)
    )


def _dtype_error(dt: np.dtype, name: str, what: str = "real numbers") -> InputError:
    kind = dt.kind
    if kind == "c":
        return InputError(
            f"Complex data not supported: {name} must be {what}, got dtype {dt}; "
            "pass x.real (or abs(x)) if that is what you mean"
        )
    if kind in "US":
        return InputError(
            f"{name} must be {what}, got strings (dtype {dt}): {_STRING_HINT}"
        )
    if kind in "mM":
        return InputError(
            f"{name} must be {what}, got dates or durations (dtype {dt}); "
            "convert them to numbers first"
        )
    return InputError(f"{name} must be {what}, got an array of dtype {dt}")


def _is_real(t: type) -> bool:
    return issubclass(t, (numbers.Real, np.bool_)) and not issubclass(t, (str, bytes))


def _from_objects(a: np.ndarray, name: str, what: str = "real numbers") -> np.ndarray:
    """An object array as float64, if every element is a real number."""
    items: List[Any] = a.ravel().tolist() if a.ndim else [a.item()]
    bad = [t for t in set(map(type, items)) if not _is_real(t)]
    if bad:
        i = next(k for k, v in enumerate(items) if type(v) in bad)
        raise _element_error(items[i], _position(name, a.shape, i), name, what)
    try:
        out = a.astype(np.float64)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError(f"{name} must be {what}: {exc}") from None
    return np.ascontiguousarray(out) if out.ndim else out


def _position(name: str, shape: Tuple[int, ...], flat: int) -> str:
    if not shape:
        return name
    index = np.unravel_index(flat, shape)
    return f"{name}[{', '.join(str(int(i)) for i in index)}]"


def _element_error(v: Any, where: str, name: str, what: str) -> InputError:
    if isinstance(v, (str, bytes)):
        return InputError(f"{where} is the string {v!r}, but {name} must be {what}: {_STRING_HINT}")
    if v is None or type(v).__name__ in ("NAType", "NaTType"):
        return InputError(
            f"{where} is {v!r}, but {name} must be {what}: mark a missing value as "
            "float('nan') (NaN is omitted when fitting and kept by transform, contract §5)"
        )
    if isinstance(v, (list, tuple, np.ndarray)):
        return InputError(_ragged(name) + f" ({where} is a {type(v).__name__})")
    if isinstance(v, (complex, np.complexfloating)):
        return InputError(
            f"Complex data not supported: {where} is {v!r}, but {name} must be {what}; "
            "pass x.real (or abs(x)) if that is what you mean"
        )
    t = type(v).__name__
    # "argument must be ... string ... number": the wording scikit-learn's
    # estimator checks expect for an object that is not a number.
    return InputError(
        f"{where} is a {t}: every argument must be a real number, not a string, None or "
        f"a {t}; pass numbers only ({name} must be {what})"
    )


def check_nan_policy(nan_policy: str) -> str:
    if nan_policy not in NAN_POLICIES:
        raise ValueError(f"nan_policy must be 'omit' or 'raise', got {nan_policy!r}")
    return nan_policy


# The checks below test the builtin types first: an isinstance test against
# the ``numbers`` ABCs is slow next to a type test, and the checks run on
# every call, small ones included (scoring online).


def check_fraction(value: Any, name: str) -> float:
    if type(value) is float and 0.0 <= value < 1.0:
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number in [0, 1), got {value!r}")
    v = float(value)
    if not 0.0 <= v < 1.0:
        raise ValueError(f"{name} must be in [0, 1), got {value!r}")
    return v


#: The core's bounds of every size and count parameter (contract §5,
#: "Bounds of size and count parameters"; ``outprob_core::limits``), by key:
#: (the parameter's name, smallest, largest). The rule lives in the core,
#: which checks each where it takes the parameter; :func:`check_count` checks
#: a Python int of any size against the same numbers before it crosses (an
#: int beyond 64 bits cannot cross at all).
LIMITS: Dict[str, Tuple[str, int, int]] = {
    key: (name, lo, hi) for key, name, lo, hi in _core.limits()
}
#: Largest ``maxiter`` of M-estimation (contract §5).
MAX_ITER = LIMITS["maxiter"][2]
#: The streaming bounds (contract §5, §9): the KLL sketch's k, a window, a
#: count of scores (exact as doubles) and a seed.
MIN_K, MAX_K = LIMITS["sketch_k"][1:]
MAX_WINDOW = LIMITS["window"][2]
MAX_COUNT = LIMITS["count"][2]
MAX_SEED = LIMITS["seed"][2]
#: The most threads a call may ask for (each count gets a kept pool).
MAX_THREADS = LIMITS["threads"][2]


def check_int(value: Any, name: str, minimum: int, maximum: Optional[int] = None) -> int:
    """An integer parameter (a Python or NumPy integer, not a bool) in
    ``[minimum, maximum]``: ``TypeError`` for another type, ``ValueError``
    outside the range, whatever the size of the int."""
    if type(value) is int and value >= minimum and (maximum is None or value <= maximum):
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value!r}")
    if maximum is not None and int(value) > maximum:
        raise ValueError(f"{name} must be at most {maximum}, got {value!r}")
    return int(value)


def check_count(value: Any, key: str) -> int:
    """A size or count parameter checked against the core's bound ``key`` of
    :data:`LIMITS` (its error names the parameter)."""
    name, lo, hi = LIMITS[key]
    return check_int(value, name, lo, hi)


_INF = float("inf")


def check_real(value: Any, name: str) -> float:
    """A real-number parameter (not a bool, not text: ``"0.1"`` is never
    parsed) as a float; its range is the core's to check."""
    if type(value) is float:
        return value
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    return float(value)


def check_positive(value: Any, name: str) -> float:
    if type(value) is float and 0.0 < value < _INF:
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a positive number, got {value!r}")
    v = float(value)
    if not (v > 0.0 and np.isfinite(v)):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return v


def estimator_spec(value: Any, name: str) -> Spec:
    """An estimator name (checked by the core) or a fixed real number."""
    if type(value) is str:
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be an estimator name or a number, got {value!r}")
    return float(value)


def check_threads(threads: Any) -> int:
    """``threads=`` as the core takes it: 0 for "every core" (``None``), else
    a positive count. The environment variable ``OUTPROB_NUM_THREADS`` caps
    either. Results never depend on it."""
    if threads is None:
        return 0
    return check_count(threads, "threads")


def check_out(out: Any, like: np.ndarray) -> np.ndarray:
    """Checks an ``out=`` array: same shape and dtype as the scores,
    C-contiguous and writeable."""
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a numpy.ndarray, got {type(out).__name__}")
    if out.shape != like.shape or out.dtype != like.dtype:
        raise ValueError(
            f"out must have shape {like.shape} and dtype {like.dtype}, "
            f"got shape {out.shape} and dtype {out.dtype}"
        )
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError("out must be C-contiguous and writeable")
    return out
