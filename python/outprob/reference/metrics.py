"""contract §6 in plain NumPy: the evaluation measures of outlier
probabilities, written to be read against the contract (``docs/contract.md``). Labels y are 0/1,
probabilities p in [0, 1], both 1-D of equal length."""

from __future__ import annotations

import math
import struct
from typing import Callable, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from .estimators import quantile

DEFAULT_N_BINS = tuple(range(5, 21))

Array = npt.NDArray[np.float64]
#: Bin indices (``np.searchsorted``'s integers).
Index = npt.NDArray[np.intp]
#: Bin edges as given: a list of floats or :func:`bin_edges`' array.
Edges = Union[Sequence[float], Array]


# Per-observation errors e_i ---------------------------------------------------------


def brier_errors(y: npt.ArrayLike, p: npt.ArrayLike) -> Array:
    """(p_i − y_i)²."""
    return (np.asarray(p, np.float64) - np.asarray(y, np.float64)) ** 2


def sharpness_errors(p: npt.ArrayLike) -> Array:
    """H(p) = −p log₂ p − (1 − p) log₂(1 − p), H(0) = H(1) = 0.

    log₂(1 − p) is taken as log1p(−p)/ln 2, the same value computed without
    losing the digits of tiny p."""
    p = np.asarray(p, np.float64)
    inner = (p > 0) & (p < 1)
    q = np.where(inner, p, 0.5)
    h = -(q * np.log2(q) + (1 - q) * np.log1p(-q) / np.log(2))
    return np.where(inner, h, 0.0)


# Bins ----------------------------------------------------------------------------------


def _next_edge(values: Array, covered: Index, a: float, start: int, area: float, n: int) -> float:
    """The smallest t with A(a, t] = (t − a)·#{not yet binned p_i <= t}/N >= T.

    ``values``: distinct probabilities not yet binned, ascending;
    ``covered``: how many of those points are <= each value."""
    if values.size == 0:
        return 1.0
    reached = (values - a) * covered / n >= area  # A(a, v] >= T at each value v
    if not reached.any():
        # A grows linearly past the last value; it reaches T at t = a + TN/count.
        return a + area * n / (n - start)
    j = int(np.argmax(reached))
    if j == 0:
        return float(values[0])
    # Between the previous value and values[j] the count is covered[j − 1].
    t = a + area * n / covered[j - 1]
    return float(t) if t < values[j] else float(values[j])


def _greedy_edges(p_sorted: Array, values: Array, cum: Index, area: float, k: int) -> Optional[List[float]]:
    """Edges placed greedily from 0 for target area T; None if more than k
    bins. ``values``, ``cum``: the distinct probabilities and how many p_i
    are <= each."""
    n = p_sorted.size
    edges, a, start = [0.0], 0.0, 0
    while True:
        if len(edges) > k:
            return None
        first = int(np.searchsorted(cum, start, side="right"))  # distinct values not yet binned
        t = _next_edge(values[first:], cum[first:] - start, a, start, area, n)
        if t >= 1.0:
            edges.append(1.0)  # an edge that would reach 1 closes the last bin
            return edges
        edges.append(t)
        a, start = t, int(np.searchsorted(p_sorted, t, side="right"))


def equiareal_edges(p: npt.ArrayLike, k: int) -> List[float]:
    """The smallest T in [0, 1] whose greedy placement yields at most k
    bins, and the edges placed at that T.

    Bisection over the doubles of [0, 1]: their bit patterns order like
    their values, so machine precision takes at most 64 halvings."""
    p_sorted = np.sort(np.asarray(p, np.float64))
    values, counts = np.unique(p_sorted, return_counts=True)
    cum = np.cumsum(counts)
    lo, hi = 0, _bits(1.0)  # T = 0 never closes a bin; T = 1 makes one bin
    best = [0.0, 1.0]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        edges = _greedy_edges(p_sorted, values, cum, _double(mid), k)
        if edges is not None:
            hi, best = mid, edges
        else:
            lo = mid
    return best


def _bits(x: float) -> int:
    bits: int = struct.unpack("<Q", struct.pack("<d", x))[0]
    return bits


def _double(bits: int) -> float:
    x: float = struct.unpack("<d", struct.pack("<Q", bits))[0]
    return x


def bin_edges(p: npt.ArrayLike, k: int, scheme: str = "equiareal") -> Array:
    """[t₀ = 0, t₁, …, t_k = 1] of a binning scheme (repeated edges merged)."""
    if scheme == "equal_width":
        return np.arange(k + 1) / k
    if scheme == "equal_frequency":
        edges = [0.0]
        for b in range(1, k):
            t = quantile(p, b / k)
            # t₁ = 0 makes the bin [0, 0] of the exact zeros; a later repeat
            # would make an empty bin (t, t] and merges away.
            if b == 1 or t > edges[-1]:
                edges.append(t)
        if edges[-1] < 1.0 or len(edges) == 1:
            edges.append(1.0)
        return np.array(edges)
    if scheme == "equiareal":
        return np.array(equiareal_edges(p, k))
    raise ValueError(f"unknown binning scheme {scheme!r}")


def bin_index(p: npt.ArrayLike, edges: Edges) -> Index:
    """b with p in [t₀, t₁] (b = 0) or (t_b, t_{b+1}]."""
    return np.searchsorted(np.asarray(edges)[1:-1], np.asarray(p, np.float64), side="left")


def _bin_means(values: Array, index: Index, n_bins: int) -> Array:
    means = np.full(n_bins, np.nan)
    for b in range(n_bins):
        members = values[index == b]
        if members.size:
            means[b] = math.fsum(members) / members.size
    return means


def refinement_errors(y: npt.ArrayLike, p: npt.ArrayLike, edges: Edges) -> Array:
    """2·ȳ_b·(1 − ȳ_b) of p_i's bin b."""
    idx = bin_index(p, edges)
    ybar = _bin_means(np.asarray(y, np.float64), idx, len(edges) - 1)
    return (2 * ybar * (1 - ybar))[idx]


def calibration_errors(y: npt.ArrayLike, p: npt.ArrayLike, edges: Edges) -> Array:
    """``|p̄_b − ȳ_b|`` of ``p_i``'s bin ``b``."""
    idx = bin_index(p, edges)
    nb = len(edges) - 1
    pbar = _bin_means(np.asarray(p, np.float64), idx, nb)
    ybar = _bin_means(np.asarray(y, np.float64), idx, nb)
    return np.abs(pbar - ybar)[idx]


# Averages -------------------------------------------------------------------------------


def stratified_mean(errors: npt.ArrayLike, y: npt.ArrayLike, stratify: Optional[str] = None) -> float:
    """Mean of e_i over all, over outliers (y = 1), over inliers (y = 0), or
    the mean of those two ("both"). NaN for an absent class."""
    e, y = np.asarray(errors, np.float64), np.asarray(y)

    def mean(mask: npt.NDArray[np.bool_]) -> float:
        return math.fsum(e[mask]) / mask.sum() if mask.any() else math.nan

    if stratify is None:
        return mean(np.ones(e.size, bool))
    if stratify == "outlier":
        return mean(y == 1)
    if stratify == "inlier":
        return mean(y == 0)
    if stratify == "both":
        return (mean(y == 1) + mean(y == 0)) / 2
    raise ValueError(f"unknown stratify {stratify!r}")


def brier_score(y: npt.ArrayLike, p: npt.ArrayLike, stratify: Optional[str] = None) -> float:
    """Mean Brier error (p_i − y_i)², stratified as :func:`stratified_mean`."""
    return stratified_mean(brier_errors(y, p), y, stratify)


def sharpness_error(y: npt.ArrayLike, p: npt.ArrayLike, stratify: Optional[str] = None) -> float:
    """Mean binary entropy H(p_i) in bits, stratified as :func:`stratified_mean`."""
    return stratified_mean(sharpness_errors(p), y, stratify)


def _binned(
    errors_of: Callable[[npt.ArrayLike, npt.ArrayLike, Edges], Array], y: npt.ArrayLike,
    p: npt.ArrayLike, stratify: Optional[str], bins: str, n_bins: Union[int, Sequence[int]],
) -> float:
    ks = [n_bins] if isinstance(n_bins, int) else list(n_bins)
    values = [stratified_mean(errors_of(y, p, bin_edges(p, k, bins)), y, stratify) for k in ks]
    return math.fsum(values) / len(values)


def refinement_error(
    y: npt.ArrayLike, p: npt.ArrayLike, stratify: Optional[str] = None, bins: str = "equiareal",
    n_bins: Union[int, Sequence[int]] = DEFAULT_N_BINS,
) -> float:
    """Refinement error 2·ȳ_b·(1 − ȳ_b), stratified, averaged over the bin counts ``n_bins``."""
    return _binned(refinement_errors, y, p, stratify, bins, n_bins)


def calibration_error(
    y: npt.ArrayLike, p: npt.ArrayLike, stratify: Optional[str] = None, bins: str = "equiareal",
    n_bins: Union[int, Sequence[int]] = DEFAULT_N_BINS,
) -> float:
    """Calibration error ``|p̄_b − ȳ_b|``, stratified, averaged over the bin counts ``n_bins``."""
    return _binned(calibration_errors, y, p, stratify, bins, n_bins)


def reliability_curve(
    y: npt.ArrayLike, p: npt.ArrayLike, bins: str = "equiareal", n_bins: int = 10,
) -> Tuple[Array, Array, Index, Array]:
    """(mean probability, outlier fraction, count, edges) per bin."""
    edges = bin_edges(p, n_bins, bins)
    idx = bin_index(p, edges)
    nb = len(edges) - 1
    count = np.bincount(idx, minlength=nb)
    return (
        _bin_means(np.asarray(p, np.float64), idx, nb),
        _bin_means(np.asarray(y, np.float64), idx, nb),
        count,
        edges,
    )


def skill_score(m: float, m_ref: float) -> float:
    """−log₂(M(p)/M(p_ref)); 0 if both are 0, ±inf if one is."""
    if m == 0 and m_ref == 0:
        return 0.0
    if m == 0:
        return math.inf
    if m_ref == 0:
        return -math.inf
    return -math.log2(m / m_ref)


def harmonic_improvement_score(values: Sequence[float], means: Sequence[float]) -> float:
    """Harmonic mean over measures i of M_i(p)/mean_j M_i(p^j)."""
    ratios = [1.0 if mu == 0 and v == 0 else (math.inf if mu == 0 else v / mu) for v, mu in zip(values, means)]
    if any(r == 0 for r in ratios):
        return 0.0
    return len(ratios) / math.fsum(1 / r for r in ratios)
