"""The paper's figures and the reliability diagram (matplotlib, the
``plot`` extra).

Every function takes data — arrays, mappings of arrays, a
:class:`~outprob.compare.Comparison` — never file names, draws on new axes
(or the ones given) and returns the matplotlib ``Figure`` or ``Axes``:

=============================  ==============================================
:func:`case_study`             paper Fig. 1 (a)–(d): one score set, GS vs a robust variant
:func:`gs_gap_boxplot`         paper Fig. 2: GS's outlier-vs-inlier skill per measure
:func:`skill_boxplots`         paper Fig. 3: every transformation's skill against GS
:func:`cd_diagram`             paper Fig. 4: mean ranks with Wilcoxon–Holm cliques
:func:`reliability_diagram`    mean probability vs outlier fraction per bin, with counts
=============================  ==============================================

Box plots follow the paper: whiskers reach the most extreme value within
1.5 × IQR of the quartiles and values beyond them are not drawn.
"""

from __future__ import annotations

from .boxplots import WHIS, gs_gap_boxplot, skill_boxplots
from .case_study import case_study
from .diagrams import cd_diagram, reliability_diagram

__all__ = ["WHIS", "case_study", "cd_diagram", "gs_gap_boxplot", "reliability_diagram", "skill_boxplots"]
