"""Input conversion and stored state shared by the online classes."""

from __future__ import annotations

from typing import Any, Dict, Mapping, Type, TypeVar

import numpy as np
import numpy.typing as npt

from .._common.validation import MAX_SEED, as_float_array, check_real

VERSION = 1

_T = TypeVar("_T", bound="PickledAsDict")


def one_d(x: Any, name: str) -> npt.NDArray[np.float64]:
    """``x`` as a C-contiguous 1-D float64 array (a scalar as one value)."""
    a = as_float_array(x, name)
    if a.ndim > 1:
        raise ValueError(f"{name} must be 1-D (a stream in arrival order), got shape {a.shape}")
    return np.ascontiguousarray(a.reshape(-1), dtype=np.float64)


def seed_value(seed: Any) -> int:
    """A seed: an integer in [0, 2**64), the core's bound (contract §5)."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an integer in [0, 2**64), got {type(seed).__name__}")
    if not 0 <= int(seed) <= MAX_SEED:
        raise ValueError(f"seed must be in [0, 2**64), got {seed}")
    return int(seed)


def real_or_none(value: Any, name: str) -> Any:
    """A real parameter as a float (``None`` kept): a bool or text is not a
    number (contract §5); its range is the core's to check."""
    return None if value is None else check_real(value, name)


def stored(data: Any, fmt: str) -> tuple[Dict[str, Any], Dict[str, Any]]:
    """The ``params`` and ``state`` of a dict ``to_dict`` wrote, checked
    for its format and version."""
    if not isinstance(data, Mapping):
        raise TypeError(f"expected the dict {fmt}.to_dict() makes, got {type(data).__name__}")
    if data.get("format") != fmt:
        raise ValueError(f"'format' must be {fmt!r}, got {data.get('format')!r}")
    if data.get("version") != VERSION:
        raise ValueError(
            f"'version' {data.get('version')!r} is not one this outprob reads ({VERSION})"
        )
    out = []
    for key in ("params", "state"):
        value = data.get(key)
        if not isinstance(value, Mapping):
            raise ValueError(f"{key!r} must be a dict, got {type(value).__name__}")
        out.append(dict(value))
    return out[0], out[1]


def param(d: Mapping[str, Any], key: str, where: str = "params") -> Any:
    """``d[key]``, or a ValueError naming the missing key."""
    if key not in d:
        raise ValueError(f"{where!r} lacks {key!r}")
    return d[key]


class PickledAsDict:
    """Pickling through ``to_dict``/``from_dict``, for the online classes:
    a pickle carries the dict a checkpoint stores, so an unpickled object
    passed every check of ``from_dict`` (contract §12, "Stored state (all
    three)"; stored state is untrusted, §5)."""

    def to_dict(self) -> Dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def from_dict(cls: Type[_T], data: Dict[str, Any]) -> _T:
        raise NotImplementedError

    def __getstate__(self) -> Dict[str, Any]:
        return self.to_dict()

    def __setstate__(self, data: Dict[str, Any]) -> None:
        self.__dict__.update(type(self).from_dict(data).__dict__)
