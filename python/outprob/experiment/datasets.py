"""Datasets (features and labels) and precomputed score sets.

A dataset is a ``.npz`` file with ``X`` (n × d features) and ``y`` (n labels,
1 = outlier, 0 = inlier), the layout of the shipped benchmark data
(``paper/data`` in a clone of outprob). A precomputed score set is a ``.npz``
with ``scores`` and ``y``, or a CSV/Parquet table with a score column and a
label column.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Sequence, Tuple, Union

import numpy as np

from .._common.tables import columns_of, read_columns

__all__ = [
    "PAPER_DATASETS",
    "MISSING_DATASETS",
    "QUICK_DATASETS",
    "Dataset",
    "ScoreSet",
    "paper_data_dir",
    "load_dataset",
    "load_datasets",
    "load_score_sets",
]

#: The 21 datasets of the paper (Campos et al. 2016 without KDDCup99 and ALOI).
PAPER_DATASETS: Tuple[str, ...] = (
    "Annthyroid", "Arrhythmia", "Cardiotocography", "Glass", "HeartDisease", "Hepatitis",
    "InternetAds", "Ionosphere", "Lymphography", "PageBlocks", "Parkinson", "PenDigits",
    "Pima", "Shuttle", "SpamBase", "Stamps", "Waveform", "WBC", "WDBC", "Wilt", "WPBC",
)
#: The paper's datasets that are not shipped.
MISSING_DATASETS: Tuple[str, ...] = ("Arrhythmia", "HeartDisease", "Parkinson")
#: Small datasets of ``--quick`` runs (Ionosphere is the paper's case study).
QUICK_DATASETS: Tuple[str, ...] = ("Ionosphere", "WBC", "Glass", "Lymphography", "Hepatitis")

PathLike = Union[str, Path]


def _labels(y: np.ndarray, where: str) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"{where}: labels must be 1-D, got shape {y.shape}")
    finite = y[~np.isnan(y)] if y.dtype.kind == "f" else y
    if finite.size != y.size or not np.all((y == 0) | (y == 1)):
        raise ValueError(f"{where}: labels must be 0 (inlier) or 1 (outlier)")
    if not (y == 1).any() or not (y == 0).any():
        raise ValueError(f"{where}: labels need at least one outlier (1) and one inlier (0)")
    # ndarray == int is Any to NumPy's stubs.
    outlier: np.ndarray = (y == 1).astype(np.int8)
    return outlier


def _digest(*arrays: np.ndarray) -> str:
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()


@dataclass(frozen=True, eq=False)
class Dataset:
    """Features ``X`` (n × d, float64) and labels ``y`` (0/1) of one dataset;
    ``digest`` is the SHA-256 of their content (the score cache's key)."""

    name: str
    X: np.ndarray
    y: np.ndarray
    digest: str = field(init=False)

    def __post_init__(self) -> None:
        where = f"dataset {self.name!r}"
        X = np.asarray(self.X, dtype=np.float64)
        if X.ndim != 2 or X.shape[0] < 2:
            raise ValueError(f"{where}: X must be 2-D with at least 2 rows, got shape {X.shape}")
        if not np.isfinite(X).all():
            raise ValueError(f"{where}: X holds {int((~np.isfinite(X)).sum())} non-finite values")
        y = _labels(self.y, where)
        if y.size != X.shape[0]:
            raise ValueError(f"{where}: X has {X.shape[0]} rows but y has {y.size} labels")
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "digest", _digest(X, y))

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        return int(self.X.shape[1])

    @property
    def n_outliers(self) -> int:
        return int(self.y.sum())


@dataclass(frozen=True, eq=False)
class ScoreSet:
    """Outlier scores (higher = more outlying) of one detector on one
    dataset, with the labels."""

    dataset: str
    detector: str
    scores: np.ndarray
    y: np.ndarray

    def __post_init__(self) -> None:
        where = f"score set {self.dataset}/{self.detector}"
        s = np.asarray(self.scores, dtype=np.float64)
        if s.ndim != 1:
            raise ValueError(f"{where}: scores must be 1-D, got shape {s.shape}")
        y = _labels(self.y, where)
        if y.size != s.size:
            raise ValueError(f"{where}: {s.size} scores but {y.size} labels")
        object.__setattr__(self, "scores", s)
        object.__setattr__(self, "y", y)


def _npz(path: Path) -> "np.lib.npyio.NpzFile":
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    try:
        # np.load is typed Any: it may return an array, a pickle or an NpzFile.
        npz: np.lib.npyio.NpzFile = np.load(path, allow_pickle=False)
        return npz
    except Exception as exc:  # noqa: BLE001 - junk raises zipfile, pickle or OS errors
        raise ValueError(f"{path}: not a readable .npz file ({exc})") from None


def _require(path: Path, files: Sequence[str], keys: Sequence[str]) -> None:
    missing = [k for k in keys if k not in files]
    if missing:
        raise ValueError(f"{path}: missing array(s) {', '.join(missing)} (it has {', '.join(files) or 'none'})")


def paper_data_dir() -> Path:
    """The shipped benchmark data, ``paper/data`` of a clone of outprob
    (found beside the package source or under the working directory)."""
    here = Path(__file__).resolve()
    for root in (*here.parents, Path.cwd()):
        candidate = root / "paper" / "data"
        if (candidate / "SHA256SUMS").is_file():
            return candidate
    raise FileNotFoundError(
        "the paper's data (paper/data of a clone of outprob) was not found: pass --data DIR "
        "(a folder of .npz files with X and y)"
    )


def load_dataset(path: PathLike) -> Dataset:
    """One ``.npz`` with ``X`` and ``y``; the name is the file stem."""
    path = Path(path)
    with _npz(path) as f:
        _require(path, f.files, ("X", "y"))
        X, y = f["X"], f["y"]
    return Dataset(path.stem, X, y)


def load_datasets(folder: PathLike, names: Optional[Sequence[str]] = None) -> List[Dataset]:
    """Every ``*.npz`` dataset of a folder (sorted by name), or the ``names``
    among them (an unknown name raises ``ValueError`` listing the others)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder")
    files = {p.stem: p for p in sorted(folder.glob("*.npz"))}
    if not files:
        raise ValueError(f"{folder}: no .npz datasets (files with arrays X and y)")
    if names is None:
        chosen = sorted(files, key=str.lower)
    else:
        unknown = [n for n in names if n not in files]
        if unknown:
            raise ValueError(f"{folder} has no dataset {', '.join(unknown)}; it has {', '.join(sorted(files))}")
        chosen = list(names)
    return [load_dataset(files[n]) for n in chosen]


def load_score_sets(
    path: PathLike,
    *,
    score_column: Optional[str] = None,
    label_column: str = "y",
    detector: Optional[str] = None,
) -> List[ScoreSet]:
    """Precomputed score sets: a ``.npz`` with ``scores`` and ``y``, a CSV
    or Parquet table (``score_column``, ``label_column``), or a folder of
    such files. The dataset name is the file stem; the detector name is
    ``detector``, else the ``.npz``'s ``detector`` entry, else the score
    column's name, else ``"scores"``."""
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix.lower() in (".npz", ".csv", ".parquet", ".pq"))
        if not files:
            raise ValueError(f"{path}: no score sets (.npz, .csv or .parquet files)")
        return [
            s for f in files
            for s in load_score_sets(f, score_column=score_column, label_column=label_column, detector=detector)
        ]
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file or folder")
    if path.suffix.lower() == ".npz":
        with _npz(path) as f:
            _require(path, f.files, ("scores", "y"))
            name = detector or (str(f["detector"]) if "detector" in f.files else "scores")
            return [ScoreSet(path.stem, name, f["scores"], f["y"])]
    if score_column is None:
        others = [c for c in columns_of(path) if c != label_column]
        if len(others) != 1:
            raise ValueError(f"{path}: name the score column (columns: {', '.join(others)})")
        score_column = others[0]
    scores, y = read_columns(path, [score_column, label_column])
    return [ScoreSet(path.stem, detector or score_column or "scores", scores, y)]
