"""Optional dependencies: imported on first use, with an error naming the
extra that installs them."""

from __future__ import annotations

import importlib
from types import ModuleType

#: Module → the ``pip install "outprob[extra]"`` that provides it.
EXTRAS = {
    "pandas": "pandas",
    "polars": "polars",
    "matplotlib": "plot",
    "dask": "dask",
    "pyspark": "spark",
    "pyarrow": "spark",
}


def require(module: str, feature: str) -> ModuleType:
    """Imports ``module`` for ``feature``, or raises an ``ImportError`` that
    says how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        extra = EXTRAS.get(module.split(".")[0])
        how = f'pip install "outprob[{extra}]"' if extra else f"pip install {module}"
        raise ImportError(f"{feature} needs {module}: {how}") from exc
