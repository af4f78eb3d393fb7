"""Typical user code, type-checked with ``mypy --strict`` by
tests/s07_api/test_typing.py: every name below must be visible to the type
checker (despite outprob's lazy loading) with a precise type, and no comment
silences the checker."""

from __future__ import annotations

import json
from typing import Dict, List

import numpy as np
import numpy.typing as npt

import outprob
from outprob import metrics, stats


def probabilities(scores: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    return outprob.scaler("mean_nmad").fit_transform(scores)


def probabilities32(scores: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    s: outprob.GaussianScaler = outprob.GaussianScaler("median", "nmad", trim=0.2)
    s.fit(scores)
    return s.transform(scores)


def one_score(scaler: outprob.LinearScaler, score: float) -> float:
    return scaler.transform(score)


def fitted_numbers(scores: List[float]) -> Dict[str, float]:
    s = outprob.GaussianScaler(center=1.0, scale="std", higher_is_outlier=False, threads=2)
    s.fit(scores)
    return {"center": float(s.center_), "scale": float(s.scale_)}


def robust_summary(x: npt.NDArray[np.float64]) -> Dict[str, float]:
    m: float = stats.median(x)
    q: float = stats.quantile(x, 0.75)
    spread: float = stats.nmad(x, nan_policy="raise")
    sd: float = stats.std(x, ddof=1)
    trimmed: float = stats.trimmed_std(x, center=m, alpha=0.2)
    est = stats.m_estimate(x, "tukey", maxiter=100)
    location: float = est.location
    per_column: npt.NDArray[np.floating] = stats.median(np.atleast_2d(x), axis=0)
    return {"median": m, "q75": q, "nmad": spread, "std": sd, "trimmed": trimmed,
            "tukey": location, "columns": float(per_column.sum())}


def ship(s: outprob.GaussianScaler) -> outprob.GaussianScaler:
    blob: str = json.dumps(s.to_dict())
    return outprob.from_dict(json.loads(blob), outprob.GaussianScaler)


def ship_any(blob: str) -> float:
    back = outprob.from_dict(json.loads(blob))
    return float(np.sum(back.transform(np.ones(3))))


def every_variant(scores: npt.NDArray[np.float64]) -> Dict[str, npt.NDArray[np.float64]]:
    out: Dict[str, npt.NDArray[np.float64]] = {}
    for name, variant in outprob.VARIANTS.items():
        v: outprob.Variant = variant
        out[name] = v.scaler().fit_transform(scores)
    return out


def evaluated(y: npt.NDArray[np.int_], p: npt.NDArray[np.float64]) -> float:
    brier: float = metrics.brier_score(y, p, stratify="both")
    return brier


def handled(scores: List[float]) -> str:
    try:
        outprob.LinearScaler().transform(scores)
    except outprob.NotFittedError as exc:
        return str(exc)
    except outprob.InputError:
        return "bad input"
    return "fitted"


def quiet() -> None:
    import warnings

    warnings.simplefilter("ignore", outprob.ZeroScaleWarning)
    warnings.simplefilter("ignore", outprob.ConvergenceWarning)
    warnings.simplefilter("ignore", outprob.OutprobWarning)


def monitor(scores: npt.NDArray[np.float64]) -> Dict[str, object]:
    online = outprob.OnlineConformal(seed=1)
    p: npt.NDArray[np.float64] = online.pvalues(scores)
    fdr = outprob.OnlineFDR("saffron", alpha=0.1)
    flags: npt.NDArray[np.bool_] = fdr.decide(p)
    decided, levels = fdr.decide_with_levels(p[:3])
    m = outprob.Martingale("jumper", threshold=100.0, statistic="cusum")
    steps: outprob.MartingaleSteps = m.update(p)
    first: int | None = m.first_alarm
    resumed = outprob.OnlineFDR.from_dict(json.loads(json.dumps(fdr.to_dict())))
    return {"flags": int(flags.sum()), "alarm": bool(steps.alarm.any()), "first": first,
            "level": resumed.next_level + float(levels.sum()) + int(decided.sum()),
            "n": outprob.Martingale.from_dict(m.to_dict()).n + online.n}
