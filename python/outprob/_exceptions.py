"""Exceptions and warning categories of outprob."""


class OutprobWarning(UserWarning):
    """Base class of every warning outprob emits."""


class ZeroScaleWarning(OutprobWarning):
    """A scale estimate was zero and the contract §5 fallback chain
    (chosen scale → niqr → std) supplied another one, or every scale was zero
    (constant scores)."""


class ConvergenceWarning(OutprobWarning):
    """Huber's proposal 2 stopped at ``maxiter`` iterations without meeting
    ``tol``; the last iterate is used (contract §3)."""


class NotFittedError(ValueError, AttributeError):
    """A scaler was used before ``fit`` (as scikit-learn's
    ``NotFittedError``, it is both a ``ValueError`` and an
    ``AttributeError``)."""
