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
from typing import Any, Callable, Dict, Optional, Tuple, TypeVar

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
    ``__dict__``, where scikit-learn estimators keep them), its caches and,
    per purpose, the entry found last (a class fitted again and again with
    one parameter set finds it without hashing the set)."""

    __slots__ = ("cls", "values", "caches", "last")

    def __init__(self, cls: Any, names: Tuple[str, ...]) -> None:
        self.cls = cls
        getter = operator.itemgetter(*names) if names else (lambda d: ())
        # itemgetter of one name returns the value itself, not a 1-tuple.
        self.values: Callable[[Dict[str, Any]], Any] = (
            (lambda d: (getter(d),)) if len(names) == 1 else getter
        )
        self.caches: Dict[str, Dict[Tuple[Any, ...], Tuple[Tuple[Any, ...], Any]]] = {}
        self.last: Dict[str, Tuple[Tuple[Any, ...], Any]] = {}


def _memo_of(cls: Any) -> _Memo:
    # A class attribute, so read through the type's attribute cache; a
    # subclass finds its parent's memo (other parameters) and makes its own.
    memo: Optional[_Memo] = getattr(cls, "_checked_memo", None)
    if memo is None or memo.cls is not cls:
        memo = _Memo(cls, tuple(cls._get_param_names()))
        setattr(cls, "_checked_memo", memo)
    return memo


def snapshot(obj: Any) -> Optional[Tuple[Any, ...]]:
    """``obj``'s constructor parameters, the very objects, or None where one
    is of a type whose value may change in place (or is kept elsewhere):
    what :func:`unchanged` compares a later call's parameters with."""
    try:
        values = _memo_of(type(obj)).values(obj.__dict__)
    except KeyError:
        return None
    return values if IMMUTABLE.issuperset(map(type, values)) else None


def unchanged(obj: Any, seen: Optional[Tuple[Any, ...]]) -> bool:
    """Whether ``obj``'s parameters are the very objects of ``seen`` (a
    :func:`snapshot` of ``obj`` itself: no hashing, no cache lookup)."""
    if seen is None:
        return False
    try:
        values = _memo_of(type(obj)).values(obj.__dict__)
    except KeyError:
        return False
    return all(map(_is, values, seen))


def cached(obj: Any, purpose: str, make: Callable[[], _T]) -> _T:
    """``make()`` — a function of ``obj``'s constructor parameters alone
    that checks them — or its result for the same parameter objects seen
    before by ``obj``'s class for this ``purpose``. A ``make`` that raises
    caches nothing."""
    cls = type(obj)
    memo: Optional[_Memo] = getattr(cls, "_checked_memo", None)
    if memo is None or memo.cls is not cls:
        memo = _memo_of(cls)
    try:
        values = memo.values(obj.__dict__)
    except KeyError:  # a parameter kept elsewhere
        return make()
    last = memo.last.get(purpose)
    if last is not None and all(map(_is, values, last[0])):
        return last[1]  # type: ignore[no-any-return]
    cache = memo.caches.get(purpose)
    if cache is None:
        cache = memo.caches.setdefault(purpose, {})
    try:
        hit = cache.get(values)
    except TypeError:  # unhashable
        return make()
    if hit is not None and all(map(_is, values, hit[0])):
        memo.last[purpose] = hit
        return hit[1]  # type: ignore[no-any-return]
    made = make()
    if IMMUTABLE.issuperset(map(type, values)):
        if len(cache) >= LIMIT:
            cache.clear()
        entry = (values, made)
        cache[values] = entry
        memo.last[purpose] = entry
    return made
