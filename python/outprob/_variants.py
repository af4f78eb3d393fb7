"""The registry of every transformation reachable by name (contract §10),
with the named scaling variants of the paper (contract §4)."""

from __future__ import annotations

import difflib
from functools import partial
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, Literal, Mapping, NamedTuple, Union, overload

from ._base import ScalerBase
from ._gaussian import GaussianScaler
from ._linear import LinearScaler
from ._paper_variants import VARIANTS, Variant

if TYPE_CHECKING:
    from ._conformal import ConformalScaler
    from ._mixture import MixtureScaler
    from ._rank import LogRankScaler, RankScaler
    from ._sigmoid import SigmoidScaler
    from ._top_k import TopKScaler

__all__ = ["TRANSFORMATIONS", "Transformation", "VARIANTS", "Variant", "scaler"]


class Transformation(NamedTuple):
    """A transformation reachable by name through :func:`scaler`."""

    #: Returns a fresh, unfitted scaler; ``**params`` are passed through.
    factory: Callable[..., Any]
    note: str


def _gamma(**params: Any) -> Any:
    from ._gamma import GammaScaler

    return GammaScaler("moments", **params)


def _robust_gamma(**params: Any) -> Any:
    from ._gamma import GammaScaler

    return GammaScaler("quantiles", **params)


def _conformal(**params: Any) -> Any:
    from ._conformal import ConformalScaler

    return ConformalScaler(**params)


def _conformal_trimmed(**params: Any) -> Any:
    from ._conformal import ConformalScaler

    return ConformalScaler(**{"contamination": "auto", **params})


def _transformations() -> Mapping[str, Transformation]:
    from ._mixture import MixtureScaler
    from ._rank import LogRankScaler, RankScaler
    from ._sigmoid import SigmoidScaler
    from ._top_k import TopKScaler

    table = {name: Transformation(v.scaler, v.note) for name, v in VARIANTS.items()}
    table.update(
        trimmed_mean_std_auto=Transformation(
            partial(GaussianScaler, "trimmed_mean", "std", trim="auto"),
            "upper-trimmed mean, trim chosen without labels (Q-Q criterion)",
        ),
        trimmed_mean_nmad_auto=Transformation(
            partial(GaussianScaler, "trimmed_mean", "nmad", trim="auto"),
            "upper-trimmed mean, trim chosen without labels (Q-Q criterion)",
        ),
        trimmed_mean_niqr_auto=Transformation(
            partial(GaussianScaler, "trimmed_mean", "niqr", trim="auto"),
            "upper-trimmed mean, trim chosen without labels (Q-Q criterion)",
        ),
        gamma=Transformation(_gamma, "gamma scaling, method of moments (Kriegel et al. 2011)"),
        robust_gamma=Transformation(
            _robust_gamma, "gamma scaling fitted to the quartiles (robust to the upper quarter)"
        ),
        rank=Transformation(RankScaler, "mid-rank of the fitted scores (ELKI RankingPseudo)"),
        log_rank=Transformation(LogRankScaler, "log1p(mid-rank)/ln 2 (ELKI LogRankingPseudo)"),
        top_k=Transformation(TopKScaler, "1 for the k highest fitted scores (ELKI TopK)"),
        sigmoid=Transformation(SigmoidScaler, "sigmoid fitted by EM (Gao & Tan 2006)"),
        mixture=Transformation(
            MixtureScaler, "exponential inliers + Gaussian outliers, posterior (Gao & Tan 2006)"
        ),
        conformal=Transformation(
            _conformal, "1 - conformal p-value (Bates et al. 2023), contract §11"
        ),
        conformal_trimmed=Transformation(
            _conformal_trimmed,
            "1 - conformal p-value, calibration's upper tail trimmed (contamination='auto')",
        ),
    )
    return MappingProxyType(table)


TRANSFORMATIONS: Mapping[str, Transformation] = _transformations()
"""Name → :class:`Transformation`: the 12 variants of :data:`VARIANTS` and the
transformations beyond the paper (contract §10)."""


PaperName = Literal[
    "linear", "mean_std", "mean_nmad", "mean_niqr", "median_std", "median_nmad",
    "median_niqr", "trimmed_mean_std", "trimmed_mean_nmad", "trimmed_mean_niqr",
    "huber", "tukey",
]  # fmt: skip


@overload
def scaler(name: PaperName, **params: Any) -> Union[GaussianScaler, LinearScaler]: ...
@overload
def scaler(name: Literal["rank"], **params: Any) -> RankScaler: ...
@overload
def scaler(name: Literal["log_rank"], **params: Any) -> LogRankScaler: ...
@overload
def scaler(name: Literal["top_k"], **params: Any) -> TopKScaler: ...
@overload
def scaler(name: Literal["sigmoid"], **params: Any) -> SigmoidScaler: ...
@overload
def scaler(name: Literal["mixture"], **params: Any) -> MixtureScaler: ...
@overload
def scaler(name: Literal["conformal", "conformal_trimmed"], **params: Any) -> ConformalScaler: ...
@overload
def scaler(name: str, **params: Any) -> ScalerBase: ...
def scaler(name: str, **params: Any) -> ScalerBase:
    """A fresh, unfitted scaler for a named transformation of
    :data:`TRANSFORMATIONS` (the 12 paper variants of :data:`VARIANTS` and
    those of contract §10).

    Parameters
    ----------
    name : str
        ``"linear"``, ``"mean_std"``, ``"mean_nmad"``, ..., ``"tukey"``,
        ``"gamma"``, ``"robust_gamma"``, ``"rank"``, ``"log_rank"``,
        ``"top_k"``, ``"sigmoid"``, ``"mixture"``, ``"conformal"``,
        ``"conformal_trimmed"``
    **params
        Further constructor parameters, e.g. ``higher_is_outlier=False``.

    Examples
    --------
    >>> import outprob
    >>> outprob.scaler("median_nmad")
    GaussianScaler(center='median', scale='nmad')
    >>> outprob.scaler("robust_gamma")
    GammaScaler(method='quantiles')
    """
    try:
        entry = TRANSFORMATIONS[name]
    except (KeyError, TypeError):
        close = difflib.get_close_matches(str(name), list(TRANSFORMATIONS), n=3)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        raise ValueError(
            f"unknown variant {name!r}{hint} Known variants: {', '.join(TRANSFORMATIONS)}"
        ) from None
    made: ScalerBase = entry.factory(**params)
    return made
