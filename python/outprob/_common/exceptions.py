"""Exceptions and warning categories of outprob.

``NotFittedError`` and ``ConvergenceWarning`` subclass their scikit-learn
counterparts, so that ``except sklearn.exceptions.NotFittedError`` clauses
and ``warnings.filterwarnings("ignore",
category=sklearn.exceptions.ConvergenceWarning)`` filters written for
scikit-learn apply to outprob too. They are made on first use (PEP 562):
importing scikit-learn imports pandas too when it is installed, a cost that
``outprob.stats``, ``outprob.metrics`` and ``outprob.compare`` do not pay
unless they warn.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Dict

from .public import public

__all__ = ["OutprobWarning", "ZeroScaleWarning", "ConvergenceWarning", "NotFittedError", "InputError"]


@public("outprob")
class OutprobWarning(UserWarning):
    """Base class of every warning outprob emits."""


@public("outprob")
class ZeroScaleWarning(OutprobWarning):
    """A scale estimate was zero and the contract §5 fallback chain
    (chosen scale → niqr → std) supplied another one, or every scale was zero
    (constant scores)."""


@public("outprob")
class InputError(TypeError, ValueError):
    """Scores, probabilities or labels that are not an array of real numbers:
    ragged nesting, a sparse matrix, strings, ``None`` or other objects,
    complex numbers (contract §5). The message says what to pass instead.

    Both a ``TypeError`` (the kind of the data is wrong, as NumPy reports
    objects that are not numbers) and a ``ValueError`` (as NumPy and
    scikit-learn report ragged lists, strings and complex data), so handlers
    written for either catch it.
    """


class NotIncrementalError(AttributeError, TypeError):
    """``partial_fit``, ``merge`` or ``refit`` of a scaler that cannot be
    fitted incrementally: a ``TypeError`` (contract §9) and an
    ``AttributeError``, so that ``hasattr(scaler, "partial_fit")`` is false
    and tools that probe for incremental learners (scikit-learn's checks)
    pass it by."""


_CONVERGENCE_DOC = """Huber's proposal 2 stopped at ``maxiter`` iterations without meeting
    ``tol``; the last iterate is used (contract §3). Also a
    ``sklearn.exceptions.ConvergenceWarning``."""
_NOT_FITTED_DOC = """A scaler was used before ``fit``: a
    ``sklearn.exceptions.NotFittedError``, hence also a ``ValueError`` and an
    ``AttributeError``."""

if TYPE_CHECKING:  # scikit-learn publishes no types: its classes, as they are

    class _SklearnConvergenceWarning(UserWarning): ...

    class _SklearnNotFittedError(ValueError, AttributeError): ...

    class ConvergenceWarning(OutprobWarning, _SklearnConvergenceWarning): ...

    class NotFittedError(_SklearnNotFittedError): ...

else:
    _lock = threading.Lock()

    def _made() -> Dict[str, type]:
        from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning
        from sklearn.exceptions import NotFittedError as SklearnNotFittedError

        made = {
            "ConvergenceWarning": type(
                "ConvergenceWarning",
                (OutprobWarning, SklearnConvergenceWarning),
                {"__doc__": _CONVERGENCE_DOC, "__module__": "outprob"},
            ),
            "NotFittedError": type(
                "NotFittedError",
                (SklearnNotFittedError,),
                {"__doc__": _NOT_FITTED_DOC, "__module__": "outprob"},
            ),
        }
        return made

    def __getattr__(name: str) -> Any:
        if name not in ("ConvergenceWarning", "NotFittedError"):
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        with _lock:  # one class object, whichever thread asks first
            if name not in globals():
                globals().update(_made())
        return globals()[name]
