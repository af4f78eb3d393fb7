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
    "GaussianScaler": "._scalers.gaussian",
    "LinearScaler": "._scalers.linear",
    "from_dict": "._registry",
    "RankScaler": "._scalers.rank",
    "LogRankScaler": "._scalers.rank",
    "TopKScaler": "._scalers.top_k",
    "combine": "._scalers.ensemble",
    "SigmoidScaler": "._scalers.sigmoid",
    "MixtureScaler": "._scalers.mixture",
    "GammaScaler": "._scalers.gamma",
    "ConformalScaler": "._conformal.scaler",
    "select": "._conformal.selection",
    "Selection": "._conformal.selection",
    "fpr_upper_bound": "._conformal.selection",
    "combine_pvalues": "._conformal.combination",
    "ensemble_pvalues": "._conformal.combination",
    "label_trim_candidates": "._conformal.labelled",
    "TRANSFORMATIONS": "._registry",
    "Transformation": "._registry",
    "VARIANTS": "._registry",
    "Variant": "._registry",
    "scaler": "._registry",
    "OutprobWarning": "._common.exceptions",
    "ZeroScaleWarning": "._common.exceptions",
    "ConvergenceWarning": "._common.exceptions",
    "NotFittedError": "._common.exceptions",
    "InputError": "._common.exceptions",
    "FittedMap": "._maps.fitted_map",
    "load_map": "._registry",
    "OnlineFDR": "._sequential.online_fdr",
    "Martingale": "._sequential.martingale",
    "MartingaleSteps": "._sequential.martingale",
    "OnlineConformal": "._sequential.online_pvalues",
    "DecayedFit": "._sequential.decayed",
    "RefitOnDrift": "._sequential.refit",
    "DriftEvent": "._sequential.refit",
    "DriftSteps": "._sequential.refit",
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
    from ._common.exceptions import ConvergenceWarning as ConvergenceWarning
    from ._common.exceptions import InputError as InputError
    from ._common.exceptions import NotFittedError as NotFittedError
    from ._common.exceptions import OutprobWarning as OutprobWarning
    from ._common.exceptions import ZeroScaleWarning as ZeroScaleWarning
    from ._conformal.combination import combine_pvalues as combine_pvalues
    from ._conformal.combination import ensemble_pvalues as ensemble_pvalues
    from ._conformal.labelled import label_trim_candidates as label_trim_candidates
    from ._conformal.scaler import ConformalScaler as ConformalScaler
    from ._conformal.selection import Selection as Selection
    from ._conformal.selection import fpr_upper_bound as fpr_upper_bound
    from ._conformal.selection import select as select
    from ._maps.fitted_map import FittedMap as FittedMap
    from ._registry import TRANSFORMATIONS as TRANSFORMATIONS
    from ._registry import Transformation as Transformation
    from ._registry import VARIANTS as VARIANTS
    from ._registry import Variant as Variant
    from ._registry import from_dict as from_dict
    from ._registry import load_map as load_map
    from ._registry import scaler as scaler
    from ._scalers.ensemble import combine as combine
    from ._scalers.gamma import GammaScaler as GammaScaler
    from ._scalers.gaussian import GaussianScaler as GaussianScaler
    from ._scalers.linear import LinearScaler as LinearScaler
    from ._scalers.mixture import MixtureScaler as MixtureScaler
    from ._scalers.rank import LogRankScaler as LogRankScaler
    from ._scalers.rank import RankScaler as RankScaler
    from ._scalers.sigmoid import SigmoidScaler as SigmoidScaler
    from ._scalers.top_k import TopKScaler as TopKScaler
    from ._sequential.martingale import Martingale as Martingale
    from ._sequential.martingale import MartingaleSteps as MartingaleSteps
    from ._sequential.online_fdr import OnlineFDR as OnlineFDR
    from ._sequential.online_pvalues import OnlineConformal as OnlineConformal
    from ._sequential.decayed import DecayedFit as DecayedFit
    from ._sequential.refit import DriftEvent as DriftEvent
    from ._sequential.refit import DriftSteps as DriftSteps
    from ._sequential.refit import RefitOnDrift as RefitOnDrift

__all__ = [
    "ConformalScaler",
    "ConvergenceWarning",
    "DecayedFit",
    "DriftEvent",
    "DriftSteps",
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
    "RefitOnDrift",
    "Selection",
    "SigmoidScaler",
    "TRANSFORMATIONS",
    "TopKScaler",
    "Transformation",
    "VARIANTS",
    "Variant",
    "ZeroScaleWarning",
    "combine",
    "combine_pvalues",
    "compare",
    "ensemble_pvalues",
    "fpr_upper_bound",
    "from_dict",
    "label_trim_candidates",
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
    elif name == "__test__":
        # Doctest looks for the examples of the classes whose ``__module__``
        # is "outprob" here (made on request: it imports every class).
        from ._common.public import doctest_table

        loaded = [__getattr__(n) for n in _LAZY]
        return doctest_table(c for c in loaded if isinstance(c, type) and c.__module__ == __name__)
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
