"""
Finding outliers with a guarantee: power against α per method
=============================================================

The committed run of ``benches/conformal_contamination.py``
(``benches/results/2026-12-07-conformal-methods.json``): 18 datasets × 10
stratified splits × six PyOD detectors; Benjamini–Hochberg at α = 0.05,
0.1 and 0.2 on each method's p-values of the test part. Left: the power
(the mean fraction of the test outliers selected); right: the realised
false discovery rate with the line FDR = α, which every method that claims
FDR control must stay under (within its Monte Carlo error).

Plain conformal p-values with clean calibration keep the guarantee and
find few outliers: a p-value never falls below 1/(n + 1), and BH needs
p ≤ α/m. Fitted tails go below that bound; several detectors at once add
evidence; contaminated calibration finds almost nothing.
"""

import json
from pathlib import Path

import matplotlib.pyplot as plt

here = Path.cwd()
results = next(p / "benches" / "results" for p in (here, *here.parents)
               if (p / "benches" / "results" / "2026-12-07-conformal-methods.json").is_file())
run = json.loads((results / "2026-12-07-conformal-methods.json").read_text())
alphas = run["alphas"]
shown = [m for m in run["methods"] if not m.startswith("nonconform")]

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5), sharex=True)
for i, name in enumerate(shown):
    m = run["methods"][name]
    power = [m[str(a)]["power"] for a in alphas]
    fdr = [m[str(a)]["fdr"] for a in alphas]
    se = [2 * m[str(a)]["fdr_se"] for a in alphas]
    style = "-" if m["guarantee"] == "FDR" else "--"
    color = f"C{i % 10}"
    left.plot(alphas, power, style, marker="o", color=color, label=name)
    right.errorbar(alphas, fdr, yerr=se, fmt=style, marker="o", color=color, capsize=2)
right.plot([0, 0.25], [0, 0.25], "k:", lw=1.5, label="FDR = α")
left.set(xlabel="α", ylabel="power", title="Power of BH (solid: FDR guaranteed)")
right.set(xlabel="α", ylabel="realised FDR (± 2 SE)", title="Realised FDR", xlim=(0.03, 0.22))
right.legend(loc="upper left")
left.legend(fontsize=7, loc="upper left", ncol=1)
fig.tight_layout()
plt.show()
