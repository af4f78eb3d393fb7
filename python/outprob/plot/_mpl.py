"""matplotlib, imported on first use with an error that names the extra."""

from __future__ import annotations

from typing import Any

from .._common.optional import require


def pyplot() -> Any:
    """``matplotlib.pyplot``, or ImportError naming ``outprob[plot]``."""
    return require("matplotlib.pyplot", "outprob.plot")


def finite(values: Any) -> Any:
    """The finite entries of ``values`` as a float array (box plots cannot
    draw ±inf skill scores; callers report how many were left out)."""
    import numpy as np

    a = np.asarray(values, dtype=float).reshape(-1)
    return a[np.isfinite(a)]
