"""Outlier probabilities for PyOD detectors (contract §7).

A fitted PyOD detector holds the scores of its training data in
``decision_scores_`` and scores new data with ``decision_function(X)``.
The scaling is fitted on the training scores; the probabilities of the
training data come from ``decision_scores_`` (call with ``X=None``), those
of new data from ``decision_function(X)``.

.. warning:: Do not pass the training data as ``X``. PyOD's own
   ``detector.predict_proba(X_train)`` re-scores the training points with
   ``decision_function``, and for neighbourhood detectors (kNN, LOF, ...)
   each training point is then its own nearest neighbour, at distance 0:
   the scores shrink and the kNN probabilities move by up to 0.3. The
   training points' scores are ``decision_scores_``; ask for them with
   ``X=None``.

``method`` is a variant name of :data:`outprob.VARIANTS` (default
``"mean_nmad"``, the paper's best overall), PyOD's own names ``"unify"``
(= ``"mean_std"``, Kriegel et al.'s unified scores) and ``"linear"``
(min-max), or an unfitted scaler. With ``"unify"`` and ``"linear"`` the
probabilities of new data equal PyOD's ``predict_proba`` (except that
constant training scores map to 0 and 1 here, contract §5, where PyOD's
min-max scaling divides by 1).

Needs the optional extra: ``pip install "outprob[pyod]"``. Any object with
``decision_scores_`` and ``decision_function`` works as a detector.

Examples
--------
>>> import numpy as np
>>> from pyod.models.knn import KNN
>>> from outprob.pyod import ScaledDetector
>>> rng = np.random.default_rng(0)
>>> X_train = np.r_[rng.normal(size=(200, 2)), [[6.0, 6.0]]]
>>> knn = KNN(n_neighbors=5).fit(X_train)
>>> scaled = ScaledDetector(knn, "mean_nmad")
>>> scaled.predict_proba().shape          # the training data, from decision_scores_
(201, 2)
>>> scaled.predict_proba([[0.0, 0.0], [5.0, 5.0]]).round(3)
array([[1., 0.],
       [0., 1.]])
"""

from __future__ import annotations

import numbers
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from ._common.exceptions import NotFittedError
from ._common.optional import require
from ._common.validation import as_float_array
from ._registry import VARIANTS
from ._scalers.gaussian import GaussianScaler
from ._scalers.linear import LinearScaler

require("pyod", "outprob.pyod")  # the extra this module is for

__all__ = [
    "ScaledDetector", "predict_proba", "outlier_proba", "predict_confidence", "PYOD_METHODS",
    "ConformalDetector", "conformal", "covariate_shift_weights",
]

#: PyOD's names of its conversions, as outprob variants.
PYOD_METHODS = {"unify": "mean_std", "linear": "linear"}
COMBINE = (None, "mean", "max")

Scaler = Union[GaussianScaler, LinearScaler]
Probabilities = npt.NDArray[np.float64]


class ScaledDetector:
    """A fitted PyOD detector (or several) with a fitted scaling: outlier
    probabilities for its training data and for new data.

    Parameters
    ----------
    detector : detector or list of detectors
        Fitted PyOD detectors, or objects with ``decision_scores_`` (the
        training scores, higher = more outlying) and ``decision_function``.
    method : str or scaler, default "mean_nmad"
        A name of :data:`outprob.VARIANTS`, ``"unify"`` or ``"linear"``
        (PyOD's names), or an unfitted :class:`~outprob.GaussianScaler` /
        :class:`~outprob.LinearScaler` (cloned for each detector).
    combine : {None, "mean", "max"}, default None
        For a list of detectors: one probability per sample, the mean or
        the maximum of the detectors' probabilities (an ensemble). None
        keeps one column per detector.

    Notes
    -----
    The scalers are fitted on first use and refitted whenever a detector's
    ``decision_scores_`` is replaced (the detector was refitted) or changed
    in place.
    ``fit(X)`` fits the detectors on ``X`` first.
    """

    def __init__(
        self,
        detector: Union[Any, Sequence[Any]],
        method: Union[str, Scaler] = "mean_nmad",
        *,
        combine: Optional[str] = None,
    ) -> None:
        self.detector = detector
        self.method = method
        self.combine = combine

    @property
    def detectors(self) -> List[Any]:
        """The wrapped detectors, as a list."""
        d = self.detector
        return list(d) if isinstance(d, (list, tuple)) else [d]

    def fit(self, X: Optional[npt.ArrayLike] = None, y: Any = None) -> ScaledDetector:
        """Fits each detector on ``X`` (if given), then the scalings on the
        detectors' ``decision_scores_``; returns ``self``."""
        if X is not None:
            for d in self.detectors:
                d.fit(X)
        self._fitted = self._fit()
        return self

    @property
    def scalers_(self) -> List[Scaler]:
        """The fitted scaler of each detector."""
        return self._current()[1]

    def outlier_proba(self, X: Optional[npt.ArrayLike] = None) -> Probabilities:
        """Outlier probabilities: shape (n,) for one detector or a combined
        list, (n, k) (one column per detector) for a list without
        ``combine``.

        ``X=None`` gives those of the training data (from
        ``decision_scores_``); see the module's warning about passing the
        training data as ``X``.
        """
        detectors, scalers = self._current()
        columns = []
        for d, s in zip(detectors, scalers):
            if X is None:
                scores = as_float_array(d.decision_scores_, "decision_scores_")
            else:
                scores = as_float_array(d.decision_function(X), "decision_function(X)")
            columns.append(s.transform(scores.reshape(-1)))
        if not isinstance(self.detector, (list, tuple)):
            return np.asarray(columns[0], dtype=np.float64)
        if len({c.shape for c in columns}) != 1:
            raise ValueError(
                "the detectors scored different numbers of training points: "
                f"{[c.size for c in columns]}; fit them on the same data"
            )
        P: Probabilities = np.column_stack(columns).astype(np.float64, copy=False)
        if self.combine is None:
            return P
        combined: Probabilities = P.mean(axis=1) if self.combine == "mean" else P.max(axis=1)
        return combined

    def predict_proba(self, X: Optional[npt.ArrayLike] = None) -> Probabilities:
        """``[P(inlier), P(outlier)]`` per sample, shape (n, 2), as PyOD's
        ``predict_proba``; ``X=None`` for the training data.

        A list of detectors needs ``combine`` ("mean" or "max") here; for
        one column per detector use :meth:`outlier_proba`.
        """
        if isinstance(self.detector, (list, tuple)) and self.combine is None:
            raise ValueError(
                "predict_proba of a list of detectors needs combine='mean' or 'max'; "
                "outlier_proba gives one column per detector"
            )
        p = self.outlier_proba(X)
        return np.column_stack([1 - p, p])

    # -- fitting -------------------------------------------------------------
    def _current(self) -> Tuple[List[Any], List[Scaler]]:
        """The fitted scalers, refitted if a detector was refitted since."""
        fitted = self.__dict__.get("_fitted")
        detectors = self.detectors
        if (
            fitted is None
            or len(fitted[0]) != len(detectors)
            or any(_changed(d, s) for d, s in zip(detectors, fitted[0]))
        ):
            fitted = self._fit()
            self._fitted = fitted  # one assignment: readers see old or new
        return detectors, fitted[1]

    def _fit(self) -> Tuple[List[Any], List[Scaler]]:
        if self.combine not in COMBINE:
            raise ValueError(f"combine must be None, 'mean' or 'max', got {self.combine!r}")
        detectors = self.detectors
        if not detectors:
            raise ValueError("no detector given")
        sources, scalers = [], []
        for d in detectors:
            _check_detector(d)
            source = d.decision_scores_
            scores = as_float_array(source, "decision_scores_").reshape(-1)
            s = _new_scaler(self.method)
            s.fit(scores)
            # The array and a copy of its scores: a refit replaces the one,
            # an edit in place changes the other.
            sources.append((source, scores.copy()))
            scalers.append(s)
        return sources, scalers


def predict_proba(
    detector: Any, X: Optional[npt.ArrayLike] = None, method: Union[str, Scaler] = "mean_nmad",
    *, combine: Optional[str] = None,
) -> Probabilities:  # fmt: skip
    """Drop-in for PyOD's ``detector.predict_proba(X, method=...)`` with
    outprob's scalings: ``[P(inlier), P(outlier)]``, shape (n, 2).

    ``X=None`` gives the training data's probabilities (from
    ``decision_scores_``). ``method="unify"`` and ``"linear"`` reproduce
    PyOD's own conversions.

    Examples
    --------
    >>> import numpy as np
    >>> from pyod.models.knn import KNN
    >>> from outprob.pyod import predict_proba
    >>> X = np.r_[np.random.default_rng(1).normal(size=(100, 2)), [[5.0, 5.0]]]
    >>> knn = KNN().fit(X)
    >>> new = np.array([[0.0, 0.0], [4.0, 4.0]])
    >>> bool(np.allclose(predict_proba(knn, new, "unify"), knn.predict_proba(new, method="unify")))
    True
    >>> predict_proba(knn, new, "mean_nmad")[:, 1].round(2)
    array([0., 1.])
    """
    return ScaledDetector(detector, method, combine=combine).predict_proba(X)


def outlier_proba(
    detector: Any, X: Optional[npt.ArrayLike] = None, method: Union[str, Scaler] = "mean_nmad",
    *, combine: Optional[str] = None,
) -> Probabilities:  # fmt: skip
    """The outlier probabilities alone: (n,) for one detector, (n, k) for a
    list of k (one column each), (n,) for a list with ``combine``.

    Examples
    --------
    >>> import numpy as np
    >>> from pyod.models.hbos import HBOS
    >>> from pyod.models.knn import KNN
    >>> from outprob.pyod import outlier_proba
    >>> X = np.r_[np.random.default_rng(2).normal(size=(200, 2)), [[6.0, 6.0]]]
    >>> detectors = [KNN().fit(X), HBOS().fit(X)]
    >>> outlier_proba(detectors, method="median_nmad").shape     # training data
    (201, 2)
    >>> outlier_proba(detectors, np.array([[6.0, 6.0]]), combine="max").round(2)
    array([1.])
    """
    return ScaledDetector(detector, method, combine=combine).outlier_proba(X)


def predict_confidence(detector: Any, X: npt.ArrayLike) -> Probabilities:
    r"""ExCeeD example-wise confidence (Perini et al., ECML PKDD 2020): equal
    to PyOD's ``detector.predict_confidence(X)``, in O((n + m) log n)
    instead of O(n·m).

    With the n training scores :math:`t_i` (``decision_scores_``), a test
    score s (``decision_function(X)``) and the contamination γ:

    .. math::

        c(s) = \#\{i : t_i \le s\}, \qquad
        \hat p(s) = \frac{1 + c(s)}{2 + n}, \qquad
        \text{conf}(s) = 1 - F_{\mathrm{Bin}(n, \hat p(s))}(n - \lfloor n\gamma \rfloor)

    — the probability that s would still be ranked among the outliers under
    a perturbed training set — and :math:`1 - \text{conf}(s)` for the samples
    predicted as inliers. c(s) comes from one sort of the training scores
    and a binary search per test score (PyOD compares every test score with
    every training score); the binomial CDF is SciPy's, vectorised. NaN test
    scores count no training score (c = 0), as in PyOD.

    γ is ``detector.contamination`` when it is a number, else (a PyThresh
    thresholder) the fraction of ``labels_`` that are 1; the predictions are
    ``decision_function(X) > threshold_``, or the thresholder's ``predict``.

    Parameters
    ----------
    detector : a fitted PyOD detector
        Needs ``decision_scores_``, ``decision_function``, ``threshold_``,
        ``labels_`` and ``contamination``.
    X : array_like of shape (m, n_features)
        The samples to score (not the training data: see the module notes).

    Returns
    -------
    numpy.ndarray of shape (m,)
        Confidences in [0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> from pyod.models.knn import KNN
    >>> from outprob.pyod import predict_confidence
    >>> X = np.r_[np.random.default_rng(1).normal(size=(100, 2)), [[5.0, 5.0]]]
    >>> knn = KNN().fit(X)
    >>> new = np.array([[0.0, 0.0], [1.5, 1.5], [4.0, 4.0]])
    >>> bool(np.allclose(predict_confidence(knn, new), knn.predict_confidence(new), rtol=0, atol=1e-12))
    True
    """
    from scipy.stats import binom

    _check_detector(detector)
    for name in ("threshold_", "labels_"):
        if getattr(detector, name, None) is None:
            raise NotFittedError(f"this {type(detector).__name__} has no {name}: fit it first")
    train = np.asarray(detector.decision_scores_, dtype=np.float64).ravel()
    n = len(train)
    test = np.asarray(detector.decision_function(X), dtype=np.float64).ravel()
    counts = np.searchsorted(np.sort(train), test, side="right")
    counts[np.isnan(test)] = 0  # PyOD: no training score is <= NaN
    posterior = (1.0 + counts) / (2.0 + n)
    contamination = detector.contamination
    if isinstance(contamination, numbers.Real) and not isinstance(contamination, (bool, np.bool_)):
        # Any real number, NumPy's too (np.float32(0.1)).
        gamma = float(contamination)
        prediction = (test > detector.threshold_).astype("int")
    else:  # a PyThresh thresholder
        gamma = np.sum(detector.labels_) / n
        prediction = np.asarray(contamination.predict(test)).ravel()
    confidence = np.asarray(1.0 - binom.cdf(n - int(n * gamma), n, posterior), dtype=np.float64)
    inliers = prediction == 0
    confidence[inliers] = 1.0 - confidence[inliers]
    return confidence


class ConformalDetector:
    """Detector copies fitted on training data and a
    :class:`~outprob.ConformalScaler` fitted on their held-out scores:
    conformal p-values for new data (made by :func:`conformal`).

    Attributes
    ----------
    detectors_ : list
        The fitted detector copies (one for a split, k for cross-conformal).
    scaler_ : ConformalScaler
        Fitted on the calibration scores (held-out ``decision_function``).
    calibration_indices_ : ndarray of int
        Rows of ``X_train`` whose scores calibrate, in the order scored.
    aggregation : str
        How the k models' scores of new data are combined.
    calibration_features_, calibration_scores_ : ndarray
        The calibration rows of ``X_train`` and their scores (what
        ``pvalues(X, shift=True)`` reweights).
    """

    def __init__(
        self,
        detectors: List[Any],
        scaler: Any,
        calibration: np.ndarray,
        aggregation: str,
        features: Optional[np.ndarray] = None,
        scores: Optional[np.ndarray] = None,
    ) -> None:
        self.detectors_ = detectors
        self.scaler_ = scaler
        self.calibration_indices_ = calibration
        self.aggregation = aggregation
        self.calibration_features_ = features
        self.calibration_scores_ = scores

    def decision_function(self, X: npt.ArrayLike) -> Probabilities:
        """The scores of ``X``: the one model's, or the ``aggregation`` of
        the k models' (cross-conformal)."""
        scores = np.vstack([
            as_float_array(d.decision_function(X), "decision_function(X)").reshape(-1)
            for d in self.detectors_
        ])
        combined: Probabilities = np.asarray(AGGREGATIONS[self.aggregation](scores, axis=0), dtype=np.float64)
        return combined

    def pvalues(self, X: npt.ArrayLike, *, shift: bool = False, random_state: Optional[int] = None) -> Probabilities:
        """Conformal p-values of the rows of ``X`` (contract §11). With
        ``shift=True``, weighted conformal p-values for a covariate shift
        between the calibration rows and ``X`` (contract §13), the weights
        estimated by :func:`covariate_shift_weights` (``random_state``
        seeds its shuffle)."""
        scores = self.decision_function(X)
        if not shift:
            p: Probabilities = self.scaler_.pvalues(scores)
            return p
        if self.calibration_features_ is None or self.calibration_scores_ is None:
            raise ValueError("shift=True needs the calibration rows: make the detector with conformal()")
        w_cal, w_test = covariate_shift_weights(self.calibration_features_, X, random_state=random_state)
        from ._conformal.scaler import ConformalScaler

        params = {k: getattr(self.scaler_, k) for k in ("tie_break", "seed", "nan_policy", "higher_is_outlier")}
        weighted = ConformalScaler(**params).fit(self.calibration_scores_, weights=w_cal)
        q: Probabilities = weighted.pvalues(scores, weights=w_test)
        return q

    def outlier_proba(self, X: npt.ArrayLike) -> Probabilities:
        """``1 − pvalues(X)``."""
        return 1.0 - self.pvalues(X)

    def select(self, X: npt.ArrayLike, alpha: float = 0.1, method: str = "bh") -> Any:
        """The rows of ``X`` declared outliers with the FDR controlled at
        ``alpha`` (:func:`outprob.select` of their p-values)."""
        from ._conformal.selection import select

        return select(self.pvalues(X), alpha, method)


def covariate_shift_weights(
    calibration_features: npt.ArrayLike,
    test_features: npt.ArrayLike,
    *,
    C: float = 1.0,
    clip_quantile: Optional[float] = 0.05,
    random_state: Optional[int] = None,
) -> Tuple[Probabilities, Probabilities]:
    r"""Likelihood-ratio weights :math:`w(x) \approx dP_{test}/dP_{cal}(x)`
    of calibration and test rows, estimated by a classifier that tells them
    apart (contract §13; nonconform's ``logistic_weight_estimator``).

    A logistic regression (standardised features, ``C``, balanced class
    weights, ``max_iter=1000``) is fitted on the calibration rows (label
    0) and the test rows (label 1), shuffled by ``default_rng(random_state)``;
    :math:`w(x) = \hat P(1 \mid x)/(\hat P(0 \mid x) + 10^{-9})`, then
    clipped to the ``clip_quantile`` and ``1 − clip_quantile`` percentiles
    of all the weights (None: no clipping). The weighted p-values are valid
    only as far as the estimated ratio is the true one.

    Returns
    -------
    (calibration weights, test weights)

    Examples
    --------
    >>> import numpy as np
    >>> from outprob.pyod import covariate_shift_weights
    >>> rng = np.random.default_rng(0)
    >>> w_cal, w_test = covariate_shift_weights(rng.normal(size=(200, 2)),
    ...                                         rng.normal(1.0, 1.0, size=(100, 2)), random_state=0)
    >>> bool(w_test.mean() > w_cal.mean())
    True
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    cal = np.asarray(calibration_features, dtype=np.float64)
    test = np.asarray(test_features, dtype=np.float64)
    if cal.ndim != 2 or test.ndim != 2 or cal.shape[1] != test.shape[1] or not len(cal) or not len(test):
        raise ValueError("calibration_features and test_features must be non-empty 2-D arrays "
                         "with the same number of columns")
    if clip_quantile is not None and not 0.0 < float(clip_quantile) < 0.5:
        raise ValueError(f"clip_quantile must be in (0, 0.5) or None, got {clip_quantile!r}")
    joint = np.vstack([np.c_[cal, np.zeros(len(cal))], np.c_[test, np.ones(len(test))]])
    np.random.default_rng(random_state).shuffle(joint)
    model = make_pipeline(StandardScaler(), LogisticRegression(C=float(C), max_iter=1000, class_weight="balanced"))
    if random_state is not None:
        model.steps[-1][1].random_state = random_state
    model.fit(joint[:, :-1], joint[:, -1])
    column = int(np.flatnonzero(model.classes_ == 1.0)[0])

    def ratio(x: np.ndarray) -> np.ndarray:
        prob = model.predict_proba(x)
        return np.asarray(prob[:, column] / (prob[:, 1 - column] + 1e-9), dtype=np.float64)

    w_cal, w_test = ratio(cal), ratio(test)
    if clip_quantile is not None:
        both = np.concatenate([w_cal, w_test])
        lo, hi = np.percentile(both, 100 * float(clip_quantile)), np.percentile(both, 100 * (1 - float(clip_quantile)))
        w_cal, w_test = np.clip(w_cal, lo, hi), np.clip(w_test, lo, hi)
    return w_cal, w_test


AGGREGATIONS: Dict[str, Callable[..., Any]] = {
    "median": np.median, "mean": np.mean, "max": np.max, "min": np.min,
}


def conformal(
    detector: Any,
    X_train: npt.ArrayLike,
    *,
    split: Optional[float] = None,
    cv: Optional[int] = None,
    aggregation: str = "median",
    random_state: Optional[int] = None,
    **scaler_params: Any,
) -> ConformalDetector:
    r"""Split- or cross-conformal p-values from an unfitted PyOD detector.

    * ``split=f`` (default 0.5): a copy of the detector is fitted on a
      random ``1 − f`` of ``X_train`` and the other ``f`` calibrates
      (scikit-learn's ``train_test_split(..., test_size=f, shuffle=True,
      random_state=random_state)``). For inliers exchangeable with the
      calibration rows the p-values are valid, and BH on a test batch
      controls the FDR (Bates et al. 2023).
    * ``cv=k``: k folds (``KFold(k, shuffle=True,
      random_state=random_state)``); a copy is fitted on each fold's
      complement and scores the fold; all n held-out scores calibrate, and
      new data is scored by the ``aggregation`` (median) of the k models —
      nonconform's ``CrossValidation`` ("plus" mode). Uses all data for
      calibration, but carries no finite-sample guarantee.

    ``random_state`` is also set on each copy that takes one.
    ``scaler_params`` go to :class:`~outprob.ConformalScaler`
    (``conditional``, ``delta``, ``contamination``, ...). The training rows
    hold outliers in practice: ``contamination="auto"`` trims them from the
    calibration scores (contract §11 states what that leaves).

    Examples
    --------
    >>> import numpy as np, outprob
    >>> from pyod.models.knn import KNN
    >>> from outprob.pyod import conformal
    >>> rng = np.random.default_rng(0)
    >>> model = conformal(KNN(), rng.normal(size=(400, 2)), split=0.5, random_state=0)
    >>> p = model.pvalues(np.array([[0.0, 0.0], [6.0, 6.0]]))
    >>> float(p[1]) == 1 / (model.scaler_.n_calibration_ + 1), bool(p[0] > 0.5)
    (True, True)
    """
    import copy

    from sklearn.model_selection import KFold, train_test_split

    from ._conformal.scaler import ConformalScaler

    if split is not None and cv is not None:
        raise ValueError("pass split= or cv=, not both")
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {sorted(AGGREGATIONS)}, got {aggregation!r}")
    X = np.asarray(X_train)
    n = len(X)
    ids = np.arange(n)

    def fitted(rows: np.ndarray) -> Any:
        model = copy.deepcopy(detector)
        if random_state is not None and hasattr(model, "set_params"):
            try:
                model.set_params(random_state=random_state)
            except (TypeError, ValueError):
                pass  # a detector without random_state
        model.fit(X[rows])
        _check_detector_fitted(model)
        return model

    if cv is None:
        fraction = 0.5 if split is None else split
        if not 0.0 < float(fraction) < 1.0:
            raise ValueError(f"split must be a fraction in (0, 1), got {fraction!r}")
        train, calib = train_test_split(ids, test_size=fraction, shuffle=True, random_state=random_state)
        models = [fitted(train)]
        scores = as_float_array(models[0].decision_function(X[calib]), "decision_function(X)").reshape(-1)
        order = calib
    else:
        if isinstance(cv, bool) or not isinstance(cv, int) or not 2 <= cv <= n:
            raise ValueError(f"cv must be an integer number of folds in [2, {n}], got {cv!r}")
        models, parts, order_parts = [], [], []
        for train, calib in KFold(n_splits=cv, shuffle=True, random_state=random_state).split(X):
            m = fitted(train)
            models.append(m)
            parts.append(as_float_array(m.decision_function(X[calib]), "decision_function(X)").reshape(-1))
            order_parts.append(calib)
        scores, order = np.concatenate(parts), np.concatenate(order_parts)
    scaler = ConformalScaler(**scaler_params).fit(scores)
    return ConformalDetector(models, scaler, order, aggregation, X[order], scores)


def _check_detector_fitted(d: Any) -> None:
    if not callable(getattr(d, "decision_function", None)):
        raise TypeError(
            f"{type(d).__name__} is not a detector: it needs fit(X) and decision_function(X)"
        )


def _new_scaler(method: Union[str, Scaler]) -> Scaler:
    if isinstance(method, str):
        name = PYOD_METHODS.get(method, method)
        if name not in VARIANTS:
            known = ", ".join([*PYOD_METHODS, *VARIANTS])
            raise ValueError(f"unknown method {method!r}; known: {known}")
        return VARIANTS[name].scaler()
    if isinstance(method, (GaussianScaler, LinearScaler)):
        from sklearn.base import clone

        fresh: Scaler = clone(method)
        return fresh
    raise TypeError(
        f"method must be a variant name or an outprob scaler, got {type(method).__name__}"
    )


def _changed(detector: Any, fitted: Tuple[Any, np.ndarray]) -> bool:
    """Whether a detector's training scores differ from those fitted on:
    another array, or the same one changed in place."""
    source, scores = fitted
    current = getattr(detector, "decision_scores_", None)
    if current is not source:
        return True
    now = as_float_array(current, "decision_scores_").reshape(-1)
    return not np.array_equal(now, scores, equal_nan=True)


def _check_detector(d: Any) -> None:
    if not callable(getattr(d, "decision_function", None)):
        raise TypeError(
            f"{type(d).__name__} is not a detector: it needs decision_scores_ (training "
            "scores) and decision_function(X) (scores of new data), as PyOD's detectors have"
        )
    if getattr(d, "decision_scores_", None) is None:
        raise NotFittedError(
            f"this {type(d).__name__} has no decision_scores_: fit the detector first "
            "(or pass X to ScaledDetector.fit)"
        )
