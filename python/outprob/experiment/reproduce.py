"""The whole reproduction in one call: data → study → findings → figures →
``REPORT.md`` (what ``outprob reproduce`` runs)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from .datasets import QUICK_DATASETS, Dataset, ScoreSet, load_datasets, load_score_sets, paper_data_dir
from .detectors import QUICK_DETECTORS, Detector, paper_detectors
from .environment import environment, load_average
from .findings import findings
from .figures import make_figures
from .report import write_report
from .run import run_study

__all__ = ["reproduce", "WORK"]

#: Sub-folder of the output folder with the score cache and the part store.
WORK = ".study"


def reproduce(
    data: Union[str, Path, None] = None,
    out: Union[str, Path] = "outprob-report",
    *,
    datasets: Optional[Sequence[str]] = None,
    detectors: Optional[Sequence[str]] = None,
    extra_detectors: Optional[Mapping[str, Any]] = None,
    scalers: Optional[Mapping[str, Any]] = None,
    quick: bool = False,
    scores: Union[str, Path, None] = None,
    score_column: Optional[str] = None,
    label_column: str = "y",
    jobs: Optional[int] = None,
    progress: bool = True,
    figures: bool = True,
    command: str = "outprob reproduce",
) -> Path:
    """Run the paper's study and write ``out/REPORT.md``, the figures
    (``out/figures/*.png`` and ``.svg``), ``results.csv.gz``,
    ``status.csv`` and ``environment.json``; returns the report's path.

    ``data`` is a folder of ``.npz`` datasets (default: the shipped
    ``paper/data``); ``datasets`` and ``detectors`` select among them and the
    paper's eleven PyOD detectors; ``quick`` runs five small datasets with
    four fast detectors. ``scores`` (a file or folder of precomputed score
    sets, see :func:`~outprob.experiment.load_score_sets`) replaces the data
    unless ``data`` is given too. ``extra_detectors`` and ``scalers`` join the study
    (see :func:`~outprob.experiment.run_study`). Work is kept in
    ``out/.study``: rerunning resumes an interrupted run and recomputes only
    what changed.
    """
    start = time.perf_counter()
    load_before = load_average()
    out = Path(out)
    chosen: List[Union[Dataset, ScoreSet]] = []
    dets: Dict[str, Any] = {}
    if data is not None or scores is None:
        folder = Path(data) if data is not None else paper_data_dir()
        if datasets is None and quick:
            datasets = [n for n in QUICK_DATASETS if (folder / f"{n}.npz").is_file()] or None
        chosen += load_datasets(folder, datasets)
        names = tuple(detectors) if detectors else (QUICK_DETECTORS if quick else None)
        dets = dict(paper_detectors(names))
        dets.update(extra_detectors or {})
    if scores is not None:
        chosen += load_score_sets(scores, score_column=score_column, label_column=label_column)
    result = run_study(chosen, dets, scalers=scalers, out=out / WORK, jobs=jobs, progress=progress)
    study_seconds = time.perf_counter() - start
    result.save(out)
    found = findings(result.results, result.reference) if not result.results.empty else []
    drawn = make_figures(result, out / "figures") if figures else {}
    env = environment()
    run = {
        "command": command,
        "jobs": result.jobs,
        "load_before": load_before,
        "load_after": load_average(),
        "resumed": int(result.status["resumed"].astype(bool).sum()),
        "cached": int(result.status["cached"].astype(bool).sum()),
        "study_seconds": study_seconds,
        "seconds": time.perf_counter() - start,
        "environment": env,
    }
    (out / "environment.json").write_text(json.dumps(run, indent=2) + "\n", encoding="utf-8")
    return write_report(result, out, found=found, figures=drawn, detectors=result_detectors(result),
                        run=run, warned=result.warnings)


def result_detectors(result: Any) -> Dict[str, Detector]:
    """Detector name → Detector of a study's tasks, in first-seen order."""
    out: Dict[str, Detector] = {}
    for task in result.tasks:
        if task.detector is not None:
            out.setdefault(task.detector.name, task.detector)
    return out
