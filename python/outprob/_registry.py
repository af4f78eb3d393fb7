"""Names and stored dicts to scalers (contract §4, §7, §10): the registry
of every transformation reachable by name (:func:`scaler`,
:data:`TRANSFORMATIONS`, the paper's :data:`VARIANTS`), and reading back a
stored scaler (:func:`from_dict`) or a stored map (:func:`load_map`).

It sits above every scaler package and imports each scaler class only when
a name or a stored dict asks for it: reading a stored map through
:func:`load_map` imports no scikit-learn, and the registry itself is light.
"""

from __future__ import annotations

import difflib
import importlib
import json
from functools import partial
from types import MappingProxyType
from typing import (
    TYPE_CHECKING, Any, Callable, Dict, Literal, Mapping, NamedTuple, Optional, Type, TypeVar,
    Union, overload,
)  # fmt: skip

from ._common.public import public
from ._maps.fitted_map import FORMAT, FittedMap, read_map
from ._scalers.paper_variants import VARIANTS, Variant

if TYPE_CHECKING:
    from ._conformal.scaler import ConformalScaler
    from ._scalers.base import ScalerBase
    from ._scalers.gamma import GammaScaler
    from ._scalers.gaussian import GaussianScaler
    from ._scalers.linear import LinearScaler
    from ._scalers.mixture import MixtureScaler
    from ._scalers.rank import LogRankScaler, RankScaler
    from ._scalers.sigmoid import SigmoidScaler
    from ._scalers.top_k import TopKScaler

__all__ = [
    "TRANSFORMATIONS", "Transformation", "VARIANTS", "Variant", "from_dict", "load_map", "scaler",
]  # fmt: skip

#: Where each scaler class lives, by its public name.
_HOMES = {
    "GaussianScaler": "._scalers.gaussian",
    "LinearScaler": "._scalers.linear",
    "GammaScaler": "._scalers.gamma",
    "RankScaler": "._scalers.rank",
    "LogRankScaler": "._scalers.rank",
    "TopKScaler": "._scalers.top_k",
    "SigmoidScaler": "._scalers.sigmoid",
    "MixtureScaler": "._scalers.mixture",
    "ConformalScaler": "._conformal.scaler",
}


def _class(name: str) -> Type[Any]:
    """The scaler class of that public name, imported on first use."""
    cls: Type[Any] = getattr(importlib.import_module(_HOMES[name], __package__), name)
    return cls


class _Factory:
    """A scaler class with fixed parameters, imported when called (a
    picklable, printable ``functools.partial`` of a class not yet
    imported)."""

    __slots__ = ("name", "fixed")

    def __init__(self, name: str, **fixed: Any) -> None:
        self.name, self.fixed = name, fixed

    def __call__(self, **params: Any) -> Any:
        return _class(self.name)(**{**self.fixed, **params})

    def maker(self) -> Callable[[], Any]:
        """The call without parameters, as one C-level call."""
        cls: Callable[..., Any] = _class(self.name)
        return partial(cls, **self.fixed)

    def __repr__(self) -> str:
        args = "".join(f", {k}={v!r}" for k, v in self.fixed.items())
        return f"{self.name}{'(' + args[2:] + ')' if args else ''}"


@public("outprob")
class Transformation(NamedTuple):
    """A transformation reachable by name through :func:`scaler`."""

    #: Returns a fresh, unfitted scaler; ``**params`` are passed through.
    factory: Callable[..., Any]
    note: str


def _transformations() -> Mapping[str, Transformation]:
    table = {name: Transformation(v.scaler, v.note) for name, v in VARIANTS.items()}
    auto = "upper-trimmed mean, trim chosen without labels (Q-Q criterion)"
    for scale in ("std", "nmad", "niqr"):
        table[f"trimmed_mean_{scale}_auto"] = Transformation(
            _Factory("GaussianScaler", center="trimmed_mean", scale=scale, trim="auto"), auto)
    table.update(
        gamma=Transformation(_Factory("GammaScaler", method="moments"),
                             "gamma scaling, method of moments (Kriegel et al. 2011)"),
        robust_gamma=Transformation(
            _Factory("GammaScaler", method="quantiles"),
            "gamma scaling fitted to the quartiles (robust to the upper quarter)"),
        rank=Transformation(_Factory("RankScaler"),
                            "mid-rank of the fitted scores (ELKI RankingPseudo)"),
        log_rank=Transformation(_Factory("LogRankScaler"),
                                "log1p(mid-rank)/ln 2 (ELKI LogRankingPseudo)"),
        top_k=Transformation(_Factory("TopKScaler"),
                             "1 for the k highest fitted scores (ELKI TopK)"),
        sigmoid=Transformation(_Factory("SigmoidScaler"),
                               "sigmoid fitted by EM (Gao & Tan 2006)"),
        mixture=Transformation(
            _Factory("MixtureScaler"),
            "exponential inliers + Gaussian outliers, posterior (Gao & Tan 2006)"),
        conformal=Transformation(
            _Factory("ConformalScaler"), "1 - conformal p-value (Bates et al. 2023), contract §11"),
        conformal_trimmed=Transformation(
            _Factory("ConformalScaler", contamination="auto"),
            "1 - conformal p-value, calibration's upper tail trimmed (contamination='auto')"),
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
    if not params and type(name) is str:
        made_by = _MAKERS.get(name)
        if made_by is not None:
            made_now: ScalerBase = made_by()
            return made_now
    try:
        entry = TRANSFORMATIONS[name]
    except (KeyError, TypeError):
        close = difflib.get_close_matches(str(name), list(TRANSFORMATIONS), n=3)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        raise ValueError(
            f"unknown variant {name!r}{hint} Known variants: {', '.join(TRANSFORMATIONS)}"
        ) from None
    made: ScalerBase = entry.factory(**params)
    if not params:
        # A _Factory, or a Variant's bound method ``scaler``.
        factory: Any = getattr(entry.factory, "__self__", entry.factory)
        _MAKERS[name] = factory.maker()
    return made


#: Name → the scaler class with the name's fixed parameters bound, made by
#: the first ``scaler(name)``: a later call without parameters is one call
#: of it (the scaler classes are imported only when a name asks for one).
_MAKERS: Dict[str, Callable[[], Any]] = {}

#: Any fitted scaler.
AnyScaler = Union[
    "GaussianScaler", "LinearScaler", "GammaScaler", "RankScaler", "LogRankScaler", "TopKScaler",
    "SigmoidScaler", "MixtureScaler",
]  # fmt: skip
_S = TypeVar(
    "_S", "GaussianScaler", "LinearScaler", "GammaScaler", "RankScaler", "LogRankScaler",
    "TopKScaler", "SigmoidScaler", "MixtureScaler",
)  # fmt: skip

#: The ``format`` of each scaler class's ``to_dict`` that :func:`from_dict` reads.
_FORMATS = sorted(f"outprob.{name}" for name in _HOMES if name != "ConformalScaler")


@overload
def from_dict(data: Dict[str, Any]) -> AnyScaler: ...
@overload
def from_dict(data: Dict[str, Any], kind: Type[_S]) -> _S: ...
def from_dict(data: Dict[str, Any], kind: Optional[Type[Any]] = None) -> Any:
    """Rebuilds any fitted scaler from its ``to_dict()``.

    Parameters
    ----------
    data : dict
        What :meth:`~outprob.GaussianScaler.to_dict` (of any scaler class)
        made, e.g. read back from JSON.
    kind : type, optional
        The class expected (``ValueError`` if ``data`` holds another one);
        the result is then typed as that class.

    Returns
    -------
    The scaler, fitted as it was.

    Examples
    --------
    >>> import json, outprob
    >>> s = outprob.RankScaler().fit([1.0, 5.0, 3.0])
    >>> back = outprob.from_dict(json.loads(json.dumps(s.to_dict())))
    >>> back.transform([3.0]).tolist()
    [0.5]
    >>> outprob.from_dict(s.to_dict(), outprob.RankScaler)
    RankScaler()  # fitted: 3 scores
    """
    fmt = data.get("format") if isinstance(data, dict) else None
    name = fmt[len("outprob."):] if isinstance(fmt, str) and fmt in _FORMATS else None
    if name is None:
        raise ValueError(f"not a serialised outprob scaler: format must be one of {_FORMATS}")
    cls = _class(name)
    if kind is not None and cls is not kind:
        raise ValueError(f"a serialised {cls.__name__}, not a {kind.__name__}")
    return cls.from_dict(data)


def load_map(blob: Union[str, bytes, Dict[str, Any]]) -> FittedMap:
    """The fitted map stored by :meth:`FittedMap.to_dict` (or printed by
    ``outprob fit --map``).

    Parameters
    ----------
    blob : str, bytes or dict
        The JSON text, or the dict it parses to. It is untrusted: anything
        but a valid map (a wrong format or version, missing or non-finite
        parameters, ...) raises ``ValueError``. A fitted scaler's
        ``to_dict`` (``outprob fit`` without ``--map``) is read too, through
        :func:`outprob.from_dict` and so with scikit-learn's import time.

    Returns
    -------
    FittedMap

    Examples
    --------
    >>> import outprob
    >>> text = '''{"format": "outprob.FittedMap", "version": 1, "map": {"kind": "linear",
    ...   "negate": false, "two_d": false, "pretransform": null,
    ...   "params": {"min": [0.0], "max": [4.0]}, "sorted": null}}'''
    >>> outprob.load_map(text).transform([1.0, 5.0])
    array([0.25, 1.  ])
    """
    data = json.loads(blob) if isinstance(blob, (str, bytes, bytearray)) else blob
    form = data.get("format") if isinstance(data, dict) else None
    if isinstance(form, str) and form.startswith("outprob.") and form != FORMAT:
        # A fitted scaler's to_dict: its map, by way of the scaler class
        # (imported only then, so that a stored map is read without
        # scikit-learn).
        return from_dict(data).to_map()
    return read_map(data)
