"""The scalers: scikit-learn estimators that fit a transformation of
outlier scores and map scores through it (contract §4, §7, §9, §10).

What lives here: the estimator machinery every scaler shares
(:mod:`.base`, :mod:`.fitted_attributes`, :mod:`.incremental` for
``partial_fit``/``merge``/windows, :mod:`.output` for ``set_output``, and
:mod:`.auto_trim`), one module per family (:mod:`.gaussian`,
:mod:`.linear`, :mod:`.rank`, :mod:`.top_k`, :mod:`.sigmoid`,
:mod:`.mixture`, :mod:`.gamma`), the ensemble :func:`~.ensemble.combine`,
and the paper's variant table (:mod:`.paper_variants`, which imports no
scaler class).

It may import :mod:`outprob._common`, :mod:`outprob._maps`,
:mod:`outprob.streaming`, :mod:`outprob.stats` and the compiled core;
nothing here imports the conformal, distributed or registry packages above
it. This ``__init__`` imports nothing, so that a light importer of
:mod:`.paper_variants` (``outprob stream``) does not load scikit-learn.
"""

from __future__ import annotations

import importlib
from typing import Any


def __getattr__(name: str) -> Any:
    # Pickles of outprob 0.1.0 name ``outprob._scalers.GaussianScaler`` and
    # ``outprob._scalers.LinearScaler``.
    homes = {"GaussianScaler": ".gaussian", "LinearScaler": ".linear"}
    if name in homes:
        return getattr(importlib.import_module(homes[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
