"""The paper's study as library code: detectors → scores → every
transformation → every measure → findings, figures and a report.

Röchner et al. (SISAP 2024) score 21 benchmark datasets with 11 PyOD
detectors, turn each score set into probabilities with linear scaling, GS
and ten robust variants, and measure them (contract §6). This package runs
that study on the shipped data (``paper/data``), on a folder of your own
``.npz`` datasets, or on precomputed score sets, with any detectors and any
scalers besides ``outprob.VARIANTS``; ``outprob reproduce`` is its command.
Needs the ``study`` extra (PyOD, pandas, tqdm, matplotlib).

>>> from outprob import experiment
>>> experiment.PAPER_DETECTORS[:3]
('PCA', 'KPCA', 'GMM')
"""

from __future__ import annotations

from .datasets import (
    MISSING_DATASETS,
    PAPER_DATASETS,
    QUICK_DATASETS,
    Dataset,
    ScoreSet,
    load_dataset,
    load_datasets,
    load_score_sets,
    paper_data_dir,
)
from .detectors import (
    MEMORY_BUDGET,
    PAPER_DETECTORS,
    QUICK_DETECTORS,
    Detector,
    as_detector,
    paper_detectors,
    standardise,
)
from .evaluation import CLASSES, HIS, MEASURES, REFERENCE, SKILL, score_set_rows, transformations
from .reproduce import reproduce
from .run import RESULT_COLUMNS, STATUS_COLUMNS, StudyInterrupted, StudyResult, Task, run_study

__all__ = [
    "CLASSES", "Dataset", "Detector", "HIS", "MEASURES", "MEMORY_BUDGET", "MISSING_DATASETS",
    "PAPER_DATASETS", "PAPER_DETECTORS", "QUICK_DATASETS", "QUICK_DETECTORS", "REFERENCE",
    "RESULT_COLUMNS", "SKILL", "STATUS_COLUMNS", "ScoreSet", "StudyInterrupted", "StudyResult",
    "Task", "as_detector", "load_dataset", "load_datasets", "load_score_sets", "paper_data_dir",
    "paper_detectors", "reproduce", "run_study", "score_set_rows", "standardise", "transformations",
]
