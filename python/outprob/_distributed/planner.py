"""The distributed fit of contract §9, for any engine.

An engine (``outprob.dask``, ``outprob.spark``) offers, per score column,
one operation: run a pass of the core's plan over every partition and
return the combined partial (:mod:`.steps`). The core's plan of a column
(``_core.ColumnPlan``) decides which passes the fit needs and reads the fit
from their partials — census, exact order statistics, sums, M-estimation,
the §5 fallback chain for ``method="exact"``; the streaming fit of one
census for ``method="sketch"``. This module checks the scaler and its
parameters, runs the plans and builds the fitted scaler.

Options of :class:`~outprob.GaussianScaler`: a pretransform is applied by
the core to the scores of every pass (``"sqrt"`` after a first census
finds the raw minimum); ``fixed_center`` fixes μ and measures the SD and
nMAD about it; ``lam`` is read at transform time. ``trim="auto"`` and
``window`` are refused (they read every score in order), as is every
scaler whose fit the passes cannot express.
"""

from __future__ import annotations

import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .. import _core
from .._common.exceptions import ZeroScaleWarning
from .._common.validation import check_int
from .engine import Engine
from .steps import run_plan


class FitInfo(dict):  # type: ignore[type-arg]
    """Passes over the data, bytes the partitions returned, and (for
    ``method="sketch"``) the per-column error bounds."""


def _refusal(scaler: Any) -> Optional[Exception]:
    """Why ``scaler`` has no distributed fit, as the exception to raise
    (None: it has one)."""
    from .._scalers.gaussian import GaussianScaler
    from .._scalers.linear import LinearScaler

    name = type(scaler).__name__
    if not isinstance(scaler, (GaussianScaler, LinearScaler)):
        why = {
            "RankScaler": "maps a score to its mid-rank among every fitted score",
            "LogRankScaler": "maps a score to its mid-rank among every fitted score",
            "SigmoidScaler": "is fitted by EM iterations that each read every score",
            "MixtureScaler": "is fitted by EM iterations that each read every score",
        }.get(name, "has no planned distributed fit (the Gaussian and linear scalings have)")
        return TypeError(
            f"{name} cannot be fitted on a distributed collection: it {why}; fit it in memory")
    if getattr(scaler, "window", None) is not None:
        return ValueError("window fits the newest W scores of one ordered stream, and a "
                          "distributed collection has no order: fit without window")
    if isinstance(getattr(scaler, "trim", None), str):
        return ValueError("trim='auto' correlates every sorted score with normal quantiles, "
                          "which the passes of a distributed fit do not read: pass a fixed trim")
    return None


def parameters(scaler: Any) -> Dict[str, Any]:
    """The checked parameters of a distributed fit of ``scaler``."""
    refused = _refusal(scaler)
    if refused is not None:
        raise refused
    scaler._check_params()
    p = dict(scaler.get_params())
    p["negate"] = not p["higher_is_outlier"]
    p["linear"] = "center" not in p
    p.setdefault("pretransform", None)
    if p["linear"]:
        p["spec"] = _core.GaussianSpec(center="mean", scale="std", nan_policy=p["nan_policy"],
                                       negate=p["negate"])
    else:
        if p.get("fixed_center") is not None:
            p["center"] = float(p["fixed_center"])
        p["spec"] = _core.GaussianSpec(
            center=p["center"], scale=p["scale"], trim=float(p["trim"]), ddof=int(p["ddof"]),
            maxiter=int(p["maxiter"]), tol=float(p["tol"]), nan_policy=p["nan_policy"],
            negate=p["negate"], pretransform=p["pretransform"],
            fixed_center=p.get("fixed_center"))
    return p


def _gaussian_column(f: Any, p: Dict[str, Any]) -> Dict[str, Any]:
    """The fitted attributes of a column from the core's exact fit, and the
    warnings of its §5 fallback chain."""
    for used, fallback in f.fallbacks:
        warnings.warn(f"{used} is 0; falling back to {fallback}", ZeroScaleWarning, stacklevel=4)
    fitted: Dict[str, Any] = {}
    if f.n_iter is not None:
        fitted["n_iter_"], fitted["converged_"] = f.n_iter, f.converged
    fitted.update(center_=f.center, scale_=f.scale, scale_used_=f.scale_used)
    if p["pretransform"] == "sqrt":
        fitted["pre_min_"] = f.pre_min
    return fitted


def _fitted(scaler: Any, columns: List[Dict[str, Any]], ndim: int, names: Any) -> Any:
    """A fitted copy of ``scaler`` (which is left as it is)."""
    return type(scaler)(**scaler.get_params())._set_fitted(columns, ndim, names)


def fit_exact(scaler: Any, engines: Sequence[Engine], ndim: int, names: Any = None,
              collect_max: int = 1 << 20, n_hint: Optional[int] = None) -> Tuple[Any, FitInfo]:
    """The exact fit of ``scaler`` on the columns the engines run over,
    one column after another."""
    collect_max = check_int(collect_max, "collect_max", 1, 2**64 - 1)
    p = parameters(scaler)
    info = FitInfo(passes=0, bytes=0, bounds=[])
    columns = []
    for engine in engines:
        plan = _core.ColumnPlan(p["spec"], linear=p["linear"], method="exact",
                                collect_max=collect_max, n_hint=n_hint, k=0,
                                native_census=engine.native_census)
        f = run_plan(plan, engine)
        columns.append({"min_": f.center, "max_": f.scale} if p["linear"] else _gaussian_column(f, p))
        info["passes"] += engine.passes
        info["bytes"] += engine.bytes
    return _fitted(scaler, columns, ndim, names), info


def fit_sketch(scaler: Any, engines: Sequence[Engine], ndim: int, names: Any = None,
               k: Optional[int] = None) -> Tuple[Any, FitInfo]:
    """The fit of a streaming fit (contract §9: exact moments, order
    statistics from a KLL sketch with intervals) in one census pass per
    column — two when a sketch-only fit falls back to the SD."""
    from ..streaming._fit import StreamingFit
    from ..streaming._state import _streaming_result

    refused = _refusal(scaler)
    if refused is not None:
        raise refused
    try:
        params = scaler._stream_params()  # the parameters of partial_fit, checked
    except TypeError as exc:
        raise TypeError(f"no sketch fit: {exc}") from None
    if k is not None:
        params["k"] = k
    stream = StreamingFit(**params)
    linear = params.get("scaling") == "linear"
    results = []
    for engine in engines:
        plan = _core.ColumnPlan(stream.spec(), linear=linear, method="sketch", collect_max=1,
                                n_hint=None, k=stream.params["k"],
                                native_census=engine.native_census)
        results.append(_streaming_result(run_plan(plan, engine)))
    info = FitInfo(passes=sum(e.passes for e in engines), bytes=sum(e.bytes for e in engines),
                   bounds=[r._asdict() for r in results])
    template = type(scaler)(**scaler.get_params())
    columns = [template._stream_column(r, j if ndim == 2 else None)[0] for j, r in enumerate(results)]
    return _fitted(scaler, columns, ndim, names), info
