"""Run the study: scores → probabilities → measures, over many score sets.

One task per score set (dataset × detector, or a precomputed score set).
Tasks run in worker processes (``jobs``, default every core), largest
first; each finished task writes its results to the part store, so an
interrupted run loses only the tasks in flight and a rerun resumes. Failing
detectors and non-finite scores are recorded in the status table, never
raised.
"""

from __future__ import annotations

import math
import os
import pickle
import time
import traceback
import warnings
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

import outprob
from outprob import metrics

from .._common.optional import installed, require
from .cache import PartStore, ScoreCache, digest
from .datasets import Dataset, ScoreSet
from .detectors import MEMORY_BUDGET, Detector, as_detector, standardise
from .evaluation import REFERENCE, Transformation, score_set_rows, transformations
from .selection import ALPHAS as SELECTION_ALPHAS
from .selection import SELECTION_COLUMNS

__all__ = ["Task", "StudyResult", "StudyInterrupted", "run_study", "RESULT_COLUMNS", "STATUS_COLUMNS"]

#: Columns of ``StudyResult.results``: one row per measured value.
RESULT_COLUMNS = ("dataset", "detector", "transformation", "measure", "class", "value")
#: Columns of ``StudyResult.status``: one row per score set.
STATUS_COLUMNS = ("dataset", "detector", "n", "n_outliers", "status", "message", "seconds", "roc_auc",
                  "score_range", "cached", "resumed")


class StudyInterrupted(KeyboardInterrupt):
    """The run was interrupted; ``finished`` of ``total`` score sets are
    kept in the part store and a rerun resumes from there."""

    def __init__(self, finished: int, total: int, where: Path) -> None:
        super().__init__(f"interrupted: {finished} of {total} score sets finished and kept in {where}; "
                         "rerun the same command to resume")
        self.finished, self.total, self.where = finished, total, where


@dataclass
class Task:
    """One score set to measure: a dataset and a detector, or precomputed
    scores."""

    dataset: Union[Dataset, ScoreSet]
    detector: Optional[Detector] = None

    @property
    def names(self) -> Tuple[str, str]:
        if isinstance(self.dataset, ScoreSet):
            return self.dataset.dataset, self.dataset.detector
        assert self.detector is not None
        return self.dataset.name, self.detector.name

    @property
    def n(self) -> int:
        return int(self.dataset.y.size)

    def score_key(self) -> str:
        if isinstance(self.dataset, ScoreSet):
            return digest("scores", self.dataset.scores.tobytes(), self.dataset.y.tobytes())
        assert self.detector is not None
        return digest("detector", self.dataset.digest, self.detector.key())

    def cost(self) -> float:
        if self.detector is None:
            return float(self.n)
        return float(self.n) * (self.n if self.detector.quadratic else 50.0)


@dataclass
class StudyResult:
    """``results``: one row per dataset × detector × transformation ×
    measure × class (:data:`RESULT_COLUMNS`); ``status``: one row per score
    set (:data:`STATUS_COLUMNS`); both pandas DataFrames."""

    results: Any
    status: Any
    transformations: List[str]
    datasets: List[Dataset] = field(default_factory=list)
    seconds: float = 0.0
    jobs: int = 1
    reference: str = REFERENCE
    tasks: List[Task] = field(default_factory=list)
    cache: Optional[Path] = None
    warnings: Dict[str, int] = field(default_factory=dict)
    """Per "transformation: warning category", the score sets where it warned."""
    selection: Any = None
    """One row per score set × transformation × selection rule
    (columns ``outprob.experiment.selection.SELECTION_COLUMNS``)."""

    def scores(self, dataset: str, detector: str) -> Optional[Tuple[np.ndarray, np.ndarray]]:
        """(scores, labels) of a measured score set, from the score cache
        (or as given for precomputed ones); None if not available."""
        for task in self.tasks:
            if task.names == (dataset, detector):
                if isinstance(task.dataset, ScoreSet):
                    return task.dataset.scores, task.dataset.y
                hit = ScoreCache(self.cache).get(task.score_key()) if self.cache else None
                return None if hit is None else (hit[0], task.dataset.y)
        return None

    def save(self, out: Path) -> Dict[str, Path]:
        """Write ``results.csv.gz`` (exact floats) and ``status.csv``."""
        out.mkdir(parents=True, exist_ok=True)
        paths = {"results": out / "results.csv.gz", "status": out / "status.csv"}
        self.results.to_csv(paths["results"], index=False, float_format="%.17g",
                            compression={"method": "gzip", "mtime": 0})
        self.status.to_csv(paths["status"], index=False)
        if self.selection is not None:
            paths["selection"] = out / "selection.csv.gz"
            self.selection.to_csv(paths["selection"], index=False, float_format="%.17g",
                                  compression={"method": "gzip", "mtime": 0})
        return paths


def _pandas() -> Any:
    return require("pandas", "the study", "study")


def _scores(task: Task, cache: ScoreCache) -> Tuple[np.ndarray, float, bool]:
    """(scores, detector seconds, from cache?)"""
    if isinstance(task.dataset, ScoreSet):
        return task.dataset.scores, 0.0, False
    key = task.score_key()
    hit = cache.get(key)
    if hit is not None:
        return hit[0], hit[1], True
    assert task.detector is not None
    scores, seconds = task.detector.scores(standardise(task.dataset.X))
    cache.put(key, scores, seconds)
    return scores, seconds, False


#: A task still to measure: (its index, the task, its cache key).
_Pending = Tuple[int, Task, str]
#: What :func:`_measure` takes after the task and its key.
_WorkerArgs = Tuple[Mapping[str, Transformation], Dict[str, Any], str, str]


def _measure(task: Task, key: str, transforms: Mapping[str, Transformation], settings: Dict[str, Any],
             cache_root: str, parts_root: str) -> Dict[str, Any]:
    """Worker: one score set, end to end. Exceptions become a status."""
    part = _part(task)
    try:
        scores, seconds, cached = _scores(task, ScoreCache(Path(cache_root)))
    except Exception as exc:  # noqa: BLE001 - a failing detector is recorded, not raised
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return {**part, "status": "failed", "message": last}
    part.update(seconds=seconds, cached=cached)
    bad = int((~np.isfinite(scores)).sum())
    if bad:
        return {**part, "status": "non-finite", "message": f"{bad} of {scores.size} scores are NaN or ±inf"}
    from sklearn.metrics import roc_auc_score

    part.update(roc_auc=float(roc_auc_score(task.dataset.y, scores)), score_range=float(np.ptp(scores)))
    try:
        selection: List[Any] = []
        rows, warned = score_set_rows(scores, task.dataset.y, transforms, selection=selection, **settings)
    except Exception as exc:  # noqa: BLE001 - e.g. a user's scaler failing
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return {**part, "status": "failed", "message": f"measuring: {last}"}
    part.update(status="ok", rows=[list(r) for r in rows], warnings=warned,
                selection=[list(r) for r in selection])
    PartStore(Path(parts_root)).put(key, part)
    return part


def _picklable(*objects: Any) -> bool:
    try:
        pickle.dumps(objects)
    except Exception:  # noqa: BLE001 - pickle raises several types
        return False
    return True


def _part(task: Task, status: str = "", message: str = "") -> Dict[str, Any]:
    """A status record without results."""
    dataset, detector = task.names
    return {"dataset": dataset, "detector": detector, "n": task.n, "n_outliers": int(task.dataset.y.sum()),
            "status": status, "message": message, "seconds": math.nan, "roc_auc": math.nan, "score_range": math.nan,
            "cached": False,
            "rows": [],
            "warnings": {}}


def _limit_threads(threads: int) -> None:
    # Best effort: without threadpoolctl the detectors' BLAS picks its own.
    if installed("threadpoolctl"):
        require("threadpoolctl", "limiting threads").threadpool_limits(threads)


def _progress(total: int, initial: int, enabled: bool) -> Any:
    if not enabled:
        return None
    tqdm = require("tqdm.auto", "the study's progress bar (or run without progress)").tqdm
    return tqdm(total=total, initial=initial, unit="score set", dynamic_ncols=True, smoothing=0.1)


def run_study(
    datasets: Sequence[Union[Dataset, ScoreSet]],
    detectors: Optional[Mapping[str, Any]] = None,
    *,
    scalers: Optional[Mapping[str, Any]] = None,
    out: Union[str, Path] = "study",
    cache: Union[str, Path, None] = None,
    jobs: Optional[int] = None,
    progress: bool = True,
    memory_budget: int = MEMORY_BUDGET,
    reference: str = REFERENCE,
    bins: str = "equiareal",
    n_bins: Sequence[int] = metrics.DEFAULT_N_BINS,
) -> StudyResult:
    """Measure every transformation on every score set.

    Parameters
    ----------
    datasets : sequence of Dataset or ScoreSet
        Datasets are scored by every detector; score sets are measured as
        they are.
    detectors : mapping name → detector, optional
        :class:`Detector`, PyOD-like unfitted models or callables ``X →
        scores`` (see :func:`~outprob.experiment.as_detector`). Needed when
        ``datasets`` holds datasets.
    scalers : mapping name → scaler, optional
        Transformations besides every entry of ``outprob.VARIANTS``: any
        object with ``fit_transform(scores)``.
    out : path
        Working folder: the part store (``out/parts``) and the default
        score cache (``out/cache``); rerunning with the same ``out``
        resumes.
    cache : path, optional
        Folder of the detector-score cache (default ``out/cache``).
    jobs : int, optional
        Worker processes (default: every core); 1 runs in this process.
    progress : bool
        Show a progress bar with an ETA (tqdm) on standard error.

    Returns
    -------
    StudyResult
    """
    pd = _pandas()
    out = Path(out)
    cache_root = Path(cache) if cache is not None else out / "cache"
    parts = PartStore(out / "parts")
    transforms = transformations(scalers)
    if reference not in transforms:
        raise ValueError(f"reference {reference!r} is not among the transformations {list(transforms)}")
    settings = {"reference": reference, "bins": bins, "n_bins": [int(k) for k in n_bins],
                "selection_alphas": list(SELECTION_ALPHAS)}
    dets = {name: as_detector(name, d) for name, d in (detectors or {}).items()}
    tasks: List[Task] = []
    for ds in datasets:
        if isinstance(ds, ScoreSet):
            tasks.append(Task(ds))
        elif not dets:
            raise ValueError(f"dataset {ds.name!r} needs detectors to score it")
        else:
            tasks.extend(Task(ds, d) for d in dets.values())
    identity = digest([t.identity for t in transforms.values()], settings, outprob.__version__)
    jobs = max(1, os.cpu_count() or 1) if jobs is None else int(jobs)
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")

    done: Dict[int, Dict[str, Any]] = {}
    pending: List[_Pending] = []
    for i, task in enumerate(tasks):
        reason = task.detector.skip_reason(task.n, memory_budget) if task.detector else None
        if reason:
            done[i] = _part(task, "skipped", reason)
            continue
        key = digest(task.score_key(), identity)
        stored = parts.get(key)
        if stored is not None:
            done[i] = {**stored, "resumed": True}
        else:
            pending.append((i, task, key))
    pending.sort(key=lambda p: -p[1].cost())

    start = time.perf_counter()
    bar = _progress(len(tasks), len(done), progress and bool(pending))
    args: _WorkerArgs = (transforms, settings, str(cache_root), str(out / "parts"))

    def finish(i: int, part: Dict[str, Any]) -> None:
        done[i] = part
        if bar is not None:
            bar.set_postfix_str(f"{part['dataset']}/{part['detector']}", refresh=False)
            bar.update(1)

    if jobs > 1 and len(pending) > 1 and not _picklable(dets, transforms):
        warnings.warn("a detector or scaler cannot be sent to worker processes (e.g. a lambda): "
                      "running in this process (jobs=1)", RuntimeWarning, stacklevel=2)
        jobs = 1
    try:
        if jobs == 1 or len(pending) <= 1:
            for i, task, key in pending:
                finish(i, _measure(task, key, *args))
        else:
            _run_pool(pending, args, jobs, finish)
    except KeyboardInterrupt:
        finished = sum(1 for p in done.values() if p.get("status") == "ok")
        raise StudyInterrupted(finished, len(tasks), out / "parts") from None
    finally:
        if bar is not None:
            bar.close()

    rows: List[List[Any]] = []
    chosen: List[List[Any]] = []
    status: List[Dict[str, Any]] = []
    warned: Counter[str] = Counter()
    for i in range(len(tasks)):
        part = done[i]
        warned.update(part.get("warnings", {}).keys())
        status.append({c: part.get(c, False if c == "resumed" else None) for c in STATUS_COLUMNS})
        rows.extend([part["dataset"], part["detector"], *r] for r in part["rows"])
        chosen.extend([part["dataset"], part["detector"], *r] for r in part.get("selection", []))
    return StudyResult(
        results=pd.DataFrame(rows, columns=list(RESULT_COLUMNS)),
        status=pd.DataFrame(status, columns=list(STATUS_COLUMNS)),
        transformations=list(transforms),
        datasets=[d for d in datasets if isinstance(d, Dataset)],
        seconds=time.perf_counter() - start,
        jobs=jobs,
        reference=reference,
        tasks=tasks,
        cache=cache_root,
        warnings=dict(warned),
        selection=pd.DataFrame(chosen, columns=list(SELECTION_COLUMNS)),
    )


def _run_pool(pending: List[_Pending], args: _WorkerArgs, jobs: int, finish: Any) -> None:
    import multiprocessing

    threads = max(1, (os.cpu_count() or 1) // jobs)
    # spawn: the parent's thread pools (BLAS, the core's) do not survive fork.
    ctx = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(pending)), mp_context=ctx,
                               initializer=_limit_threads, initargs=(threads,))
    futures: Dict[Future[Dict[str, Any]], int] = {}
    try:
        for i, task, key in pending:
            futures[pool.submit(_measure, task, key, *args)] = i
        remaining = set(futures)
        while remaining:
            finished, remaining = wait(remaining, return_when=FIRST_COMPLETED)
            for f in finished:
                try:
                    part = f.result()
                except Exception as exc:  # noqa: BLE001 - e.g. a worker killed for memory
                    i = futures[f]
                    task = next(t for j, t, _ in pending if j == i)
                    part = _part(task, "failed", f"worker process: {type(exc).__name__}: {exc}")
                finish(futures[f], part)
    except BaseException:
        # Ctrl-C: stop now. Finished score sets are already stored; the ones
        # in flight are lost, so workers are ended rather than waited for.
        workers = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in workers:
            process.terminate()
        raise
    pool.shutdown(wait=True)
