"""
Finding outliers with a guarantee: power against α per method
=============================================================

The committed run of ``benches/conformal_contamination.py``
(``benches/results/2026-12-07-conformal-labelled-evidence.json``): 18
datasets × 10 stratified splits × four PyOD detectors; Benjamini–Hochberg
at α = 0.05, 0.1 and 0.2 on each method's p-values of the test part.
Left: the power (the mean fraction of the test outliers selected); right:
the realised false discovery rate with the line FDR = α, which every
method that claims FDR control must stay under (within its Monte Carlo
error). Solid lines: methods that claim FDR control; dashed: the others.

Plain conformal p-values with clean calibration keep the guarantee and
find few outliers; contaminated calibration finds almost nothing.
Label-Trim, which removes the calibration outliers a person labels among
the most suspicious 5 % or 20 % of the calibration set, brings back most
or all of the clean power. Integrative p-values with labelled outliers
(here on the datasets with enough of them) and fitted tails go below the
p-value floor 1/(n + 1); only the tails' smallest p-values rest on a
model rather than a guarantee.
"""

import json
from pathlib import Path

import matplotlib.pyplot as plt

name = "2026-12-07-conformal-labelled-evidence.json"
here = Path.cwd()
results = next(p / "benches" / "results" for p in (here, *here.parents)
               if (p / "benches" / "results" / name).is_file())
run = json.loads((results / name).read_text())
alphas = run["alphas"]
shown = ["clean", "contaminated", "label-trim 5 %", "label-trim 20 %", "integrative, 10 outliers",
         "integrative, 50 outliers", "tail gpd", "tail gaussian", "tail gamma", "multi: ensemble max",
         "trimmed (auto)"]

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5), sharex=True)
for i, method in enumerate(shown):
    m = run["methods"][method]
    power = [m[str(a)]["power"] for a in alphas]
    fdr = [m[str(a)]["fdr"] for a in alphas]
    se = [2 * m[str(a)]["fdr_se"] for a in alphas]
    style = "-" if m["guarantee"].startswith("FDR") else "--"
    color = f"C{i % 10}" if i < 10 else "k"
    left.plot(alphas, power, style, marker="o", color=color, label=method)
    right.errorbar(alphas, fdr, yerr=se, fmt=style, marker="o", color=color, capsize=2)
right.plot([0, 0.25], [0, 0.25], "k:", lw=1.5, label="FDR = α")
left.set(xlabel="α", ylabel="power", title="Power of BH (solid: FDR claimed)", yscale="log")
right.set(xlabel="α", ylabel="realised FDR (± 2 SE)", title="Realised FDR", xlim=(0.03, 0.22))
right.legend(loc="upper left")
left.legend(fontsize=7, loc="lower right", ncol=2)
fig.tight_layout()
plt.show()
