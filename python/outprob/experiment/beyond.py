"""Transformations beyond the paper (contract §10) in the study: what the
results table says of them, stated plainly, including where they lose.

The paper's findings (:mod:`.findings`) are computed over the paper's 12
variants only; this module compares every registered transformation, so
that adding one changes nothing there. Summaries are medians over score
sets of the outlier skill score against GS (positive = better than GS),
and head-to-head win rates on the same score sets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from .evaluation import MEASURES, REFERENCE
from .findings import _SHORT, his_comparison, skill_scores

__all__ = ["PAIRS", "Comparison", "head_to_head", "beyond_the_paper"]

#: (challenger, incumbent, question): the variants beyond the paper against
#: the ones they refine; a pair is reported when both were run.
PAIRS: Tuple[Tuple[str, str, str], ...] = (
    ("robust_gamma", "gamma", "does robust gamma scaling beat gamma scaling?"),
    ("trimmed_mean_nmad_auto", "trimmed_mean_nmad", "does trim='auto' beat the fixed 10 % trim?"),
    ("trimmed_mean_std_auto", "trimmed_mean_std", "does trim='auto' beat the fixed 10 % trim (SD)?"),
    ("trimmed_mean_niqr_auto", "trimmed_mean_niqr", "does trim='auto' beat the fixed 10 % trim (nIQR)?"),
)


@dataclass(frozen=True)
class Comparison:
    """``challenger`` against ``incumbent`` on one measure (outliers)."""

    challenger: str
    incumbent: str
    measure: str
    challenger_median: float
    incumbent_median: float
    #: Fraction of score sets where the challenger's outlier measure is
    #: strictly lower (better) than the incumbent's; ties count half.
    win_rate: float
    n_sets: int


def head_to_head(results: Any, challenger: str, incumbent: str, reference: str = REFERENCE) -> List[Comparison]:
    """Per measure: both medians of the outlier skill against GS and the
    challenger's win rate on the same score sets."""
    out = []
    for m in MEASURES:
        skill = skill_scores(results, m)
        if challenger not in skill.columns or incumbent not in skill.columns:
            return []
        a = skill[challenger].to_numpy(dtype=float)
        b = skill[incumbent].to_numpy(dtype=float)
        both = ~(np.isnan(a) | np.isnan(b))
        a, b = a[both], b[both]
        # Higher skill = lower measure = better.
        wins = float(np.mean(a > b) + 0.5 * np.mean(a == b)) if a.size else math.nan
        out.append(Comparison(challenger, incumbent, m, float(np.median(a)) if a.size else math.nan,
                              float(np.median(b)) if b.size else math.nan, wins, int(a.size)))
    return out


def _verdict(rows: Sequence[Comparison]) -> str:
    better = [r for r in rows if r.win_rate > 0.5]
    if len(better) == len(rows):
        return f"yes: {rows[0].challenger} wins on every measure"
    if not better:
        return f"no: {rows[0].challenger} wins on no measure"
    return "on " + ", ".join(_SHORT[r.measure] for r in better) + " only"


def beyond_the_paper(results: Any, paper: Sequence[str], reference: str = REFERENCE) -> List[str]:
    """Markdown lines of the report's section on §10's transformations."""
    present = set(results["transformation"].unique())
    beyond = sorted(present - set(paper))
    if not beyond:
        return []
    lines = [
        "## Beyond the paper",
        "",
        f"Transformations of contract §10 in this run: {', '.join(beyond)}. The paper's findings above "
        "are computed over the paper's 12 variants only. Here every transformation is compared; medians "
        "of the outlier skill score against GS over score sets, and win rates on the same score sets "
        "(the fraction where the first has the lower outlier measure; ties count half).",
        "",
    ]
    for challenger, incumbent, question in PAIRS:
        rows = head_to_head(results, challenger, incumbent, reference)
        if not rows:
            continue
        lines += [f"**{question}** {_verdict(rows)}.", ""]
        lines += _table(rows)
    cmp = his_comparison(results)
    ranking = cmp.ranking()
    order = [n for n, _ in ranking]
    lines += [
        "**Where every transformation stands** (mean rank of the harmonic improvement score over "
        f"{cmp.n_sets} score sets, lower is better; {len(order)} transformations):",
        "",
        "| # | transformation | mean rank | § |",
        "|---|---|---|---|",
    ]
    lines += [f"| {i} | {n} | {r:.2f} | {'10' if n not in paper else 'paper'} |"
              for i, (n, r) in enumerate(ranking, 1)]
    best_new: Optional[str] = next((n for n in order if n not in paper), None)
    if best_new is not None:
        lines += ["", f"The best-ranked transformation beyond the paper is {best_new} "
                      f"(#{order.index(best_new) + 1}); the best overall is {order[0]}."]
    n_all = int(results[(results["measure"] == "harmonic_improvement_score")]
                [["dataset", "detector"]].drop_duplicates().shape[0])
    if cmp.n_sets < n_all:
        lines += ["", f"The ranking covers the {cmp.n_sets} of {n_all} score sets on which every "
                      "transformation gave probabilities (see the warnings: a transformation may refuse "
                      "scores outside its domain, e.g. the mixture model negative ones)."]
    if "top_k" in order:
        lines += ["", "Read the harmonic improvement score with care for `top_k`: its output is 0 or 1, "
                      "perfectly sharp by construction, and the score's sharpness terms reward that; its "
                      "outlier Brier and calibration skills are in the table of the previous section."]
    lines += ["", "```text", str(cmp), "```", ""]
    return lines


def _table(rows: Sequence[Comparison]) -> List[str]:
    a, b = rows[0].challenger, rows[0].incumbent
    out = [f"| measure (outliers) | {a} median skill | {b} median skill | {a} wins on |",
           "|---|---|---|---|"]
    out += [f"| {_SHORT[r.measure]} | {r.challenger_median:+.3f} | {r.incumbent_median:+.3f} | "
            f"{r.win_rate:.0%} of {r.n_sets} |" for r in rows]
    return out + [""]
