"""The exact distributed fit of contract §9, for any engine.

An engine (``outprob.dask``, ``outprob.spark``) offers, per score column,
one operation: run a :class:`~outprob._distributed.steps.Step` over every
partition and return the combined partial. The planner decides which
passes a fit needs and reads the fit from their results:

1. census: count, NaN/±inf, extremes; the exact moments when the fit reads
   the mean or the SD; a KLL sketch when it needs the median, which
   brackets the median and then the median deviation so that one pass
   each (the count below the bracket and the values in it) usually settles
   them exactly;
2. order statistics: a 2^12-bucket histogram of 64-bit order-preserving
   keys per open bracket and pass, until a bracket holds at most
   ``collect_max`` values, which are collected and selected by the core;
3. sums below a cut-off (trimmed mean, trimmed SD; the SD about a fixed
   center);
4. M-estimation: the core's iteration, each location step's sums reduced
   in one pass — or taken on the client from the column, gathered in one
   pass, when it holds at most ``collect_max`` scores.

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
from .column_estimators import ColumnEstimators, check_census
from .engine import Engine


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
    if not p["linear"]:
        if p.get("fixed_center") is not None:
            p["center"] = float(p["fixed_center"])
        p["spec"] = dict(center=p["center"], scale=p["scale"], trim=float(p["trim"]),
                         ddof=int(p["ddof"]), maxiter=int(p["maxiter"]), tol=float(p["tol"]),
                         nan_policy=p["nan_policy"], negate=p["negate"])
        # The §5 fallback chain, as the core defines it.
        p["fallbacks"] = list(_core.GaussianSpec(**p["spec"]).fallbacks)
    p.setdefault("pretransform", None)
    return p


def _gaussian_column(col: ColumnEstimators, p: Dict[str, Any]) -> Dict[str, Any]:
    """μ, σ and the scale used, as the in-memory fit computes them (§1–§5,
    §10's options)."""
    fitted: Dict[str, Any] = {}
    center_spec, scale_spec = p["center"], p["scale"]
    fixed = p.get("fixed_center") is not None

    def m_estimate(norm: str) -> Tuple[float, float]:
        loc, s, n_iter, conv = col.m_estimate(norm)
        fitted["n_iter_"], fitted["converged_"] = n_iter, conv
        return loc, s

    if not isinstance(center_spec, str):
        c = float(center_spec)
    elif center_spec == "mean":
        c = col.mean()
    elif center_spec == "median":
        c = col.median()
    elif center_spec == "trimmed_mean":
        c = col.trimmed_mean()
    else:
        c = m_estimate(center_spec)[0]

    # With a fixed center the SD and the nMAD are about it, and the chain
    # runs over the scales that have such a form (as the core's fit does).
    about = {"std": lambda: col.rms_about(c), "nmad": lambda: col.nmad(about=c),
             "niqr": col.niqr} if fixed and scale_spec in ("std", "nmad", "niqr") else None

    def scale(which: Any) -> float:
        if not isinstance(which, str):
            return float(which)
        if about is not None:
            return float(about[which]())
        if which == "std":
            return col.std()
        if which == "nmad":
            return col.nmad()
        if which == "niqr":
            return col.niqr()
        if which == "trimmed_std":
            return col.trimmed_std(c)
        return m_estimate(which)[1]

    chain = [scale_spec, *(f for f in p["fallbacks"] if about is None or f in about)]
    used, s = chain[0], scale(chain[0])
    for fallback in chain[1:]:
        if s > 0:
            break
        warnings.warn(f"{used} is 0; falling back to {fallback}", ZeroScaleWarning, stacklevel=4)
        used, s = fallback, scale(fallback)
    fitted.update(center_=c, scale_=max(s, 0.0), scale_used_=used if isinstance(used, str) else "value")
    if p["pretransform"] == "sqrt":
        fitted["pre_min_"] = col.pre_min
    return fitted


def _fitted(scaler: Any, columns: List[Dict[str, Any]], ndim: int, names: Any) -> Any:
    """A fitted copy of ``scaler`` (which is left as it is)."""
    return type(scaler)(**scaler.get_params())._set_fitted(columns, ndim, names)


def fit_exact(scaler: Any, engines: Sequence[Engine], ndim: int, names: Any = None,
              collect_max: int = 1 << 20, n_hint: Optional[int] = None) -> Tuple[Any, FitInfo]:
    """The exact fit of ``scaler`` on the columns the engines run over,
    one column after another."""
    if collect_max < 1:
        raise ValueError("collect_max must be positive")
    p = parameters(scaler)
    info = FitInfo(passes=0, bytes=0, bounds=[])
    columns = []
    for engine in engines:
        col = ColumnEstimators(engine, p, collect_max, n_hint)
        columns.append({"min_": col.lo, "max_": col.hi} if p["linear"] else _gaussian_column(col, p))
        info["passes"] += engine.passes
        info["bytes"] += engine.bytes
    return _fitted(scaler, columns, ndim, names), info


def fit_sketch(scaler: Any, engines: Sequence[Engine], ndim: int, names: Any = None,
               k: Optional[int] = None) -> Tuple[Any, FitInfo]:
    """The fit of a streaming fit (contract §9: exact moments, order
    statistics from a KLL sketch with intervals) in one census pass per
    column — two when a sketch-only fit falls back to the SD."""
    from ..streaming._fit import StreamingFit
    from ..streaming._state import StreamingResult, _streaming_result

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
    negate = not params["higher_is_outlier"]
    linear = params.get("scaling") == "linear"
    spec = None if linear else stream.spec()
    results = []
    for engine in engines:
        sketch_k = stream.params["k"] if spec is not None and spec.needs_sketch else 0
        # The moments come with the census when the fit reads them (or the
        # census reads every score in Python anyway).
        moments = spec is not None and (spec.reads_moments or not engine.native_census)
        part = engine.census(negate, sketch_k, params.get("ddof", 0) if moments else None, None, 0.0)
        check_census(part.raw, params["nan_policy"])
        n, lo, hi = part.read[1], part.read[6], part.read[7]
        if spec is None:
            lo, hi = (-hi, -lo) if negate else (lo, hi)
            results.append(StreamingResult(lo, hi, "value", (lo, lo), (hi, hi), 0.0, 0.0, None, None, n))
            continue
        r = None if part.state is not None else _core.result_from_sketch(part.sketch, spec=spec)
        if r is None:  # the fit reads the exact moments
            state = part.state if part.state is not None else engine.census(
                negate, 0, params.get("ddof", 0), None, 0.0).state
            sketch = None if part.sketch is None else part.sketch.serialize()
            r = _core.StreamingState.from_parts(
                spec=spec, parts=[{"moments": state.parts()[0]["moments"], "sketch": sketch,
                                   "seed": 0}]).results()[0]
        results.append(_streaming_result(r))
    info = FitInfo(passes=sum(e.passes for e in engines), bytes=sum(e.bytes for e in engines),
                   bounds=[r._asdict() for r in results])
    template = type(scaler)(**scaler.get_params())
    columns = [template._stream_column(r, j if ndim == 2 else None)[0] for j, r in enumerate(results)]
    return _fitted(scaler, columns, ndim, names), info
