"""The columns ``outprob.spark.score_stream`` adds (contract §12,
"Spark"): online p-values, an online-FDR decision and a martingale with
alarms, carried from one batch to the next and through
``to_dict``/``from_dict`` (the state Spark's checkpoints keep).
``outprob stream`` computes the same columns in the core's stream
(``sequential::columns``), from the same public parts' parameters."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional

import numpy as np
import numpy.typing as npt

from .martingale import Martingale
from .online_fdr import OnlineFDR
from .online_pvalues import OnlineConformal

#: Column names, in output order: the doubles, then the flags.
NAMES = ("pvalue", "log_martingale", "alert", "alarm")
FDR_METHODS = ("lond", "lord++", "saffron", "addis")
MONITORS = ("jumper", "power", "mixture")


class OnlineColumns:
    """p-values (shown if ``pvalues``), ``alert`` decisions and a
    ``monitor`` restarting after each alarm, in arrival order."""

    def __init__(self, *, pvalues: bool = False, alert: Optional[str] = None, alpha: float = 0.05,
                 monitor: Optional[str] = None, alarm: float = 100.0, seed: int = 0,
                 higher_is_outlier: bool = True) -> None:
        if alert is not None and alert not in FDR_METHODS:
            raise ValueError(f"alert must be one of {', '.join(FDR_METHODS)}, got {alert!r}")
        if monitor is not None and monitor not in MONITORS:
            raise ValueError(f"monitor must be one of {', '.join(MONITORS)}, got {monitor!r}")
        if not (isinstance(alarm, (int, float)) and alarm > 0 and math.isfinite(alarm)):
            raise ValueError(f"alarm must be positive and finite, got {alarm!r}")
        self.show_p = bool(pvalues)
        need = self.show_p or alert is not None or monitor is not None
        self.pv = OnlineConformal(seed=seed, higher_is_outlier=higher_is_outlier) if need else None
        self.fdr = OnlineFDR(alert, alpha=alpha) if alert is not None else None
        self.mon = (Martingale(monitor, threshold=float(alarm), on_alarm="restart")
                    if monitor is not None else None)

    @property
    def active(self) -> bool:
        return self.pv is not None

    def names(self) -> List[str]:
        show = [self.show_p, self.mon is not None, self.fdr is not None, self.mon is not None]
        return [n for n, s in zip(NAMES, show) if s]

    def compute(self, x: npt.NDArray[np.float64]) -> Dict[str, Any]:
        """The columns of ``x`` (in arrival order; NaN are missing scores:
        p-value and ln M NaN, flags False, no position in the stream)."""
        out: Dict[str, Any] = {}
        if self.pv is None:
            return out
        missing = np.isnan(x)
        if not missing.any():
            # Every score has a place in the stream: no masks, no copies.
            p = self.pv.pvalues(x)
            if self.show_p:
                out["pvalue"] = p
            if self.fdr is not None:
                out["alert"] = np.asarray(self.fdr.decide(p), dtype=bool)
            if self.mon is not None:
                steps = self.mon.update(p)
                out["log_martingale"] = steps.log_martingale
                out["alarm"] = np.asarray(steps.alarm, dtype=bool)
            return out
        ok = ~missing
        p = np.full(x.size, np.nan)
        p[ok] = self.pv.pvalues(x[ok])
        if self.show_p:
            out["pvalue"] = p
        if self.fdr is not None:
            alert = np.zeros(x.size, dtype=bool)
            alert[ok] = self.fdr.decide(p[ok])
            out["alert"] = alert
        if self.mon is not None:
            steps = self.mon.update(p[ok])
            logm = np.full(x.size, np.nan)
            flag = np.zeros(x.size, dtype=bool)
            logm[ok], flag[ok] = steps.log_martingale, steps.alarm
            out["log_martingale"], out["alarm"] = logm, flag
        return out

    def to_dict(self) -> Dict[str, Any]:
        """Each part's ``to_dict()`` (None where absent) and ``pvalues``."""
        return {"pvalues": self.show_p,
                "online": None if self.pv is None else self.pv.to_dict(),
                "fdr": None if self.fdr is None else self.fdr.to_dict(),
                "monitor": None if self.mon is None else self.mon.to_dict()}

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "OnlineColumns":
        if not isinstance(data, dict) or set(data) != {"pvalues", "online", "fdr", "monitor"}:
            raise ValueError("stored online columns must be a dict of pvalues, online, fdr, monitor")
        obj = cls.__new__(cls)
        obj.show_p = bool(data["pvalues"])
        obj.pv = None if data["online"] is None else OnlineConformal.from_dict(data["online"])
        obj.fdr = None if data["fdr"] is None else OnlineFDR.from_dict(data["fdr"])
        obj.mon = None if data["monitor"] is None else Martingale.from_dict(data["monitor"])
        if obj.pv is None and (obj.fdr is not None or obj.mon is not None or obj.show_p):
            raise ValueError("stored online columns have decisions without p-values")
        return obj
