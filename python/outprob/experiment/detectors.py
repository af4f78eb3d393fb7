"""Outlier detectors of the study and the rule that skips infeasible pairs.

The paper's eleven PyOD detectors run with PyOD's default hyperparameters
and ``random_state = 0`` wherever they take one, on features standardised
to zero mean and unit variance (``sklearn.preprocessing.StandardScaler``;
constant features stay 0). The scores are ``decision_scores_`` on the whole
dataset (unsupervised and transductive, as in the paper).

Skip rule (contract §8): a detector whose memory grows with n² — KPCA (the
n × n kernel, its centred copy and the n × n eigenvectors of the dense
eigendecomposition, 3 matrices) and COF (PyOD's ``method="fast"`` keeps the
full n × n distance matrix and an argsort of it, 2 matrices) — is skipped on
a dataset when those float64 matrices would need more than
``MEMORY_BUDGET`` bytes (4 GiB, so that two workers and their copies fit in
24 GiB) or when n > ``MAX_N_QUADRATIC`` (10 000: KPCA's O(n³)
eigendecomposition takes minutes already at n = 7 200). On the shipped data
this skips KPCA and COF on Shuttle (n = 49 097, 19 GB per matrix) and
nothing else.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

import numpy as np

from .._common.optional import require

__all__ = [
    "Detector",
    "PAPER_DETECTORS",
    "QUICK_DETECTORS",
    "MEMORY_BUDGET",
    "MAX_N_QUADRATIC",
    "paper_detectors",
    "as_detector",
    "standardise",
]

MEMORY_BUDGET = 4 * 2**30
"""Bytes a detector's n × n matrices may take (contract §8)."""
MAX_N_QUADRATIC = 10_000
"""Largest n for the detectors with n² memory and super-quadratic time."""

_PYOD = {
    # name: (module:class, takes random_state, number of n × n float64 matrices)
    "PCA": ("pyod.models.pca:PCA", True, 0),
    "KPCA": ("pyod.models.kpca:KPCA", True, 3),
    "GMM": ("pyod.models.gmm:GMM", True, 0),
    "KNN": ("pyod.models.knn:KNN", False, 0),
    "LOF": ("pyod.models.lof:LOF", False, 0),
    "IForest": ("pyod.models.iforest:IForest", True, 0),
    "HBOS": ("pyod.models.hbos:HBOS", False, 0),
    "LODA": ("pyod.models.loda:LODA", True, 0),
    "COF": ("pyod.models.cof:COF", False, 2),
    "Sampling": ("pyod.models.sampling:Sampling", True, 0),
    "ECOD": ("pyod.models.ecod:ECOD", False, 0),
}
#: The paper's detectors, in its order.
PAPER_DETECTORS: Tuple[str, ...] = tuple(_PYOD)
#: Fast detectors of ``--quick`` runs.
QUICK_DETECTORS: Tuple[str, ...] = ("KNN", "IForest", "PCA", "LOF")
RANDOM_STATE = 0


def standardise(X: np.ndarray) -> np.ndarray:
    """Zero mean, unit variance per feature (constant features become 0)."""
    from sklearn.preprocessing import StandardScaler

    # scikit-learn has no type information: its result is Any to mypy.
    standardised: np.ndarray = StandardScaler().fit_transform(X)
    return standardised


def _import(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(require(module, "the study's detectors", "study"), name)


def _package_version(obj: Any) -> str:
    top = (getattr(obj, "__module__", None) or type(obj).__module__ or "").split(".")[0]
    try:
        from importlib.metadata import version

        return f"{top} {version(top)}"
    except Exception:  # noqa: BLE001 - not an installed distribution (user code)
        return top


@dataclass(frozen=True)
class Detector:
    """A named detector: ``make()`` builds a fresh, unfitted model with
    ``fit(X)`` and ``decision_scores_`` (PyOD's convention), or ``call`` maps
    X to scores. ``params`` and ``version`` enter the score cache's key;
    ``quadratic`` counts the n × n float64 matrices it holds (skip rule)."""

    name: str
    make: Optional[Callable[[], Any]] = None
    call: Optional[Callable[[np.ndarray], Any]] = None
    params: Mapping[str, Any] = field(default_factory=dict)
    version: str = ""
    quadratic: int = 0

    def skip_reason(self, n: int, memory_budget: int = MEMORY_BUDGET) -> Optional[str]:
        """Why this detector does not run on n observations, or None."""
        if not self.quadratic:
            return None
        need = self.quadratic * 8 * n * n
        if need > memory_budget:
            return (f"{self.quadratic} n×n float64 matrices need {need / 2**30:.1f} GiB "
                    f"> budget {memory_budget / 2**30:.1f} GiB")
        if n > MAX_N_QUADRATIC:
            return f"n = {n} > {MAX_N_QUADRATIC} for a detector with n² memory and super-quadratic time"
        return None

    def scores(self, X: np.ndarray) -> Tuple[np.ndarray, float]:
        """Outlier scores of the rows of ``X`` (float64, 1-D) and the
        seconds that fitting took (building the model, e.g. importing its
        module, is not counted)."""
        if self.call is not None:
            start = time.perf_counter()
            s = self.call(X)
        else:
            assert self.make is not None
            model = self.make()
            start = time.perf_counter()
            model.fit(X)
            s = model.decision_scores_
        seconds = time.perf_counter() - start
        s = np.asarray(s, dtype=np.float64).reshape(-1)
        if s.size != X.shape[0]:
            raise ValueError(f"detector {self.name} returned {s.size} scores for {X.shape[0]} rows")
        return s, seconds

    def key(self) -> str:
        """Identity of the scores it computes, for the cache."""
        return f"{self.name}|{sorted(self.params.items())!r}|{self.version}"


class _PyOD:
    """Picklable factory of a PyOD detector (lambdas do not cross processes)."""

    def __init__(self, path: str, params: Dict[str, Any]) -> None:
        self.path, self.params = path, params

    def __call__(self) -> Any:
        return _import(self.path)(**self.params)


def paper_detectors(names: Optional[Tuple[str, ...]] = None) -> Dict[str, Detector]:
    """The paper's PyOD detectors (default: all eleven) by name."""
    names = PAPER_DETECTORS if names is None else names
    unknown = [n for n in names if n not in _PYOD]
    if unknown:
        raise ValueError(f"unknown detector(s) {', '.join(unknown)}; the paper's: {', '.join(_PYOD)}")
    version = f"pyod {require('pyod', 'the study', 'study').__version__}"
    out = {}
    for n in names:
        path, seeded, quadratic = _PYOD[n]
        params = {"random_state": RANDOM_STATE} if seeded else {}
        out[n] = Detector(n, make=_PyOD(path, params), params=params, version=version, quadratic=quadratic)
    return out


def as_detector(name: str, obj: Any) -> Detector:
    """A user's detector: a :class:`Detector`, an unfitted PyOD-like model
    (``fit`` + ``decision_scores_``; cloned for every dataset), or a callable
    ``X -> scores``."""
    if isinstance(obj, Detector):
        return obj
    if hasattr(obj, "fit"):
        params = obj.get_params() if hasattr(obj, "get_params") else {"repr": repr(obj)}
        try:
            from sklearn.base import clone

            clone(obj)
            make: Callable[[], Any] = _Clone(obj, clone)
        except Exception:  # noqa: BLE001 - not a scikit-learn estimator
            make = _Clone(obj, copy.deepcopy)
        return Detector(name, make=make, params={k: repr(v) for k, v in params.items()},
                        version=_package_version(obj))
    if callable(obj):
        source = repr(obj)
        for code in (obj, type(obj)):  # a function's source, else its class's
            try:
                source = inspect.getsource(code)
                break
            except (OSError, TypeError):
                continue
        digest = hashlib.sha256(source.encode()).hexdigest()[:16]
        return Detector(name, call=obj, params={"source": digest}, version=_package_version(obj))
    raise TypeError(f"detector {name!r} must have fit()/decision_scores_ or be callable, got {type(obj).__name__}")


class _Clone:
    def __init__(self, template: Any, how: Callable[[Any], Any]) -> None:
        self.template, self.how = template, how

    def __call__(self) -> Any:
        return self.how(self.template)
