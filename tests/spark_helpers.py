"""Helpers shared by the Spark test modules."""

from __future__ import annotations

import warnings
from typing import Any

import outprob.spark as osp


def in_memory(scaler: Any, x: Any) -> Any:
    """The in-memory fit, the oracle of the distributed one (warnings off)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return scaler.fit(x)


def quiet_fit(*args: Any, **kw: Any) -> Any:
    """``outprob.spark.fit`` with its warnings off."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return osp.fit(*args, **kw)
