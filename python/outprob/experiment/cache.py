"""On-disk store of finished work: detector scores and per-score-set results.

Both are keyed by SHA-256 hashes of what determines them, so a rerun
recomputes only what changed: scores by (dataset content, detector, its
parameters, the detector library's version); results by (scores, the
transformations, the measures' settings, outprob's version). Files are
written to a temporary name and renamed, so an interrupted run never leaves
a half-written entry behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

import numpy as np

__all__ = ["digest", "ScoreCache", "PartStore"]


def digest(*parts: Any) -> str:
    """SHA-256 hex digest of the ``repr`` of the parts."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def _atomic_write(path: Path, write: Any, suffix: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=suffix)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class ScoreCache:
    """Detector scores by key, one ``.npz`` each (with the seconds the
    detector took)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.npz"

    def get(self, key: str) -> Optional[Tuple[np.ndarray, float]]:
        path = self._path(key)
        if not path.is_file():
            return None
        try:
            with np.load(path, allow_pickle=False) as f:
                return np.array(f["scores"]), float(f["seconds"])
        except Exception:  # noqa: BLE001 - a damaged entry is recomputed
            return None

    def put(self, key: str, scores: np.ndarray, seconds: float) -> None:
        _atomic_write(
            self._path(key),
            lambda fh: np.savez(fh, scores=np.asarray(scores, dtype=np.float64), seconds=seconds),
            ".npz",
        )


class PartStore:
    """Results of finished score sets, one JSON file each, named by key."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / f"{key}.json"

    def get(self, key: str) -> Optional[Dict[str, Any]]:
        path = self._path(key)
        if not path.is_file():
            return None
        try:
            return dict(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            return None

    def put(self, key: str, part: Dict[str, Any]) -> None:
        data = json.dumps(part, allow_nan=True).encode("utf-8")
        _atomic_write(self._path(key), lambda fh: fh.write(data), ".json")
