"""Which points a transformation declares outliers, and how many of them
are (the report's "FDR control" section, contract §8 and §11).

Each score set is split in halves at random (stratified by label, seed
0): a transformation is fitted on the calibration half and selects among
the test half. Rules: every transformation selects the points whose
probability exceeds ½; the conformal ones also select by
Benjamini–Hochberg at each α of :data:`ALPHAS` on their p-values, with the
calibration half as it is (outliers included, as a detector's training
scores are), and ``conformal`` also with the calibration half's inliers
only (``clean``: the setting of BH's guarantee, which needs labels). Per
rule: how many were selected, the false discovery proportion (inliers among
the selected) and the power (the fraction of the test half's outliers
selected).
"""

from __future__ import annotations

import math
from typing import Any, Callable, List, Sequence, Tuple

import numpy as np

__all__ = ["ALPHAS", "SELECTION_COLUMNS", "selection_rows", "halves", "FAMILIES", "family", "fdr_table",
           "fdr_section", "fdr_figure"]

#: The FDR levels of BH on conformal p-values.
ALPHAS: Tuple[float, ...] = (0.05, 0.1, 0.2)
SELECTION_COLUMNS = ("dataset", "detector", "transformation", "rule", "selected", "fdp", "power")

Row = Tuple[str, str, int, float, float]


def _rates(mask: np.ndarray, y: np.ndarray) -> Tuple[int, float, float]:
    selected = int(mask.sum())
    fdp = float(np.sum(mask & (y == 0)) / selected) if selected else 0.0
    outliers = int(y.sum())
    power = float(np.sum(mask & (y == 1)) / outliers) if outliers else math.nan
    return selected, fdp, power


def halves(y: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Calibration and test rows: a random half each, stratified by label
    when both classes have two members (seed 0)."""
    from sklearn.model_selection import train_test_split

    idx = np.arange(len(y))
    counts = np.bincount(np.asarray(y, dtype=int), minlength=2)
    stratify = y if counts.min() >= 2 else None
    cal, test = train_test_split(idx, test_size=0.5, random_state=0, stratify=stratify)
    return np.sort(cal), np.sort(test)


def selection_rows(
    name: str, fresh: Callable[[], Any], scores: np.ndarray, y: np.ndarray,
    alphas: Sequence[float] = ALPHAS,
) -> List[Row]:
    """Rows ``(transformation, rule, selected, fdp, power)`` of one
    transformation (``fresh()`` gives an unfitted copy): rule ``"p>0.5"``,
    and ``"bh_α"`` (and ``"bh_α clean"`` for ``conformal``) when it gives
    p-values (``pvalues``)."""
    import warnings

    with warnings.catch_warnings():
        # The fit on all scores reported its warnings (score_set_rows).
        warnings.simplefilter("ignore")
        try:
            return _selection_rows(name, fresh, scores, y, alphas)
        except (ValueError, TypeError, ArithmeticError):
            return []  # refused on a half, as score_set_rows records refusals


def _selection_rows(
    name: str, fresh: Callable[[], Any], scores: np.ndarray, y: np.ndarray, alphas: Sequence[float]
) -> List[Row]:
    from .._conformal.selection import select

    y = np.asarray(y).astype(bool).astype(int)
    cal, test = halves(y)
    s_cal, s_test, y_test = scores[cal], scores[test], y[test]
    fitted = fresh()
    fitted.fit(s_cal)
    p = np.asarray(fitted.transform(s_test), dtype=np.float64).reshape(-1)
    rows: List[Row] = [(name, "p>0.5", *_rates(np.nan_to_num(p) > 0.5, y_test))]
    if not callable(getattr(fitted, "pvalues", None)):
        return rows
    calibrations = [("", fitted)]
    if name == "conformal" and np.any(y[cal] == 0):
        clean = fresh()
        clean.fit(s_cal[y[cal] == 0])
        calibrations.append((" clean", clean))
    for suffix, c in calibrations:
        pv = np.asarray(c.pvalues(s_test), dtype=np.float64).reshape(-1)
        for a in alphas:
            rows.append((name, f"bh_{a:g}{suffix}", *_rates(select(pv, a).mask, y_test)))
    return rows


#: Transformation families of the report, in its order.
FAMILIES: Tuple[str, ...] = (
    "GS (mean_std)", "robust Gaussian (paper's 10)", "linear", "trim='auto' Gaussian", "gamma",
    "rank", "sigmoid / mixture", "top_k", "conformal", "conformal (trimmed)",
)


def family(name: str, paper: Sequence[str]) -> str:
    """The report's family of a transformation name."""
    if name == "mean_std":
        return FAMILIES[0]
    if name == "linear":
        return "linear"
    if name in paper:
        return FAMILIES[1]
    if name.endswith("_auto"):
        return FAMILIES[3]
    if name in ("gamma", "robust_gamma"):
        return "gamma"
    if name in ("rank", "log_rank"):
        return "rank"
    if name in ("sigmoid", "mixture"):
        return "sigmoid / mixture"
    if name == "conformal_trimmed":
        return "conformal (trimmed)"
    if name.startswith("conformal"):
        return "conformal"
    return name


def fdr_table(selection: Any, paper: Sequence[str]) -> Any:
    """Mean FDP (realised FDR), mean power and mean selected count per
    family and rule, over score sets (and a family's members); a pandas
    DataFrame with columns family, rule, fdr, power, selected, n."""
    import pandas as pd

    if selection is None or len(selection) == 0:
        return pd.DataFrame(columns=["family", "rule", "fdr", "power", "selected", "n"])
    t = selection.assign(family=[family(n, paper) for n in selection["transformation"]])
    g = t.groupby(["family", "rule"], sort=False)
    out = g.agg(fdr=("fdp", "mean"), power=("power", "mean"), selected=("selected", "mean"),
                n=("fdp", "size")).reset_index()
    order = {f: i for i, f in enumerate(FAMILIES)}
    out["_o"] = [order.get(f, len(order)) for f in out["family"]]
    return out.sort_values(["_o", "rule"], kind="stable").drop(columns="_o").reset_index(drop=True)


def fdr_section(selection: Any, paper: Sequence[str]) -> List[str]:
    """Markdown lines of the report's "FDR control" section."""
    table = fdr_table(selection, paper)
    if table.empty:
        return []
    lines = [
        "## FDR control",
        "",
        "Which points each transformation declares outliers, and how many of them are. Each score "
        "set is split in random halves (stratified, seed 0); every transformation is fitted on the "
        "calibration half and selects among the test half the points with probability > ½; the "
        "conformal ones (contract §11) also select by Benjamini–Hochberg at α ∈ "
        f"{{{', '.join(f'{a:g}' for a in ALPHAS)}}} on their p-values — calibrated on the half as it "
        "is, outliers included (what one has in practice), and, for `conformal`, on its inliers only "
        "(`clean`: the setting of BH's guarantee, FDR ≤ α). Realised FDR = mean over score sets of "
        "the fraction of inliers among the selected (0 when nothing is selected); power = mean "
        "fraction of the test half's outliers selected; a family's numbers are means over its "
        "members too. Contamination makes conformal p-values conservative (fewer, safer "
        "selections); trimming it (`conformal_trimmed`) buys power back at a risk to the FDR "
        "(contract §11).",
        "",
        "| family | rule | realised FDR | power | mean selected | score sets × members |",
        "|---|---|---|---|---|---|",
    ]
    lines += [f"| {r.family} | {r.rule} | {r.fdr:.3f} | {r.power:.3f} | {r.selected:.1f} | {r.n} |"
              for r in table.itertuples()]
    lines.append("")
    robust = table[(table["family"] == FAMILIES[1]) & (table["rule"] == "p>0.5")]
    pick = {rule: table[(table["family"].isin(["conformal", "conformal (trimmed)"]))
                        & (table["rule"] == rule)] for rule in ("bh_0.1", "bh_0.1 clean")}
    if len(robust) and len(pick["bh_0.1"]) and len(pick["bh_0.1 clean"]):
        r, b, c = robust.iloc[0], pick["bh_0.1"].iloc[0], pick["bh_0.1 clean"].iloc[0]
        lines += [
            f"Robust probabilities thresholded at ½ select {r.selected:.1f} points a test half with "
            f"a realised FDR of {r.fdr:.3f} and power {r.power:.3f}, with no guarantee on either. BH "
            f"at α = 0.1 on conformal p-values selects {c.selected:.1f} with FDR {c.fdr:.3f} and power "
            f"{c.power:.3f} when calibrated on inliers, and {b.selected:.1f} with FDR {b.fdr:.3f} and "
            f"power {b.power:.3f} when calibrated on the contaminated half.",
            "",
        ]
    return lines


def fdr_figure(selection: Any, paper: Sequence[str]) -> Any:
    """Realised FDR against power per family and rule (one marker each),
    with the α lines of BH; a matplotlib Figure."""
    import matplotlib.pyplot as plt

    table = fdr_table(selection, paper)
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    ax.axvline(0.1, color="0.8", lw=0.8, ls="--")
    for r in table.itertuples():
        bh = r.rule.startswith("bh_")
        if bh and r.rule[3:].split()[0] != "0.1":
            continue  # one α per family keeps the figure readable
        ax.scatter(r.fdr, r.power, marker="o" if bh else "s", s=40 if bh else 30,
                   color="C3" if bh else "C0", alpha=0.85)
        label = f"{r.family}" + (f" BH α=0.1{' clean' if r.rule.endswith('clean') else ''}" if bh else "")
        ax.annotate(label, (r.fdr, r.power), fontsize=6.5, xytext=(3, 2), textcoords="offset points")
    ax.set_xlabel("realised FDR (mean false discovery proportion)")
    ax.set_ylabel("power (mean fraction of outliers selected)")
    ax.set_title("Probabilities > ½ (squares) against BH at α = 0.1 on conformal p-values (circles)",
                 fontsize=9)
    ax.set_xlim(left=0)
    ax.set_ylim(0, 1)
    fig.tight_layout()
    return fig
