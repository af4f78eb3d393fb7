"""Public names report the module users import them from.

A class defined in ``outprob/_scalers/gaussian.py`` is
``outprob.GaussianScaler`` to its users: its ``__module__`` says so, which
is what ``repr(type(x))``, the documentation and pickles read — a pickle
names ``outprob.GaussianScaler`` and so outlives any move of the code
inside the package. Doctest then looks for the class's examples in that
public module, whose ``__test__`` (:func:`doctest_table`) lists them.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Dict, Iterable, TypeVar, Union

# Classes, and the public functions defined in private modules
# (``outprob.label_trim_candidates``).
T = TypeVar("T", bound=Union[type, Callable[..., Any]])


def public(module: str) -> Callable[[T], T]:
    """Class (or function) decorator: report it as a member of ``module``."""

    def mark(cls: T) -> T:
        cls.__module__ = module
        return cls

    return mark


def doctest_table(classes: Iterable[type]) -> Dict[str, Any]:
    """A public module's ``__test__``: its public classes and their own
    methods. Doctest looks for a class's examples in the module its
    ``__module__`` names, where it finds the class but skips its methods
    (they belong to the defining module's globals); listing them here
    collects every example once."""
    table: Dict[str, Any] = {}
    for cls in classes:
        table[cls.__name__] = cls
        for attr, value in vars(cls).items():
            if isinstance(value, property):
                value = value.fget
            elif isinstance(value, (classmethod, staticmethod)):
                value = value.__func__
            if inspect.isroutine(value) and getattr(value, "__doc__", None):
                table[f"{cls.__name__}.{attr}"] = value
    return table
