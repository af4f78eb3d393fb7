"""outprob: outlier scores to outlier probabilities.

Statistical scaling maps a score s to ``p = max(0, erf((s − μ)/(σ√2)))``;
robust statistical scaling (Röchner et al., SISAP 2024) fits μ and σ with
robust estimators so that the outliers' long upper tail does not inflate
them. The numeric core is Rust; ``outprob.reference`` is a plain
NumPy/SciPy implementation of the same contract.

>>> import outprob
>>> outprob.scaler("mean_nmad").fit_transform([1.0, 1.1, 0.9, 1.2, 9.0])
array([0., 0., 0., 0., 1.])
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# The public names load on first use (PEP 562): ``import outprob.reference``
# works without the compiled core, and ``import outprob`` stays cheap.
_LAZY = {
    "GaussianScaler": "._gaussian",
    "LinearScaler": "._linear",
    "from_dict": "._scalers",
    "RankScaler": "._rank",
    "LogRankScaler": "._rank",
    "TopKScaler": "._top_k",
    "combine": "._ensemble",
    "SigmoidScaler": "._sigmoid",
    "MixtureScaler": "._mixture",
    "GammaScaler": "._gamma",
    "ConformalScaler": "._conformal",
    "select": "._fdr",
    "Selection": "._fdr",
    "fpr_upper_bound": "._fdr",
    "TRANSFORMATIONS": "._variants",
    "Transformation": "._variants",
    "VARIANTS": "._variants",
    "Variant": "._variants",
    "scaler": "._variants",
    "OutprobWarning": "._exceptions",
    "ZeroScaleWarning": "._exceptions",
    "ConvergenceWarning": "._exceptions",
    "NotFittedError": "._exceptions",
    "InputError": "._exceptions",
    "FittedMap": "._map",
    "load_map": "._load_map",
    "OnlineFDR": "._sequential.online_fdr",
    "Martingale": "._sequential.martingale",
    "MartingaleSteps": "._sequential.martingale",
    "OnlineConformal": "._sequential.online_pvalues",
}
_MODULES = ("stats", "metrics", "compare", "reference")

# Type checkers see the names the lazy loading provides (``X as X``: an
# explicit re-export).
if TYPE_CHECKING:
    __version__: str
    from . import compare as compare
    from . import metrics as metrics
    from . import reference as reference
    from . import stats as stats
    from ._ensemble import combine as combine
    from ._exceptions import ConvergenceWarning as ConvergenceWarning
    from ._exceptions import InputError as InputError
    from ._exceptions import NotFittedError as NotFittedError
    from ._exceptions import OutprobWarning as OutprobWarning
    from ._exceptions import ZeroScaleWarning as ZeroScaleWarning
    from ._map import FittedMap as FittedMap
    from ._load_map import load_map as load_map
    from ._gamma import GammaScaler as GammaScaler
    from ._gaussian import GaussianScaler as GaussianScaler
    from ._linear import LinearScaler as LinearScaler
    from ._mixture import MixtureScaler as MixtureScaler
    from ._rank import LogRankScaler as LogRankScaler
    from ._rank import RankScaler as RankScaler
    from ._conformal import ConformalScaler as ConformalScaler
    from ._fdr import Selection as Selection
    from ._fdr import fpr_upper_bound as fpr_upper_bound
    from ._fdr import select as select
    from ._scalers import from_dict as from_dict
    from ._sigmoid import SigmoidScaler as SigmoidScaler
    from ._sequential.martingale import Martingale as Martingale
    from ._sequential.martingale import MartingaleSteps as MartingaleSteps
    from ._sequential.online_fdr import OnlineFDR as OnlineFDR
    from ._sequential.online_pvalues import OnlineConformal as OnlineConformal
    from ._top_k import TopKScaler as TopKScaler
    from ._variants import TRANSFORMATIONS as TRANSFORMATIONS
    from ._variants import VARIANTS as VARIANTS
    from ._variants import Transformation as Transformation
    from ._variants import Variant as Variant
    from ._variants import scaler as scaler

__all__ = [
    "ConformalScaler",
    "ConvergenceWarning",
    "FittedMap",
    "GammaScaler",
    "GaussianScaler",
    "InputError",
    "LinearScaler",
    "LogRankScaler",
    "Martingale",
    "MartingaleSteps",
    "MixtureScaler",
    "NotFittedError",
    "OnlineConformal",
    "OnlineFDR",
    "OutprobWarning",
    "RankScaler",
    "Selection",
    "SigmoidScaler",
    "TRANSFORMATIONS",
    "TopKScaler",
    "Transformation",
    "VARIANTS",
    "Variant",
    "ZeroScaleWarning",
    "combine",
    "compare",
    "fpr_upper_bound",
    "from_dict",
    "load_map",
    "metrics",
    "reference",
    "scaler",
    "select",
    "stats",
]


def _version() -> str:
    # One version, the Cargo workspace's: maturin writes it into the
    # package metadata, read here on first use.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("outprob")
    except PackageNotFoundError:  # a source tree that was never installed
        return "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        value: Any = _version()
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    elif name in _MODULES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module 'outprob' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
