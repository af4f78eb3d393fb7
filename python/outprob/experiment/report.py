"""``REPORT.md``: the paper's findings against this run, with its figures,
data, detectors, skipped and failed score sets, and environment."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any, List, Mapping, Sequence

import numpy as np

import outprob

from .beyond import beyond_the_paper
from .datasets import MISSING_DATASETS, PAPER_DATASETS
from .evaluation import MEASURES
from .findings import Finding, his_comparison, skill_scores
from .selection import fdr_section

__all__ = ["write_report", "markdown_table"]

_FIGURES = (
    ("case_study", "Fig. 1 — case study: GS (solid) against median/nMAD (dashed)"),
    ("gs_gap", "Fig. 2 — GS: skill of the outliers' probabilities against the inliers'"),
    ("skill", "Fig. 3 — outlier skill scores of every transformation against GS"),
    ("cd", "Fig. 4 — mean ranks of the harmonic improvement score"),
    ("reliability", "Reliability diagram of the case study"),
    ("fdr", "FDR control — realised FDR and power: probabilities > ½ against BH on conformal p-values"),
)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min ({seconds:.0f} s)"


def _findings_section(found: Sequence[Finding]) -> List[str]:
    agree = sum(f.agrees for f in found)
    return [
        "## The paper's findings and this run",
        "",
        f"{agree} of {len(found)} agree. Skill scores are summarised by their median over the score "
        "sets (the line in the paper's box plots); a skill score is −log₂(M / M_GS), positive = better "
        "than GS. Nothing was tuned to agree.",
        "",
        markdown_table(["#", "the paper", "this run", "agrees?"],
                       [(f.key, f.claim, f.result, "yes" if f.agrees else "**no**") for f in found]),
        "",
    ]


def _skill_section(results: Any, order: Sequence[str], reference: str) -> List[str]:
    cmp = his_comparison(results, order)
    ranks = dict(cmp.ranking())
    med = {m: skill_scores(results, m) for m in MEASURES}
    rows = []
    for t in order:
        if t == reference or t not in med["brier_score"].columns:
            continue
        cells = [f"{np.nanmedian(med[m][t].to_numpy(dtype=float)):+.3f}" for m in MEASURES]
        rows.append((t, *cells, f"{ranks[t]:.2f}" if t in ranks else "–"))
    inf = sum(int(np.isinf(med[m].to_numpy(dtype=float)).sum()) for m in MEASURES)
    return [
        "## Outlier skill against GS and the harmonic improvement score",
        "",
        "Median over score sets of each transformation's outlier skill score against GS (Fig. 3), "
        f"and its mean rank of the harmonic improvement score (Fig. 4; GS's mean rank: "
        f"{ranks.get(reference, math.nan):.2f}).",
        "",
        markdown_table(["transformation", "Brier", "sharpness", "refinement", "calibration",
                        "HIS mean rank"], rows),
        "",
        f"{inf} outlier skill scores are ±∞ (a measure of exactly 0 on one side) and are left out of the "
        "box plots; the medians include them.",
        "",
        "```text",
        str(cmp),
        "```",
        "",
    ]


def _data_section(datasets: Sequence[Any], n_score_sets: int) -> List[str]:
    rows = [(d.name, d.n, d.d, f"{d.n_outliers} ({d.n_outliers / d.n:.1%})", d.digest[:12]) for d in datasets]
    names = {d.name for d in datasets}
    if not datasets:
        return ["## Data", "", f"{n_score_sets} precomputed score sets (see the status table below).", ""]
    if names <= set(PAPER_DATASETS):
        absent = sorted(set(PAPER_DATASETS) - names - set(MISSING_DATASETS))
        about = (
            f"{len(datasets)} of the paper's 21 datasets (Campos et al. 2016 without KDDCup99 and ALOI). "
            f"**Missing: {', '.join(MISSING_DATASETS)}** (not shipped)"
            + (f"; not selected for this run: {', '.join(absent)}" if absent else "")
            + ". These are **ADBench's preprocessed versions** (Han et al., NeurIPS 2022) of Campos "
            "et al.'s datasets, not Campos' exact files, so sizes and outlier counts can differ from "
            f"the paper's. Score sets: {n_score_sets} (the paper: 231)."
        )
    else:
        about = f"{len(datasets)} datasets; {n_score_sets} score sets."
    return [
        "## Data",
        "",
        about,
        "",
        markdown_table(["dataset", "n", "d", "outliers", "content SHA-256"], rows),
        "",
    ]


def _status_section(status: Any, detectors: Mapping[str, Any]) -> List[str]:
    counts = Counter(status["status"])
    lines = [
        "## Detectors and score sets",
        "",
        ("PyOD's default hyperparameters, `random_state = 0` where a detector takes one, features "
         "standardised (zero mean, unit variance); scores are `decision_scores_` on the whole dataset. "
         if detectors else "Precomputed scores, no detector run. ")
        + f"Score sets: {counts.get('ok', 0)} measured, {counts.get('skipped', 0)} skipped, "
        f"{counts.get('failed', 0)} failed, {counts.get('non-finite', 0)} with non-finite scores.",
        "",
    ]
    rows, near_random = [], []
    for name in dict.fromkeys(status["detector"]):
        det = detectors.get(name)
        mine = status[status["detector"] == name]
        secs, auc, span = (mine[c].astype(float) for c in ("seconds", "roc_auc", "score_range"))
        slow = mine.loc[secs.idxmax(), "dataset"] if secs.notna().any() else "–"
        med_auc = float(np.nanmedian(auc)) if auc.notna().any() else math.nan
        if abs(med_auc - 0.5) < 0.05:
            near_random.append(f"{name} ({med_auc:.3f}; score ranges {np.nanmin(span):.2g} to {np.nanmax(span):.2g})")
        params = "precomputed" if det is None else ", ".join(f"{k}={v}" for k, v in det.params.items())
        rows.append((name, params or "defaults",
                     f"{med_auc:.3f}", f"{np.nanmin(span):.3g} – {np.nanmax(span):.3g}" if span.notna().any() else "–",
                     f"{np.nansum(secs):.1f}", f"{np.nanmax(secs) if secs.notna().any() else math.nan:.1f} ({slow})"))
    lines += [markdown_table(["detector", "parameters", "median ROC AUC", "score range (max − min)",
                              "fit seconds, all datasets", "slowest"], rows), ""]
    if near_random:
        lines += [f"Median ROC AUC within 0.05 of 0.5, i.e. scores that barely rank outliers above inliers: "
                  f"{'; '.join(near_random)}."
                  + (" With PyOD's default `n_components=None`, KPCA keeps every component, so its "
                     "reconstruction errors are floating-point noise." if any(n.startswith("KPCA ") for n in near_random)
                     else "")
                  + " These score sets stay in the study, as a default-hyperparameter study has them.", ""]
    bad = status[status["status"] != "ok"]
    if len(bad):
        lines += ["Not measured (skip rule of contract §8: a detector whose n × n float64 matrices "
                  "exceed the memory budget, or n > 10 000 for the detectors with n² memory):", ""]
        lines += [markdown_table(["dataset", "detector", "status", "why"],
                                 [(r.dataset, r.detector, r.status, r.message) for r in bad.itertuples()]), ""]
    return lines


def _warnings_section(parts_warnings: Mapping[str, int], n_sets: int) -> List[str]:
    if not parts_warnings:
        return []
    rows = sorted(parts_warnings.items(), key=lambda kv: (-kv[1], kv[0]))
    return [
        "## Scaler warnings",
        "",
        f"Score sets (of {n_sets}) on which a transformation warned — `ZeroScaleWarning`: the chosen "
        "scale was 0 (more than half the scores tie) and fell back as contract §5 says; "
        "`ConvergenceWarning`: Huber's proposal 2 kept its last iterate after 30 steps (contract §3).",
        "",
        markdown_table(["transformation: warning", "score sets"], rows),
        "",
    ]


def write_report(
    result: Any,
    out: Path,
    *,
    found: Sequence[Finding],
    figures: Mapping[str, Path],
    detectors: Mapping[str, Any],
    run: Mapping[str, Any],
    warned: Mapping[str, int],
) -> Path:
    """Write ``out/REPORT.md`` and return its path. ``run`` holds the
    command, times, jobs, load averages and ``environment``."""
    env = run["environment"]
    pk = env["packages"]
    lines = [
        "# Robust statistical scaling — reproduction report",
        "",
        "Röchner, Marques, Campello, Zimek, Rothlauf: *Robust Statistical Scaling of Outlier Scores*, "
        "SISAP 2024, rerun end to end by `outprob`. Regenerate with:",
        "",
        f"    {run['command']}",
        "",
        f"Run time: **{_minutes(run['seconds'])}** in total (study {_minutes(run['study_seconds'])}, "
        f"figures and report {_minutes(run['seconds'] - run['study_seconds'])}), {run['jobs']} worker "
        f"process(es) on {env['cores']} cores ({env['cpu']}, {env['memory_gib']} GiB); 1-minute load "
        f"average {run['load_before']} before and {run['load_after']} after the run (other work sharing "
        f"the machine). {run['resumed']} score sets came from an earlier run's store and "
        f"{run['cached']} scores from the score cache.",
        "",
    ]
    lines += _findings_section(found)
    if not result.results.empty:
        lines += _skill_section(result.results, result.transformations, result.reference)
        lines += beyond_the_paper(result.results, list(outprob.VARIANTS), result.reference)
        lines += fdr_section(getattr(result, "selection", None), list(outprob.VARIANTS))
    lines += ["## Figures", ""]
    for key, caption in _FIGURES:
        if key in figures:
            png = Path(figures[key])
            rel = png.relative_to(out) if png.is_relative_to(out) else png
            lines += [f"### {caption}", "", f"![{caption}]({rel.as_posix()}) "
                      f"([SVG]({rel.with_suffix('.svg').as_posix()}))", ""]
    lines += _data_section(result.datasets, len(result.status))
    lines += _status_section(result.status, detectors)
    lines += _warnings_section(warned, int((result.status["status"] == "ok").sum()))
    lines += [
        "## Files and environment",
        "",
        "`results.csv.gz`: one row per dataset × detector × transformation × measure × class "
        "(contract §8); `selection.csv.gz`: one row per dataset × detector × transformation × "
        "selection rule (the FDR section); `status.csv`: one row per score set; `environment.json`: "
        "this section.",
        "",
        markdown_table(["", "version"], [("Python", env["python"]), ("platform", env["platform"]),
                                        *((k, v or "not installed") for k, v in pk.items())]),
        "",
    ]
    path = out / "REPORT.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
