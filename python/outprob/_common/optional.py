"""Optional dependencies: the one way outprob imports them — on first use,
with an ``ImportError`` that names the extra that installs them."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType
from typing import Optional

#: Top-level module → the extra of ``pip install 'outprob[extra]'`` that
#: provides it (a call may name another extra that also does).
EXTRAS = {
    "pandas": "pandas",
    "polars": "polars",
    "matplotlib": "plot",
    "dask": "dask",
    "distributed": "dask",
    "pyspark": "spark",
    "pyarrow": "spark",
    "pyod": "pyod",
    "tqdm": "study",
    "threadpoolctl": "study",
}


def require(module: str, feature: str, extra: Optional[str] = None) -> ModuleType:
    """Imports ``module`` for ``feature``, or raises an ``ImportError`` that
    says how to install it (``extra``, or the module's entry of
    :data:`EXTRAS`)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(missing(module, feature, extra)) from exc


def installed(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing(module: str, feature: str, extra: Optional[str] = None) -> str:
    """The message of a missing optional dependency."""
    top = module.split(".")[0]
    extra = extra or EXTRAS.get(top)
    how = f"pip install 'outprob[{extra}]'" if extra else f"pip install {top}"
    return f"{feature} needs {top}: {how}"
