"""Result containers of scikit-learn's ``set_output`` API: NumPy (default),
pandas or polars, chosen per scaler (``set_output``) or globally
(``sklearn.set_config(transform_output=...)``)."""

from __future__ import annotations

import threading
from typing import Any, Callable, Dict, Optional, Sequence

import numpy as np

from .._common.optional import installed, missing

OUTPUTS = ("default", "pandas", "polars")

try:  # the live per-thread configuration: reading it copies nothing
    from sklearn._config import _get_threadlocal_config as _config
except ImportError:  # pragma: no cover - a scikit-learn without it
    from sklearn import get_config as _config

_read_config: Callable[[], Dict[str, Any]] = _config
_local = threading.local()
#: Per thread, ``config``: scikit-learn's live configuration of the thread
#: once read (absent before, or when only copies can be read).
THREAD_CONFIG = _local
NO_CONFIG: Dict[str, Any] = {}


def global_transform_output() -> str:
    """scikit-learn's global ``transform_output`` setting (per thread, as
    ``sklearn.config_context`` sets it)."""
    try:
        config = _local.config
    except AttributeError:
        config = _read_config()
        # scikit-learn updates its per-thread dict in place; a copy (the
        # fallback get_config) must be read anew on every call.
        if config is not _read_config():
            return str(config.get("transform_output", "default"))
        _local.config = config
    return str(config.get("transform_output", "default"))


def default_output(estimator: Any) -> bool:
    """Whether ``estimator``'s results are plain NumPy: its own
    ``set_output`` setting, else scikit-learn's global one (what
    ``ScalerBase._output`` reads, for the latency paths)."""
    config = estimator.__dict__.get("_sklearn_output_config")
    if config:
        mode = config.get("transform")
        if mode is not None:
            plain: bool = mode == "default"
            return plain
    live = _local.__dict__.get("config")
    if live is None:
        return global_transform_output() == "default"
    default: bool = live.get("transform_output", "default") == "default"
    return default


def check_output_available(mode: str) -> None:
    if mode != "default" and not installed(mode):
        raise ImportError(missing(mode, f"set_output(transform={mode!r})"))


def wrap_output(mode: str, data: np.ndarray, X: Any, fitted: Optional[Sequence[str]]) -> Any:
    """``data`` (the probabilities of ``X``) in a DataFrame or Series.

    A 1-D result becomes a Series named and indexed as a Series input; a 2-D
    one a DataFrame with the fitted column names (``fitted``, for a scaler
    fitted column-wise), else the input's column names, else x0, x1, ...;
    the index of a pandas input is kept.
    """
    if mode not in OUTPUTS:
        raise ValueError(f"transform output must be one of {OUTPUTS}, got {mode!r}")
    name = getattr(X, "name", None) if data.ndim == 1 else None
    columns = None
    if data.ndim == 2:
        if fitted is not None:
            columns = [str(c) for c in fitted]
        else:
            given = getattr(X, "columns", None)
            columns = (
                [str(c) for c in given]
                if given is not None and len(given) == data.shape[1]
                else [f"x{j}" for j in range(data.shape[1])]
            )
    if mode == "pandas":
        import pandas as pd

        index = X.index if isinstance(X, (pd.DataFrame, pd.Series)) else None
        if data.ndim == 1:
            return pd.Series(data, index=index, name=name, copy=False)
        if data.ndim == 2:
            return pd.DataFrame(data, index=index, columns=columns, copy=False)
        return data
    import polars as pl

    if data.ndim == 1:
        return pl.Series("" if name is None else str(name), data)
    if data.ndim == 2:
        return pl.DataFrame(data, schema=columns, orient="row")
    return data
