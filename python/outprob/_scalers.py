"""Rebuilding any fitted scaler from its ``to_dict`` (contract §7).

Pickles of outprob 0.1.0 name ``outprob._scalers.GaussianScaler`` and
``outprob._scalers.LinearScaler``: both are importable from here.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Type, TypeVar, Union, overload

from ._gamma import GammaScaler
from ._gaussian import GaussianScaler
from ._linear import LinearScaler
from ._mixture import MixtureScaler
from ._rank import LogRankScaler, RankScaler
from ._sigmoid import SigmoidScaler
from ._top_k import TopKScaler

__all__ = ["from_dict", "GaussianScaler", "LinearScaler"]

#: Any fitted scaler.
AnyScaler = Union[
    GaussianScaler, LinearScaler, GammaScaler, RankScaler, LogRankScaler, TopKScaler,
    SigmoidScaler, MixtureScaler,
]  # fmt: skip
_S = TypeVar(
    "_S", GaussianScaler, LinearScaler, GammaScaler, RankScaler, LogRankScaler, TopKScaler,
    SigmoidScaler, MixtureScaler,
)  # fmt: skip

_CLASSES: Dict[str, Type[Any]] = {
    f"outprob.{c.__name__}": c
    for c in (
        GaussianScaler, LinearScaler, GammaScaler, RankScaler, LogRankScaler, TopKScaler,
        SigmoidScaler, MixtureScaler,
    )
}  # fmt: skip


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
    cls = _CLASSES.get(fmt) if isinstance(fmt, str) else None
    if cls is None:
        raise ValueError(
            f"not a serialised outprob scaler: format must be one of {sorted(_CLASSES)}"
        )
    if kind is not None and cls is not kind:
        raise ValueError(f"a serialised {cls.__name__}, not a {kind.__name__}")
    return cls.from_dict(data)
