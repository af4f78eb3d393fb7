"""Stored conformal state, checked for consistency (contract §11,
"Stored state"): what ``ConformalScaler.from_dict`` and unpickling read is
untrusted, so each stored value must be of its kind (numbers, not text)
and everything the rest determines is recomputed and compared — the
count of calibration scores, the contamination trim, the Monte Carlo
correction, and, with a stream, every fitted attribute the stream
publishes. A contradiction raises ``ValueError`` naming the field.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Dict, List, Optional

import numpy as np

from .. import _core
from .._common.validation import MAX_COUNT, as_float_array

#: The map's options as fitted, as ``to_dict`` stores them ("mc_simulations"
#: may be absent from dicts written before it was recorded: the parameter's
#: value stands in).
SPEC_KEYS = ("conditional", "delta", "simes_k", "mc_simulations", "tie_break", "seed")
#: The fitted attributes of a fit without a stream.
FIT_KEYS = ("sorted_", "n_calibration_", "trimmed_", "contamination_", "mc_correction_")
#: The smallest calibration set of the Monte Carlo adjustment (below: DKWM).
MC_MIN_N = 17


def count(value: Any, name: str, lowest: int = 0) -> int:
    """A stored count: an integer (not a bool, not a float) in
    ``[lowest, 2^53]``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer count, got {value!r}")
    if not lowest <= value <= MAX_COUNT:
        raise ValueError(f"{name} must be in [{lowest}, 2^53], got {value!r}")
    return int(value)


def real(value: Any, name: str) -> float:
    """A stored finite real number (not a bool, not text)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number, got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return v


def scores(value: Any, name: str) -> np.ndarray:
    """Stored scores: a non-empty list of finite real numbers (text is
    never parsed), as a float64 array."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple, np.ndarray)):
        raise ValueError(f"{name} must be a list of scores, got {type(value).__name__}")
    a = np.array(as_float_array(value, name), dtype=np.float64)
    if a.ndim != 1 or a.size == 0 or not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must hold one or more finite scores per column")
    return a


def mc_correction(n: int, spec: Dict[str, Any], threads: int) -> Optional[float]:
    """``mc_correction_`` as the fit computes it for n calibration scores
    (None where the fit stores none: another adjustment, or n < 17)."""
    if spec["conditional"] != "mc" or n < MC_MIN_N:
        return None
    return float(_core.conformal_mc_correction(
        n, delta=spec["delta"], simulations=spec["mc_simulations"], seed=spec["seed"],
        threads=threads,
    ))


def column(f: Dict[str, Any], spec: Dict[str, Any], threads: int) -> Dict[str, Any]:
    """The fitted attributes of one column of a fit without a stream,
    checked: ascending finite scores, ``n_calibration_`` their number,
    ``trimmed_ = ⌊contamination_·(n + trimmed_)⌋``, and ``mc_correction_``
    present exactly when the fit computes one, equal to it."""
    stream_only = sorted(set(f) & {"n_samples_seen_", "rank_error_"})
    if stream_only:
        raise ValueError(f"{stream_only} describe a stream, and the state stores none")
    unknown = sorted(set(f) - set(FIT_KEYS))
    if unknown:
        raise ValueError(f"unknown fitted attributes: {unknown}")
    if "sorted_" not in f:
        raise ValueError("a fitted conformal scaler stores 'sorted_' (or a 'stream')")
    a = scores(f["sorted_"], "sorted_")
    if np.any(a[1:] < a[:-1]):
        raise ValueError("sorted_ must hold the calibration scores in ascending order")
    n = int(a.size)
    n_calibration = count(f.get("n_calibration_", n), "n_calibration_", 1)
    if n_calibration != n:
        raise ValueError(f"n_calibration_ = {n_calibration} contradicts sorted_, which holds {n} scores")
    trimmed = count(f.get("trimmed_", 0), "trimmed_")
    fraction = real(f.get("contamination_", 0.0), "contamination_")
    if not 0.0 <= fraction < 1.0:
        raise ValueError(f"contamination_ must be in [0, 1), got {fraction!r}")
    if n + trimmed > MAX_COUNT or trimmed != math.floor(fraction * (n + trimmed)):
        raise ValueError(
            f"trimmed_ = {trimmed} contradicts contamination_ = {fraction!r}: the fit trims "
            f"⌊contamination_·(n_calibration_ + trimmed_)⌋ scores"
        )
    fit: Dict[str, Any] = {
        "sorted_": np.ascontiguousarray(a), "n_calibration_": n, "trimmed_": trimmed,
        "contamination_": fraction,
    }
    expected = mc_correction(n, spec, threads)
    if expected is None:
        if "mc_correction_" in f:
            raise ValueError(
                "mc_correction_ is stored only with conditional='mc' and 17 or more calibration scores"
            )
        return fit
    if "mc_correction_" not in f:
        raise ValueError("conditional='mc' stores its mc_correction_, and it is missing")
    stored = real(f["mc_correction_"], "mc_correction_")
    if stored != expected:
        raise ValueError(
            f"mc_correction_ = {stored!r} contradicts the correction recomputed from n, delta, "
            f"mc_simulations and seed ({expected!r})"
        )
    fit["mc_correction_"] = expected
    return fit


def fitted_dict(attributes: Dict[str, Any], ndim: int) -> Dict[str, Any]:
    """The fitted attributes of a state as ``to_dict`` stores them."""
    fitted: Dict[str, Any] = {}
    for name, value in attributes.items():
        if name in ("spec", "excluded_"):
            # ``excluded_`` is stored beside the fit, not recomputed from it.
            continue
        if name == "sorted_":
            fitted[name] = value.tolist() if ndim == 1 else [c.tolist() for c in value]
        else:
            fitted[name] = value.tolist() if isinstance(value, np.ndarray) else value
    return fitted


def _same(stored: Any, recomputed: Any) -> bool:
    """Equal values of the same kinds: numbers (not bools, not text)
    compared exactly, lists element by element."""
    if isinstance(recomputed, list):
        return (isinstance(stored, (list, tuple)) and len(stored) == len(recomputed)
                and all(_same(a, b) for a, b in zip(stored, recomputed)))
    if isinstance(stored, bool) or not isinstance(stored, numbers.Real):
        return False
    return bool(stored == recomputed)


def agree(fitted: Dict[str, Any], spec: Dict[str, Any], attributes: Dict[str, Any],
          ndim: int) -> None:
    """A stored fit agrees with the state its stream publishes: the same
    attributes with the same values, and the same options."""
    recomputed = fitted_dict(attributes, ndim)
    for name in sorted(set(fitted) | set(recomputed)):
        if name not in fitted or name not in recomputed:
            raise ValueError(
                f"the fitted attribute {name} is {'missing' if name not in fitted else 'not published'}"
                " for the stored stream"
            )
        if not _same(fitted[name], recomputed[name]):
            raise ValueError(f"the fitted attribute {name} contradicts the stored stream")
    if spec != attributes["spec"]:
        raise ValueError("'spec' contradicts the parameters the stored stream is fitted with")


def columns(fitted: Dict[str, Any], ndim: int) -> List[Dict[str, Any]]:
    """Per-column dicts of stored fitted attributes."""
    if ndim == 1:
        return [dict(fitted)]
    lengths = {len(v) for v in fitted.values() if isinstance(v, list)}
    if len(lengths) != 1 or any(not isinstance(v, list) for v in fitted.values()):
        raise ValueError("fitted attributes must have one value per column, all of one length")
    (k,) = lengths
    if k == 0:
        raise ValueError("a fitted scaler needs at least one score column; the lists are empty")
    return [{name: v[j] for name, v in fitted.items()} for j in range(k)]
