"""Input normalisation shared by the public API (contract §5).

Every array that crosses into the compiled core is float32 or float64,
native byte order and C-contiguous. The caller's array is never modified:
a copy is made only when its dtype, byte order or layout requires one.
"""

from __future__ import annotations

import numbers
from typing import Any, Union

import numpy as np

Spec = Union[str, float]
NAN_POLICIES = ("omit", "raise")


def as_float_array(x: Any, name: str = "scores") -> np.ndarray:
    """`x` as a float32/float64, native-endian, C-contiguous array.

    float32 and float64 keep their type; integers, booleans and other real
    floating types become float64. Complex, string and object data that is
    not numeric raise ``TypeError``.
    """
    a = np.asarray(x)
    kind = a.dtype.kind
    if kind == "f" and a.dtype.itemsize in (4, 8):
        dtype = a.dtype.newbyteorder("=")
    elif kind in "biuf":
        dtype = np.dtype(np.float64)
    elif kind == "O":
        try:
            a = a.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must be real numbers: {exc}") from None
        dtype = a.dtype
    else:
        raise TypeError(f"{name} must be real numbers, got an array of dtype {a.dtype}")
    if a.ndim == 0:
        return np.array(a, dtype=dtype)
    return np.ascontiguousarray(a, dtype=dtype)


def check_nan_policy(nan_policy: str) -> str:
    if nan_policy not in NAN_POLICIES:
        raise ValueError(f"nan_policy must be 'omit' or 'raise', got {nan_policy!r}")
    return nan_policy


# The checks below test the builtin types first: ``isinstance`` against the
# ``numbers`` ABCs costs a microsecond, which matters for per-call overhead
# on small inputs (scoring online).


def check_fraction(value: Any, name: str) -> float:
    if type(value) is float and 0.0 <= value < 1.0:
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number in [0, 1), got {value!r}")
    v = float(value)
    if not 0.0 <= v < 1.0:
        raise ValueError(f"{name} must be in [0, 1), got {value!r}")
    return v


def check_int(value: Any, name: str, minimum: int) -> int:
    if type(value) is int and value >= minimum:
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value!r}")
    return int(value)


def check_positive(value: Any, name: str) -> float:
    if type(value) is float and 0.0 < value < float("inf"):
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
    return check_int(threads, "threads", 1)


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
