"""Exceptions and warning categories of outprob.

Each one subclasses its scikit-learn counterpart where one exists, so that
``except sklearn.exceptions.NotFittedError`` clauses and
``warnings.filterwarnings("ignore", category=sklearn.exceptions.ConvergenceWarning)``
filters written for scikit-learn apply to outprob too.
"""

from __future__ import annotations

from sklearn.exceptions import ConvergenceWarning as _SklearnConvergenceWarning
from sklearn.exceptions import NotFittedError as _SklearnNotFittedError

__all__ = ["OutprobWarning", "ZeroScaleWarning", "ConvergenceWarning", "NotFittedError", "InputError"]


class OutprobWarning(UserWarning):
    """Base class of every warning outprob emits."""


class ZeroScaleWarning(OutprobWarning):
    """A scale estimate was zero and the contract §5 fallback chain
    (chosen scale → niqr → std) supplied another one, or every scale was zero
    (constant scores)."""


class ConvergenceWarning(OutprobWarning, _SklearnConvergenceWarning):
    """Huber's proposal 2 stopped at ``maxiter`` iterations without meeting
    ``tol``; the last iterate is used (contract §3). Also a
    ``sklearn.exceptions.ConvergenceWarning``."""


class NotFittedError(_SklearnNotFittedError):
    """A scaler was used before ``fit``: a
    ``sklearn.exceptions.NotFittedError``, hence also a ``ValueError`` and an
    ``AttributeError``."""


class InputError(TypeError, ValueError):
    """Scores, probabilities or labels that are not an array of real numbers:
    ragged nesting, a sparse matrix, strings, ``None`` or other objects,
    complex numbers (contract §5). The message says what to pass instead.

    Both a ``TypeError`` (the kind of the data is wrong, as NumPy reports
    objects that are not numbers) and a ``ValueError`` (as NumPy and
    scikit-learn report ragged lists, strings and complex data), so handlers
    written for either catch it.
    """
