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
from typing import Any

__version__ = "0.1.0"

# The public names that need the compiled core load on first use, so that
# ``import outprob.reference`` works without it (PEP 562).
_LAZY = {
    "GaussianScaler": "._scalers",
    "LinearScaler": "._scalers",
    "from_dict": "._scalers",
    "VARIANTS": "._variants",
    "Variant": "._variants",
    "scaler": "._variants",
    "stats": ".stats",
    "metrics": ".metrics",
    "compare": ".compare",
}
_EXCEPTIONS = ("OutprobWarning", "ZeroScaleWarning", "ConvergenceWarning", "NotFittedError")

from ._exceptions import ConvergenceWarning, NotFittedError, OutprobWarning, ZeroScaleWarning  # noqa: E402

__all__ = sorted([*_LAZY, *_EXCEPTIONS, "reference"])


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module = importlib.import_module(_LAZY[name], __name__)
        value = module if name in ("stats", "metrics", "compare") else getattr(module, name)
        globals()[name] = value
        return value
    if name == "reference":
        return importlib.import_module(".reference", __name__)
    raise AttributeError(f"module 'outprob' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
