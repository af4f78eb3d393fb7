"""The stored state of a :class:`~outprob.streaming.StreamingFit`: its
results, a window's last fit and the column codec (contract §9, "Stored
state"); the running state itself is the core's."""

from __future__ import annotations

import base64
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from .. import _core

class StreamingResult(NamedTuple):
    """Fitted parameters of a :class:`StreamingFit` (one score column).

    ``center``/``scale`` are μ and σ (Gaussian) or ``min``/``max`` in
    ``center``/``scale`` for linear scaling. ``center_interval`` and
    ``scale_interval`` hold the exact values with the sketch's confidence
    (``None`` for M-estimates, which carry no guarantee);
    ``probability_error`` bounds ``|p̂ − p|`` over all scores;
    ``rank_error`` is the sketch's ε (0 while it is exact or unused).
    """

    center: float
    scale: float
    scale_used: str
    center_interval: Optional[Tuple[float, float]]
    scale_interval: Optional[Tuple[float, float]]
    probability_error: Optional[float]
    rank_error: float
    n_iter: Optional[int]
    converged: Optional[bool]
    n: int



def _streaming_result(r: Any) -> StreamingResult:
    """A :class:`StreamingResult` from the core's streaming result."""
    ms = r.m_estimates
    n_iter, converged = (ms[-1].n_iter, all(m.converged for m in ms)) if ms else (None, None)
    # tuple.__new__: the named tuple's generated __new__ is a Python call.
    return _new_tuple(StreamingResult, (
        r.center, r.scale, r.scale_used, r.center_interval, r.scale_interval,
        r.probability_error, r.rank_error, n_iter, converged, r.n,
    ))


_new_tuple = tuple.__new__


#: What a window's stored last fit holds per column (its bounds are the
#: exact fit's: points, no rank error).
_CACHED = ("center", "scale", "scale_used", "n_iter", "converged", "n")
_SCALES = ("std", "nmad", "niqr", "trimmed_std", "huber", "tukey", "value")


def _window_result(
    center: float, scale: float, scale_used: str, n_iter: Optional[int],
    converged: Optional[bool], n: int,
) -> StreamingResult:
    """A window's exact fit as a :class:`StreamingResult` (degenerate bounds)."""
    return StreamingResult(center, scale, scale_used, (center, center), (scale, scale), 0.0, 0.0,
                           n_iter, converged, n)


def _iterations(fit: Any) -> Tuple[Optional[int], Optional[bool]]:
    """``n_iter`` and ``converged`` of a fit's M-estimates (None without)."""
    ms = fit.m_estimates
    return (ms[-1].n_iter, all(m.converged for m in ms)) if ms else (None, None)


def _cached_fit(p: Dict[str, Any], stored: Any, seen: List[int]) -> List[StreamingResult]:
    """A window's stored last fit, checked: one per column, its parameters a
    valid map (checked by the core's ``FittedMap``), fitted on 1 to
    ``min(window, seen)`` scores."""
    if not isinstance(stored, list) or len(stored) != len(seen):
        raise ValueError("a window's last fit holds one fit per score column")
    results = []
    for r, n_seen in zip(stored, seen):
        if not isinstance(r, dict) or set(r) != set(_CACHED):
            raise ValueError(f"a window's last fit names exactly {list(_CACHED)}")
        first, second, used, n_iter, converged, n = (r[f] for f in _CACHED)
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in (first, second)):
            raise ValueError("a window's last fit needs two numbers")
        if used not in (_SCALES if p["scaling"] == "gaussian" else ("value",)):
            raise ValueError(f"a window's last fit has an unknown scale_used {used!r}")
        if (n_iter is None) != (converged is None) or not (
            n_iter is None
            or (type(n_iter) is int and 0 <= n_iter <= p["maxiter"] and type(converged) is bool)
        ):
            raise ValueError("a window's last fit has invalid n_iter/converged")
        if type(n) is not int or not 1 <= n <= min(p["window"], n_seen):
            raise ValueError(f"a window's last fit cannot be of {n!r} scores")
        results.append(_window_result(float(first), float(second), used, n_iter, converged, n))
    linear = p["scaling"] == "linear"
    _core.FittedMap({
        "kind": "linear" if linear else "gaussian", "negate": False, "two_d": len(seen) > 1,
        "pretransform": None, "sorted": None,
        "params": {("min" if linear else "center"): [r.center for r in results],
                   ("max" if linear else "scale"): [r.scale for r in results]},
    })
    return results


def _encode_parts(parts: Dict[str, Any]) -> Dict[str, Any]:
    sk = parts["sketch"]
    return {"moments": dict(parts["moments"]), "seed": parts["seed"],
            "sketch": None if sk is None else base64.b64encode(bytes(sk)).decode()}


def _decode_parts(d: Dict[str, Any]) -> Dict[str, Any]:
    """A column's stored state as the core reads it (the core checks it)."""
    if set(d) != {"moments", "seed", "sketch"} or not isinstance(d["moments"], dict):
        raise ValueError("a column's state holds exactly 'moments', 'seed' and 'sketch'")
    sk = d["sketch"]
    if sk is not None and not isinstance(sk, str):
        raise ValueError("a column's sketch is base64 text or None")
    return {"moments": dict(d["moments"]), "seed": d["seed"],
            "sketch": None if sk is None else base64.b64decode(sk, validate=True)}
