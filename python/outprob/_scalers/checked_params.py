"""What a scaler makes of its checked parameters (the core's fit
specification, the streaming parameters), cached per class.

A small fit spends more time checking its parameters than fitting, and
``partial_fit`` checks them on every batch. The parameters change between
calls only through ``set_params`` or plain assignment (scikit-learn allows
both), so each call reads them anew — but a parameter set seen before, as
the very same objects, is not checked again. The cache finds an entry by
the values' equality and takes it only when each value is the very object
the entry holds (equal values may still check differently: ``True == 1``,
``-0.0 == 0.0``, a ``str`` subclass); only values of immutable builtin and
NumPy scalar types are kept, so the same object holds the same value, and
the entry keeps its objects alive, so their identities are not reused.
Values of any other type (a list, an array, a subclass) are checked at
every call.
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Dict, Tuple, TypeVar

import numpy as np

_T = TypeVar("_T")

#: Types whose instances never change value.
IMMUTABLE = frozenset(
    {str, int, float, bool, type(None), np.float64, np.float32, np.int64, np.int32, np.bool_}
)
#: Parameter sets kept per class and purpose (a grid search makes many).
LIMIT = 64

_is = operator.is_


class _Memo:
    """One class's getter of its parameter values (from the instance's
    ``__dict__``, where scikit-learn estimators keep them) and its caches."""

    __slots__ = ("values", "caches")

    def __init__(self, names: Tuple[str, ...]) -> None:
        getter = operator.itemgetter(*names) if names else (lambda d: ())
        # itemgetter of one name returns the value itself, not a 1-tuple.
        self.values: Callable[[Dict[str, Any]], Any] = (
            (lambda d: (getter(d),)) if len(names) == 1 else getter
        )
        self.caches: Dict[str, Dict[Tuple[Any, ...], Tuple[Tuple[Any, ...], Any]]] = {}


def cached(obj: Any, purpose: str, make: Callable[[], _T]) -> _T:
    """``make()`` — a function of ``obj``'s constructor parameters alone
    that checks them — or its result for the same parameter objects seen
    before by ``obj``'s class for this ``purpose``. A ``make`` that raises
    caches nothing."""
    cls = type(obj)
    memo = cls.__dict__.get("_checked_memo")
    if memo is None:
        memo = _Memo(tuple(cls._get_param_names()))
        setattr(cls, "_checked_memo", memo)
    cache = memo.caches.get(purpose)
    if cache is None:
        cache = memo.caches.setdefault(purpose, {})
    try:
        values = memo.values(obj.__dict__)
        hit = cache.get(values)
    except (KeyError, TypeError):  # a parameter kept elsewhere, or unhashable
        return make()
    if hit is not None and all(map(_is, values, hit[0])):
        return hit[1]  # type: ignore[no-any-return]
    made = make()
    if IMMUTABLE.issuperset(map(type, values)):
        if len(cache) >= LIMIT:
            cache.clear()
        cache[values] = (values, made)
    return made
