"""
Critical-difference diagram of the committed study
==================================================

The paper's Figure 4 for the committed run of ``outprob reproduce``
(``paper/results.csv.gz``): the mean rank of every transformation's
harmonic improvement score over all score sets, with a bar joining each
group of transformations that no pairwise Wilcoxon signed-rank test
(Holm–Bonferroni corrected) tells apart.
"""

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from outprob import plot
from outprob.experiment import findings

here = Path.cwd()
paper = next(p / "paper" for p in (here, *here.parents) if (p / "paper" / "results.csv.gz").is_file())
results = pd.read_csv(paper / "results.csv.gz")
comparison = findings.his_comparison(results)
ax = plot.cd_diagram(comparison)
plt.show()

# %%
# The same comparison as text: mean ranks, significant pairs and cliques.
print(comparison)
