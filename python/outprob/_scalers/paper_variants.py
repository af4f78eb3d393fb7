"""The named scaling variants of the paper (contract §4): a table that
imports no scaler class (and so not scikit-learn), for light importers
such as ``outprob stream``; :mod:`outprob._registry` builds the registry
of every transformation on it."""

from __future__ import annotations

from functools import partial
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, Mapping, NamedTuple, Optional, Tuple, Union
from .._common.public import public

__all__ = ["VARIANTS", "Variant"]

if TYPE_CHECKING:
    from .gaussian import GaussianScaler
    from .linear import LinearScaler


@public("outprob")
class Variant(NamedTuple):
    """Parameters of a named variant: ``center`` and ``scale`` of a
    :class:`~outprob.GaussianScaler`, or both ``None`` for linear scaling."""

    center: Optional[str]
    scale: Optional[str]
    note: str

    def scaler(self, **params: Any) -> Union[GaussianScaler, LinearScaler]:
        """A fresh, unfitted scaler of this variant; ``params`` override the
        other constructor parameters (``trim``, ``nan_policy``, ...)."""
        gaussian, linear = _CLASSES or _import_classes()
        if self.center is None:
            return linear(**params)  # type: ignore[no-any-return]
        return gaussian(self.center, self.scale, **params)  # type: ignore[no-any-return]

    def maker(self) -> Callable[[], Any]:
        """``scaler`` without parameters, as one C-level call (what
        :func:`outprob.scaler` keeps per name)."""
        gaussian, linear = _CLASSES or _import_classes()
        return partial(linear) if self.center is None else partial(gaussian, self.center, self.scale)


#: (GaussianScaler, LinearScaler), imported by the first variant made: this
#: table imports no scaler class (nor scikit-learn) before, and an import
#: statement run at every call costs more than making the scaler.
_CLASSES: Tuple[Any, ...] = ()


def _import_classes() -> Tuple[Any, ...]:
    global _CLASSES
    from .gaussian import GaussianScaler
    from .linear import LinearScaler

    _CLASSES = (GaussianScaler, LinearScaler)
    return _CLASSES


def _gs(center: str, scale: str, note: str = "") -> Variant:
    return Variant(center, scale, note)


VARIANTS: Mapping[str, Variant] = MappingProxyType(
    {
        "linear": Variant(None, None, "linear scaling"),
        "mean_std": _gs("mean", "std", "non-robust Gaussian scaling (GS, Kriegel et al. 2011)"),
        "mean_nmad": _gs("mean", "nmad", "robust scale only; the paper's best overall"),
        "mean_niqr": _gs("mean", "niqr", "robust scale only"),
        "median_std": _gs("median", "std"),
        "median_nmad": _gs("median", "nmad"),
        "median_niqr": _gs("median", "niqr"),
        "trimmed_mean_std": _gs("trimmed_mean", "std", "upper-trimmed mean, alpha = 0.1"),
        "trimmed_mean_nmad": _gs("trimmed_mean", "nmad", "upper-trimmed mean, alpha = 0.1"),
        "trimmed_mean_niqr": _gs("trimmed_mean", "niqr", "upper-trimmed mean, alpha = 0.1"),
        "huber": _gs("huber", "huber", "Huber's proposal 2, Huber's T location"),
        "tukey": _gs("tukey", "tukey", "Huber's proposal 2, Tukey's biweight location"),
    }
)
"""Name → :class:`Variant` for the 12 variants of contract §4."""
