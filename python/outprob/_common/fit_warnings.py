"""The warnings a Gaussian fit gives (contract §2's fallback chain, §3's
convergence), as (category, message) notes: one wording for the scalers
and for ``outprob stream``, which fits without them."""

from __future__ import annotations

from typing import List, Tuple

from .exceptions import ZeroScaleWarning

Notes = List[Tuple[type, str]]

__all__ = ["Notes", "scale_notes", "stream_notes"]


def scale_notes(chosen: str, center: float, scale: float, scale_used: str, where: str) -> Notes:
    """The §2 fallback chain's warnings for a fit that asked for the scale
    ``chosen`` ("value" for a fixed number) and used ``scale_used``."""
    if scale == 0.0:
        return [(ZeroScaleWarning, (
            f"every scale estimate{where} is zero: the scores are constant "
            f"({center!r}); scores at or below it map to 0, higher ones to 1"
        ))]
    if scale_used != chosen:
        return [(ZeroScaleWarning, (
            f"scale {chosen!r}{where} is zero (common when many scores tie); "
            f"fell back to {scale_used!r}"
        ))]
    return []


def stream_notes(result: object, chosen: str, maxiter: int, tol: float, where: str) -> Notes:
    """The warnings of a streaming fit's result (``StreamingResult``)."""
    r = result
    notes = scale_notes(chosen, r.center, r.scale, r.scale_used, where)  # type: ignore[attr-defined]
    if r.converged is False:  # type: ignore[attr-defined]
        # Made on first use: it subclasses scikit-learn's, whose import a
        # stream that converges does not pay.
        from .exceptions import ConvergenceWarning

        notes.append((ConvergenceWarning, (
            f"Huber's proposal 2{where} did not converge within maxiter={maxiter} "
            f"iterations (tol={tol}); using the last iterate"
        )))
    return notes
