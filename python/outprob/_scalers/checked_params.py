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
every call. Before the lookup, the entry found last for the class and
purpose is tried by an identity test generated for it
(:func:`identity_test`), and a stream keeps such a test of the scaler's
parameters it last checked (:func:`snapshot`, :func:`unchanged`); each
test holds its objects too.
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
    """One class's parameter names and getter of their values (from the
    instance's ``__dict__``, where scikit-learn estimators keep them) and
    its caches. The entry found last per purpose is in
    :func:`found_last`."""

    __slots__ = ("cls", "names", "values", "caches")

    def __init__(self, cls: Any, names: Tuple[str, ...]) -> None:
        self.cls = cls
        self.names = names
        getter = operator.itemgetter(*names) if names else (lambda d: ())
        # itemgetter of one name returns the value itself, not a 1-tuple.
        self.values: Callable[[Dict[str, Any]], Any] = (
            (lambda d: (getter(d),)) if len(names) == 1 else getter
        )
        self.caches: Dict[str, Dict[Tuple[Any, ...], Tuple[Tuple[Any, ...], Any]]] = {}


def _memo_of(cls: Any) -> _Memo:
    # A class attribute, so read through the type's attribute cache; a
    # subclass finds its parent's memo (other parameters) and makes its own.
    memo: Optional[_Memo] = getattr(cls, "_checked_memo", None)
    if memo is None or memo.cls is not cls:
        memo = _Memo(cls, tuple(cls._get_param_names()))
        setattr(cls, "_checked_memo", memo)
    return memo


Test = Callable[[Any], bool]

#: Per purpose, class → (identity test, value) of the entry :func:`cached`
#: found last for that class: a class fitted again and again with one
#: parameter set finds it without making or hashing the tuple of values.
_LAST: Dict[str, Dict[Any, Tuple[Test, Any]]] = {}


def found_last(purpose: str) -> Dict[Any, Tuple[Test, Any]]:
    """Class → (identity test, value) of the entry :func:`cached` found
    last for ``purpose``: a caller on a latency path tries it inline (one
    dict read and the test, no frame of :func:`cached`) and calls
    :func:`cached` when the test fails or raises ``AttributeError``."""
    return _LAST.setdefault(purpose, {})


def identity_test(names: Tuple[str, ...], values: Tuple[Any, ...]) -> Test:
    """A function of an estimator: whether its attributes ``names`` are
    ``values``, the very objects (AttributeError where one is missing).
    Generated as one expression (``o.center is _0 and ...``, the names
    being identifiers of a constructor's signature), so that a call with
    the parameter set found last makes no tuple of its values, hashes
    nothing and reads no ``__dict__`` (which Python makes on demand)."""
    if not names:
        return lambda d: True
    for name in names:
        if not name.isidentifier():  # pragma: no cover - a signature's names are
            raise ValueError(f"not a parameter name: {name!r}")
    bound = ", ".join(f"_{i}=_v[{i}]" for i in range(len(names)))
    test = " and ".join(f"o.{name} is _{i}" for i, name in enumerate(names))
    made: Test = eval(f"lambda o, {bound}: {test}", {"_v": values})  # noqa: S307
    return made


def snapshot(obj: Any) -> Optional[Test]:
    """The identity test of ``obj``'s constructor parameters as they are
    now (:func:`identity_test`), or None where one is of a type whose value
    may change in place (or is kept elsewhere): what :func:`unchanged`
    checks a later call's parameters with."""
    memo = _memo_of(type(obj))
    try:
        values = memo.values(obj.__dict__)
    except KeyError:
        return None
    if not IMMUTABLE.issuperset(map(type, values)):
        return None
    return identity_test(memo.names, values)


def unchanged(obj: Any, seen: Optional[Test]) -> bool:
    """Whether ``obj``'s parameters are the very objects ``seen`` (a
    :func:`snapshot` of ``obj`` itself) tests for."""
    if seen is None:
        return False
    try:
        return seen(obj)
    except AttributeError:
        return False


def cached(obj: Any, purpose: str, make: Callable[[], _T]) -> _T:
    """``make()`` — a function of ``obj``'s constructor parameters alone
    that checks them — or its result for the same parameter objects seen
    before by ``obj``'s class for this ``purpose``. A ``make`` that raises
    caches nothing."""
    cls = type(obj)
    memo: Optional[_Memo] = getattr(cls, "_checked_memo", None)
    if memo is None or memo.cls is not cls:
        memo = _memo_of(cls)
    lasts = _LAST.get(purpose)
    if lasts is None:
        lasts = found_last(purpose)
    last = lasts.get(cls)
    try:
        if last is not None and last[0](obj):
            return last[1]  # type: ignore[no-any-return]
        values = memo.values(obj.__dict__)
    except (KeyError, AttributeError):  # a parameter kept elsewhere
        return make()
    cache = memo.caches.get(purpose)
    if cache is None:
        cache = memo.caches.setdefault(purpose, {})
    try:
        hit = cache.get(values)
    except TypeError:  # unhashable
        return make()
    if hit is not None and all(map(_is, values, hit[0])):
        lasts[cls] = (identity_test(memo.names, hit[0]), hit[1])
        return hit[1]  # type: ignore[no-any-return]
    made = make()
    if IMMUTABLE.issuperset(map(type, values)):
        if len(cache) >= LIMIT:
            cache.clear()
        cache[values] = (values, made)
        lasts[cls] = (identity_test(memo.names, values), made)
    return made
