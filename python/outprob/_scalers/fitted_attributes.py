"""Fitted attributes of the scalers (``center_``, ``n_iter_``, ...): one
descriptor reads each from the fitted state the last fit published."""

from __future__ import annotations

from typing import Any, Generic, Tuple, TypeVar, Union, overload

import numpy as np
import numpy.typing as npt

from .._common.exceptions import NotFittedError

_T = TypeVar("_T")

# A fitted attribute's value: one for a 1-D fit, an array of one per column
# for a 2-D fit.
Floats = Union[float, npt.NDArray[np.float64]]
Ints = Union[int, npt.NDArray[np.int_]]
Bools = Union[bool, npt.NDArray[np.bool_]]
Strs = Union[str, npt.NDArray[np.str_]]
Intervals = Union[Tuple[float, float], npt.NDArray[np.float64]]


class Fitted(Generic[_T]):
    """A read-only fitted attribute: its value in the published fit (one
    per column, as an array, after a fit on 2-D scores).

    Before a fit reading it raises :class:`~outprob.NotFittedError`;
    reading one that this fit did not compute (``n_iter_`` without
    M-estimation, ``rank_error_`` without ``partial_fit``) raises
    ``AttributeError``, so ``hasattr`` tells whether the fit has it.

    Parameters
    ----------
    kind : type or "interval"
        The element type (``float``, ``int``, ``bool``, ``str``), or
        ``"interval"`` for a (lo, hi) pair: how ``to_dict`` stores the
        value and ``from_dict`` checks it.
    doc : str
        The attribute's docstring.
    stream : bool
        Made only by ``partial_fit`` (the stream's size and error bounds).
    """

    def __init__(self, kind: Any, doc: str, *, stream: bool = False) -> None:
        self.kind = kind
        self.stream = stream
        self.__doc__ = doc
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, objtype: Any = None) -> "Fitted[_T]": ...
    @overload
    def __get__(self, obj: object, objtype: Any = None) -> _T: ...
    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        state = obj._state
        if state is None:
            raise NotFittedError(
                f"this {type(obj).__name__} is not fitted yet, so it has no {self.name}; "
                "call fit(scores) first"
            )
        try:
            return state.attributes[self.name]
        except KeyError:
            raise AttributeError(
                f"{type(obj).__name__!r} object has no attribute {self.name!r} "
                "(this fit did not compute it)"
            ) from None

    def __set__(self, obj: Any, value: Any) -> None:
        raise AttributeError(f"{self.name} is a fitted attribute: fit() sets it")
