"""Transform one score set by every transformation and measure the results.

For each transformation T, ``p = T.fit_transform(scores)`` and every
measure of contract §6 (``outprob.metrics.evaluate``), overall, per class
and stratified; then the skill score of every measure and class against the
reference transformation (GS, ``mean_std``), and the harmonic improvement
score over the six stratified sharpness/refinement/calibration errors with
all the study's transformations as the candidate set — both through
``outprob.metrics`` with the measured values looked up, so that the
formulas and their edge cases are the library's.
"""

from __future__ import annotations

import copy
import math
import warnings
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

import outprob
from outprob import metrics

__all__ = [
    "MEASURES",
    "CLASSES",
    "SKILL",
    "HIS",
    "REFERENCE",
    "Transformation",
    "transformations",
    "score_set_rows",
    "skill",
]

#: Measures of contract §6, in the results table's order.
MEASURES: Tuple[str, ...] = ("brier_score", "sharpness_error", "refinement_error", "calibration_error")
#: Classes of a measure: all observations, per class, and their mean.
CLASSES: Tuple[str, ...] = ("overall", "outliers", "inliers", "stratified")
#: Suffix of the skill-score measures (``brier_score_skill``, ...).
SKILL = "_skill"
#: The harmonic improvement score's measure name (class ``"both"``).
HIS = "harmonic_improvement_score"
#: The reference of the skill scores: non-robust Gaussian scaling (GS).
REFERENCE = "mean_std"

Row = Tuple[str, str, str, float]


class Transformation:
    """A named score → probability map: ``fresh()`` gives an unfitted copy
    with ``fit_transform(scores)``; ``identity`` is what its results depend
    on (the results cache's key)."""

    def __init__(self, name: str, fresh: Callable[[], Any], identity: str) -> None:
        self.name, self.fresh, self.identity = name, fresh, identity

    def __repr__(self) -> str:
        return f"Transformation({self.name!r})"


class _Variant:
    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self) -> Any:
        return outprob.scaler(self.name)


class _Copy:
    def __init__(self, template: Any) -> None:
        self.template = template

    def __call__(self) -> Any:
        try:
            from sklearn.base import clone

            return clone(self.template)
        except Exception:  # noqa: BLE001 - not a scikit-learn estimator
            return copy.deepcopy(self.template)


def transformations(scalers: Optional[Mapping[str, Any]] = None) -> Dict[str, Transformation]:
    """Every entry of ``outprob.TRANSFORMATIONS`` (the paper's 12 variants
    and contract §10's, as registered when called) and the user's
    ``scalers`` (name → object with ``fit_transform``)."""
    out = {name: Transformation(name, _Variant(name), f"variant {entry.note!r}")
           for name, entry in outprob.TRANSFORMATIONS.items()}
    for name, obj in (scalers or {}).items():
        if name in out:
            raise ValueError(f"scaler name {name!r} is taken by a registered variant; choose another")
        if not hasattr(obj, "fit_transform"):
            raise TypeError(f"scaler {name!r} has no fit_transform(scores): got {type(obj).__name__}")
        out[name] = Transformation(name, _Copy(obj), f"scaler {obj!r}")
    return out


def _value(y_true: Any, p: float, stratify: Optional[str] = None) -> float:
    return p


def skill(value: float, reference: float) -> float:
    """Skill score ``−log₂(value / reference)`` of two measured values, with
    the edge cases of contract §6 (``outprob.metrics.skill_score``)."""
    return metrics.skill_score(None, value, reference, measure=_value)


class _Lookup:
    """A measure for ``outprob.metrics`` whose "probabilities" are names of
    transformations and whose values are the ones already measured."""

    def __init__(self, values: Mapping[str, Mapping[str, Mapping[str, float]]], measure: str) -> None:
        self.values, self.measure = values, measure

    def __call__(self, y_true: Any, p: str, stratify: Optional[str] = None) -> float:
        cls = {None: "overall", "outlier": "outliers", "inlier": "inliers", "both": "stratified"}[stratify]
        return self.values[p][self.measure][cls]


def score_set_rows(
    scores: np.ndarray,
    y: np.ndarray,
    transforms: Mapping[str, Transformation],
    *,
    reference: str = REFERENCE,
    bins: str = "equiareal",
    n_bins: Sequence[int] = metrics.DEFAULT_N_BINS,
    selection_alphas: Sequence[float] = (),
    selection: Optional[List[Any]] = None,
) -> Tuple[List[Row], Dict[str, int]]:
    """Rows ``(transformation, measure, class, value)`` for one score set,
    and the count of each warning category the transformations raised
    (e.g. ``ZeroScaleWarning``: the chosen scale was 0 and fell back).
    With a ``selection`` list, the rows of ``selection.selection_rows``
    (BH at ``selection_alphas``) are appended to it."""
    values: Dict[str, Dict[str, Dict[str, float]]] = {}
    warned: Dict[str, int] = {}
    for name, t in transforms.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                p = np.asarray(t.fresh().fit_transform(scores), dtype=np.float64).reshape(-1)
            except (ValueError, TypeError, ArithmeticError) as exc:
                # A transformation whose domain these scores leave (e.g. the
                # mixture model's non-negative scores) is recorded, not fatal:
                # its values are NaN and the report counts the refusals.
                key = f"{name}: refused ({type(exc).__name__})"
                warned[key] = warned.get(key, 0) + 1
                values[name] = {m: {c: math.nan for c in CLASSES} for m in MEASURES}
                continue
        for w in caught:
            key = f"{name}: {w.category.__name__}"
            warned[key] = warned.get(key, 0) + 1
        if selection is not None:
            from .selection import selection_rows

            selection.extend(selection_rows(name, t.fresh, scores, y, selection_alphas))
        ev = metrics.evaluate(y, p, bins=bins, n_bins=list(n_bins)).to_dict()
        values[name] = {m: {c: float(ev[m][c]) for c in CLASSES} for m in MEASURES}
    rows: List[Row] = [
        (name, m, c, values[name][m][c]) for name in transforms for m in MEASURES for c in CLASSES
    ]
    if reference in values:
        ref = values[reference]
        rows.extend((name, m + SKILL, c, skill(values[name][m][c], ref[m][c]))
                    for name in transforms for m in MEASURES for c in CLASSES)
    his_measures = [(_Lookup(values, m), s) for m, s in metrics.HIS_MEASURES]
    # The improvement is measured against the mean of the paper's 12
    # variants (contract §8), so that a transformation added to the study
    # changes no other transformation's score.
    pool = [n for n in transforms if n in outprob.VARIANTS] or list(transforms)
    for name in transforms:
        rows.append((name, HIS, "both", metrics.harmonic_improvement_score(y, name, pool, measures=his_measures)))
    return rows, warned
