"""A fitted map without its scaler (contract §7, "Fitted maps"): what a
scoring service loads to turn scores into probabilities, importing neither
scikit-learn nor pandas.

:func:`~outprob.load_map` reads the JSON that :meth:`FittedMap.to_dict`
(and ``outprob fit --map``) writes; ``Scaler.to_map()`` gives the map of
a fitted scaler. The map is the extension's ``FittedMap``, checked by the
core when it is built (a stored map is untrusted input).
"""

from __future__ import annotations

from typing import Any, Dict, Optional, overload

import numpy as np
import numpy.typing as npt

from .._common.public import public
from .. import _core
from .._common.validation import as_float_array, check_out

__all__ = ["FittedMap", "read_map"]

FORMAT = "outprob.FittedMap"
VERSION = 1


@public("outprob")
class FittedMap:
    """A fitted scaler's map from scores to outlier probabilities, alone.

    It does what the scaler's ``transform`` does — the same probabilities,
    bit for bit — and nothing else: no fitting, no parameters, no pandas
    output. ``to_dict`` stores it as JSON-compatible builtins,
    :func:`load_map` reads them back, and it pickles. Made by
    ``Scaler.to_map()`` or :func:`load_map`.

    Examples
    --------
    >>> import outprob
    >>> m = outprob.scaler("mean_std").fit([1.0, 2.0, 3.0, 4.0]).to_map()
    >>> m
    FittedMap(kind='gaussian', columns=1)
    >>> m.transform([2.5, 5.0]).round(4)
    array([0.    , 0.9747])
    >>> import json
    >>> outprob.load_map(json.dumps(m.to_dict())).transform([5.0]).round(4)
    array([0.9747])
    """

    __slots__ = ("_map",)

    def __init__(self, fitted: Any) -> None:
        if not isinstance(fitted, _core.FittedMap):
            raise TypeError("make a FittedMap with Scaler.to_map() or outprob.load_map()")
        self._map = fitted

    @overload
    def transform(self, X: npt.NDArray[np.float32], out: Optional[np.ndarray] = None
                  ) -> npt.NDArray[np.float32]: ...
    @overload
    def transform(self, X: npt.ArrayLike, out: Optional[np.ndarray] = None
                  ) -> npt.NDArray[np.float64]: ...
    def transform(self, X: npt.ArrayLike, out: Optional[np.ndarray] = None) -> Any:
        """Maps scores to outlier probabilities in [0, 1], as the fitted
        scaler's ``transform`` does.

        Parameters
        ----------
        X : array_like
            Scores: any shape for a map fitted on 1-D scores (element-wise),
            shape (m, k) for one fitted on k score columns. NaN stays NaN,
            +inf → 1, −inf → 0.
        out : numpy.ndarray, optional
            Where to write the result: same shape and dtype as the scores
            (float32 for float32 scores, else float64), C-contiguous.

        Returns
        -------
        numpy.ndarray
            The probabilities (``out`` if given); float32 for float32 input.
        """
        if out is None and type(X) is np.ndarray:
            result = self._map.transform(X)
            if result is not None:  # a float ndarray the map takes as it is
                return result
        x = as_float_array(X)
        k = self._map.n_features
        if k is not None and (x.ndim != 2 or x.shape[1] != k):
            raise ValueError(f"this map was fitted on {k} score columns: expected scores of "
                             f"shape (n, {k}), got shape {x.shape}")
        if out is not None:
            check_out(out, x)
            if np.shares_memory(out, x):
                x = x.copy()
        if x.ndim == 0:  # a 0-d score maps as a vector of one
            one = self._map.transform(x.reshape(1), None if out is None else out.reshape(1))
            assert one is not None  # as_float_array made it an array the map reads in place
            return one[0]
        return self._map.transform(x, out)

    def to_dict(self) -> Dict[str, Any]:
        """The map as JSON-compatible builtins (``format``, ``version``,
        ``map``); :func:`load_map` reads it back."""
        return {"format": FORMAT, "version": VERSION, "map": _builtins(self._map.state())}

    def __reduce__(self) -> Any:
        return (read_map, (self.to_dict(),))

    def __repr__(self) -> str:
        k = self._map.n_features
        return f"FittedMap(kind={self._map.kind!r}, columns={1 if k is None else k})"


def read_map(data: Any) -> FittedMap:
    """The fitted map of a :meth:`FittedMap.to_dict` dict (untrusted: any
    other input raises ``ValueError``)."""
    form = data.get("format") if isinstance(data, dict) else None
    if form != FORMAT:
        raise ValueError(f"not a stored fitted map: 'format' must be {FORMAT!r}")
    if data.get("version") != VERSION:
        raise ValueError(f"unsupported fitted-map version {data.get('version')!r}; "
                         f"this outprob reads version {VERSION}")
    state = data.get("map")
    if not isinstance(state, dict):
        raise ValueError("a stored fitted map needs its 'map' dict")
    try:
        return FittedMap(_core.FittedMap(state))
    except (TypeError, KeyError, OverflowError) as exc:
        raise ValueError(f"not a valid fitted map: {exc}") from None


def _builtins(value: Any) -> Any:
    """A map's state as JSON-compatible builtins (arrays as lists)."""
    if isinstance(value, dict):
        return {k: _builtins(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_builtins(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value
