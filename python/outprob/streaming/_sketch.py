"""The KLL quantile sketch of contract §9, with DataSketches' bytes."""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import numpy as np

from .. import _core
from .._common.validation import as_float_array, check_count

#: Default k: the single-sided normalized rank error ε(800) = 0.345% ≤ 0.35%.
DEFAULT_K = 800


def normalized_rank_error(k: int, pmf: bool = False) -> float:
    """DataSketches' normalized rank error ε(k) of a KLL sketch.

    ``2.296 / k**0.9723`` single-sided (quantile and rank queries) or
    ``2.446 / k**0.9433`` double-sided (PMF): the 99th percentile of the
    largest rank error over all queries of one sketch, fitted to
    DataSketches' simulations.

    >>> round(normalized_rank_error(800), 5)
    0.00345
    """
    return float(_core.kll_normalized_rank_error(check_count(k, "sketch_k"), pmf=bool(pmf)))


class KLLSketch:
    """KLL quantile sketch with DataSketches-compatible bytes.

    Parameters
    ----------
    k : int, default 800
        Size/accuracy parameter in [8, 65535]; the sketch keeps about
        ``3k`` items and its rank error is :func:`normalized_rank_error`.
    dtype : "float64" or "float32"
        Item type: ``kll_doubles_sketch`` or ``kll_floats_sketch`` bytes.
    seed : int, default 0
        Selects the compaction coins. Each coin is a SplitMix64 hash of the
        seed, ``n``, the level and the level's middle item: the same calls
        give the same sketch, and a sketch read back from bytes continues
        exactly as the original.

    Notes
    -----
    Queries follow DataSketches: ``quantile(rank, inclusive=True)`` is the
    first retained item whose cumulative weight reaches ``ceil(rank·n)``
    (``inclusive=False``: exceeds ``floor(rank·n)``); ``rank(item,
    inclusive=True)`` is the weight of the items ``<= item`` over n. NaN
    are skipped; ±inf are kept (as DataSketches does).

    Examples
    --------
    >>> import numpy as np
    >>> s = KLLSketch(k=200)
    >>> s.update(np.arange(1000.0))
    >>> s.n, s.is_estimation_mode
    (1000, True)
    >>> abs(s.quantile(0.5) - 500) < 0.02 * 1000
    True
    >>> KLLSketch.deserialize(s.serialize()).n
    1000
    """

    __slots__ = ("_s",)

    def __init__(self, k: int = DEFAULT_K, dtype: str = "float64", seed: int = 0) -> None:
        if dtype not in ("float64", "float32"):
            raise ValueError(f"dtype must be 'float64' or 'float32', got {dtype!r}")
        self._s = _core.KllSketch(
            k=check_count(k, "sketch_k"),
            double=dtype == "float64",
            seed=check_count(seed, "seed"),
        )

    @classmethod
    def _wrap(cls, s: Any) -> "KLLSketch":
        obj = cls.__new__(cls)
        obj._s = s
        return obj

    def update(self, values: Any) -> None:
        """Adds scores (any array-like; flattened; NaN skipped)."""
        a = as_float_array(values).reshape(-1)
        self._s.update(a)

    def merge(self, other: "KLLSketch") -> None:
        """Adds everything ``other`` has seen (keeps this sketch's k; the
        error is that of the smaller k)."""
        if not isinstance(other, KLLSketch):
            raise TypeError(f"can only merge a KLLSketch, got {type(other).__name__}")
        self._s.merge(other._s)

    def serialize(self) -> bytes:
        """DataSketches' compact serialized bytes."""
        return bytes(self._s.serialize())

    @classmethod
    def deserialize(cls, data: bytes, dtype: str = "float64", seed: int = 0) -> "KLLSketch":
        """Reads DataSketches' bytes (checked: garbage raises ``ValueError``)."""
        if dtype not in ("float64", "float32"):
            raise ValueError(f"dtype must be 'float64' or 'float32', got {dtype!r}")
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"data must be bytes, got {type(data).__name__}")
        seed = check_count(seed, "seed")
        return cls._wrap(
            _core.KllSketch.deserialize(bytes(data), double=dtype == "float64", seed=seed)
        )

    def quantile(self, rank: float, inclusive: bool = True) -> float:
        """The item of normalized rank ``rank`` (DataSketches' ``get_quantile``)."""
        return float(self._s.quantiles([float(rank)], inclusive=bool(inclusive))[0])

    def quantiles(self, ranks: Sequence[float], inclusive: bool = True) -> np.ndarray:
        """:meth:`quantile` of several ranks."""
        return np.array(self._s.quantiles([float(r) for r in ranks], inclusive=bool(inclusive)))

    def rank(self, item: float, inclusive: bool = True) -> float:
        """Normalized rank of ``item`` (DataSketches' ``get_rank``)."""
        return float(self._s.ranks([float(item)], inclusive=bool(inclusive))[0])

    def get_normalized_rank_error(self, pmf: bool = False) -> float:
        """ε of this sketch (of the smallest k merged in)."""
        return float(self._s.normalized_rank_error(pmf=bool(pmf)))

    def weighted_items(self) -> Tuple[np.ndarray, np.ndarray]:
        """Retained items (ascending) and their weights."""
        v, w = self._s.weighted_items()
        return np.asarray(v), np.asarray(w)

    @property
    def k(self) -> int:
        return int(self._s.info().k)

    @property
    def n(self) -> int:
        return int(self._s.info().n)

    @property
    def num_retained(self) -> int:
        return int(self._s.info().num_retained)

    @property
    def is_estimation_mode(self) -> bool:
        return bool(self._s.info().is_estimation_mode)

    @property
    def is_empty(self) -> bool:
        return self.n == 0

    @property
    def dtype(self) -> str:
        return "float64" if self._s.info().is_double else "float32"

    @property
    def min(self) -> Optional[float]:
        e = self._s.info().extremes
        return None if e is None else float(e[0])

    @property
    def max(self) -> Optional[float]:
        e = self._s.info().extremes
        return None if e is None else float(e[1])

    def __reduce__(self) -> Any:
        return (_kll_from_bytes, (self.serialize(), self.dtype, int(self._s.info().seed)))

    def __copy__(self) -> "KLLSketch":
        return KLLSketch._wrap(self._s.copy())

    def __repr__(self) -> str:
        return f"KLLSketch(k={self.k}, dtype={self.dtype!r}, n={self.n}, retained={self.num_retained})"


def _kll_from_bytes(data: bytes, dtype: str, seed: int) -> KLLSketch:
    return KLLSketch.deserialize(data, dtype, seed)
