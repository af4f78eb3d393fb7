"""Conformal p-values with a fitted tail (contract §11, "Tails beyond the
calibration set"): the options of ``ConformalScaler(tail=...)``, the fit
of each column's tail by the core, and its summary ``tail_``.

Beyond the ``tail_quantile`` quantile u of the calibration scores the
p-value is ``p_u · G(s)`` (``p_u = (1 + m)/(n + 1)``, m the scores above
u, G the fitted survival beyond u); the bulk stays conformal. The core
rejects a tail that fails the DKWM check, and the p-values then are the
conformal ones.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import numpy as np

from .. import _core
from .._common.validation import check_fraction

TAILS = (None, "gpd", "gaussian", "gamma")
SUMMARY_FIELDS = ("tail", "accepted", "reason", "threshold", "threshold_pvalue", "exceedances",
                  "statistic", "bound", "params")


def check_tail_params(tail: Any, quantile: Any, conditional: Any) -> None:
    """``tail`` one of :data:`TAILS`, ``tail_quantile`` in (0, 1), and no
    calibration-conditional adjustment alongside a tail."""
    if tail not in TAILS:
        raise ValueError(f"tail must be None, 'gpd', 'gaussian' or 'gamma', got {tail!r}")
    check_fraction(quantile, "tail_quantile")
    if not float(quantile) > 0.0:
        raise ValueError(f"tail_quantile must be in (0, 1), got {quantile!r}")
    if tail is not None and conditional is not None:
        raise ValueError(
            "tail and conditional cannot be combined: the calibration-conditional "
            "guarantee does not cover a fitted tail (contract §11); choose one"
        )


def fit_tails(spec: Dict[str, Any], fits: List[Dict[str, Any]]) -> Optional[List[Any]]:
    """The core's tail of each column, or None without ``tail``."""
    if spec.get("tail") is None:
        return None
    return [
        _core.ConformalTail(f["sorted_"], kind=spec["tail"], quantile=float(spec["tail_quantile"]),
                            delta=float(spec["delta"]))
        for f in fits
    ]


def summary(tail: Any) -> Dict[str, Any]:
    """A column's tail as a dict (:data:`SUMMARY_FIELDS`); ``params`` are
    GPD (ξ, σ), Gaussian (center, scale) or gamma (k, θ, offset), and the
    threshold is oriented (negated with ``higher_is_outlier=False``)."""
    s = tail.summary()
    values = {key: getattr(s, key) for key in SUMMARY_FIELDS}
    kind = values["tail"]
    p = [float(v) for v in values["params"]]
    names = {"gpd": ("shape", "scale"), "gaussian": ("center", "scale"),
             "gamma": ("shape", "scale", "offset")}[kind]
    values["params"] = {n: v for n, v in zip(names, p)}
    values["exceedances"] = int(values["exceedances"])
    for key in ("threshold", "threshold_pvalue", "statistic", "bound"):
        values[key] = float(values[key])
    if not np.isfinite(values["statistic"]):
        values["statistic"] = None
    return values
