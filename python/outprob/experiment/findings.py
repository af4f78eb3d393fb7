"""The paper's findings, checked against a results table.

Every statistic is computed from the long results table of
:func:`~outprob.experiment.run_study` (columns ``dataset, detector,
transformation, measure, class, value``); the summary of a distribution of
skill scores over score sets is its **median** (the line in the paper's box
plots). Nothing here is tuned: a finding agrees or it does not, and the
numbers say by how much.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

from outprob import compare as _compare

from .evaluation import HIS, MEASURES, REFERENCE, SKILL, skill

__all__ = [
    "ROBUST",
    "Finding",
    "skill_scores",
    "gs_gap",
    "his_table",
    "his_comparison",
    "findings",
]

#: The paper's ten robust Gaussian scaling variants.
ROBUST: Tuple[str, ...] = (
    "mean_nmad", "mean_niqr", "median_std", "median_nmad", "median_niqr",
    "trimmed_mean_std", "trimmed_mean_nmad", "trimmed_mean_niqr", "huber", "tukey",
)
_SHORT = {"brier_score": "Brier", "sharpness_error": "sharpness", "refinement_error": "refinement",
          "calibration_error": "calibration"}


@dataclass(frozen=True)
class Finding:
    """One claim of the paper, what this run measured, and whether it agrees."""

    key: str
    claim: str
    result: str
    agrees: bool


def _wide(results: Any, measure: str, cls: str) -> Any:
    """Score sets (dataset, detector) × transformations for one measure."""
    sel = results[(results["measure"] == measure) & (results["class"] == cls)]
    return sel.pivot_table(index=["dataset", "detector"], columns="transformation", values="value",
                           aggfunc="first", sort=False)


def skill_scores(results: Any, measure: str, cls: str = "outliers") -> Any:
    """Skill scores against GS of every transformation (columns) per score
    set (rows) for a measure and class, as stored in the table."""
    return _wide(results, measure + SKILL, cls)


def gs_gap(results: Any, reference: str = REFERENCE) -> Any:
    """Per score set and measure, the skill of GS's outliers against its
    inliers, ``−log₂(M_outliers / M_inliers)`` (the paper's Fig. 2)."""
    import pandas as pd

    out = {}
    for m in MEASURES:
        sel = results[(results["measure"] == m) & (results["transformation"] == reference)]
        wide = sel.pivot_table(index=["dataset", "detector"], columns="class", values="value",
                               aggfunc="first", sort=False)
        out[m] = [skill(o, i) for o, i in zip(wide["outliers"], wide["inliers"])]
        index = wide.index
    return pd.DataFrame(out, index=index) if out else pd.DataFrame()


def his_table(results: Any) -> Any:
    """Harmonic improvement scores: score sets × transformations."""
    return _wide(results, HIS, "both").dropna()


def his_comparison(results: Any, methods: Sequence[str] = ()) -> Any:
    """Mean ranks and Wilcoxon–Holm cliques of the harmonic improvement
    score (``outprob.compare``), lower is better."""
    table = his_table(results)
    cols = [c for c in (methods or table.columns) if c in table.columns]
    return _compare.compare({c: table[c].to_numpy() for c in cols})


def _medians(frame: Any) -> Dict[str, float]:
    return {c: float(np.nanmedian(frame[c].to_numpy(dtype=float))) for c in frame.columns}


def _best(med: Dict[str, float], among: Sequence[str]) -> Tuple[str, float]:
    name = max((n for n in among if n in med), key=lambda n: med[n])
    return name, med[name]


def _fmt(x: float) -> str:
    return f"{x:+.3f}" if math.isfinite(x) else str(x)


def findings(results: Any, reference: str = REFERENCE) -> List[Finding]:
    """The paper's findings (1)–(3) with the numbers of this table, over
    the paper's 12 variants (transformations beyond them: :mod:`.beyond`)."""
    import outprob

    results = results[results["transformation"].isin(list(outprob.VARIANTS))]
    out: List[Finding] = []
    gap = gs_gap(results, reference)
    for m in MEASURES:
        values = gap[m].to_numpy(dtype=float)
        values = values[~np.isnan(values)]
        med = float(np.median(values))
        neg = float(np.mean(values < 0))
        out.append(Finding(
            f"1 {_SHORT[m]}",
            f"GS gives worse {_SHORT[m]} for outliers than for inliers",
            f"median skill outliers vs inliers {_fmt(med)}; negative on {neg:.0%} of {values.size} score sets",
            med < 0,
        ))
    medians = {m: _medians(skill_scores(results, m)) for m in MEASURES}
    robust = [r for r in ROBUST if r in medians["brier_score"]]
    if robust:  # the paper's robust variants were run
        out += _robust_findings(medians, robust)
    everyone = [t for t in medians["refinement_error"] if t != reference]
    if "linear" in everyone:
        for m in ("refinement_error", "calibration_error"):
            what = _SHORT[m]
            out.append(_best_finding(f"2d {what}", f"linear improves the outliers' {what} the most",
                                     "linear", medians[m], everyone, what))
    cmp = his_comparison(results)
    ranking = cmp.ranking()
    ranks = dict(ranking)
    top_clique = next((c for c in cmp.cliques if ranking[0][0] in c), (ranking[0][0],))
    position = [n for n, _ in ranking].index("mean_nmad") + 1 if "mean_nmad" in ranks else 0
    out.append(Finding(
        "3", "mean_nmad has the best mean rank of the harmonic improvement score",
        (f"best {ranking[0][0]} {ranking[0][1]:.2f}; mean_nmad {ranks.get('mean_nmad', math.nan):.2f} "
         f"(#{position} of {len(ranking)}, {cmp.n_sets} score sets"
         f"{', in the best clique' if 'mean_nmad' in top_clique and ranking[0][0] != 'mean_nmad' else ''})"),
        ranking[0][0] == "mean_nmad",
    ))
    return sorted(out, key=lambda f: f.key[:2])  # stable: the paper's order


def _robust_findings(med: Dict[str, Dict[str, float]], robust: Sequence[str]) -> List[Finding]:
    brier, cal = med["brier_score"], med["calibration_error"]
    worst = min(robust, key=lambda r: brier[r])
    best_cal = max(robust, key=lambda r: cal[r])
    return [
        Finding("2a", "every robust variant improves the outliers' Brier score over GS",
                f"{sum(brier[r] > 0 for r in robust)} of {len(robust)} robust variants have a positive "
                f"median Brier skill; lowest {worst} {_fmt(brier[worst])}",
                all(brier[r] > 0 for r in robust)),
        _best_finding("2b", "trimmed_mean_nmad improves the outliers' Brier score the most",
                      "trimmed_mean_nmad", brier, robust, "Brier"),
        _best_finding("2c", "mean_nmad has the best outlier sharpness among the robust variants",
                      "mean_nmad", med["sharpness_error"], robust, "sharpness"),
        Finding("2e", "the robust variants' outlier calibration is worse than GS's",
                f"{sum(cal[r] < 0 for r in robust)} of {len(robust)} robust variants have a negative median "
                f"calibration skill; highest {best_cal} {_fmt(cal[best_cal])}",
                all(cal[r] < 0 for r in robust)),
    ]


def _best_finding(key: str, claim: str, expected: str, med: Dict[str, float], among: Sequence[str],
                  what: str) -> Finding:
    best, value = _best(med, among)
    mine = med.get(expected, math.nan)
    if best == expected:
        ordered = sorted((med[n] for n in among if n in med), reverse=True)
        runner = ordered[1] if len(ordered) > 1 else math.nan
        result = f"{expected} median {what} skill {_fmt(mine)}, next best {_fmt(runner)}"
    else:
        result = f"best {best} {_fmt(value)}; {expected} {_fmt(mine)} ({value - mine:.3f} lower)"
    return Finding(key, claim, result, best == expected)
