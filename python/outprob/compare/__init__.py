"""Comparing many transformations over many score sets (contract §6).

As in the paper, after Benavoli, Corani and Mangili ("Should we really use
post-hoc tests based on mean-ranks?", JMLR 17, 2016). The input is a table
``X`` of measure values, one row per score set (dataset × detector) and one
column per method (transformation); lower values are better (the measures
are errors) unless ``lower_is_better=False``. With k methods and n rows:

1. Mean ranks. Each row is ranked, 1 = best, tied values sharing the mean
   of the ranks they span (``scipy.stats.rankdata``); method j gets
   ``R_j = (1/n) Σ_r rank(X[r, j])``.
2. Pairwise tests. For each of the ``m = k(k − 1)/2`` pairs (j, l), a
   two-sided Wilcoxon signed-rank test of the paired differences
   ``X[:, j] − X[:, l]`` with the given ``zero_method``; p = 1 when every
   difference is zero. With ``method="auto"`` the p-value is exact
   (the permutation distribution of the signed ranks, ties and zeros
   included) for at most 50 differences and the normal approximation with
   SciPy's tie and zero corrections above; ``Comparison.p_value_methods``
   and the printed summary say which (see ``outprob.compare._wilcoxon``).
3. Holm–Bonferroni. With the raw p-values sorted, ``p_(1) <= ... <= p_(m)``,
   ``p̃_(i) = max_{j <= i} min(1, (m − j + 1)·p_(j))``. Methods j and l
   differ significantly when ``p̃ < alpha``; the family-wise error rate is
   at most alpha.
4. Critical-difference diagram. Methods on a mean-rank axis, with a bar
   over each clique: a maximal run of methods, consecutive in mean-rank
   order, in which no pair differs significantly.

No warning is suppressed. The only warning SciPy gives on valid input
(0/0 when every difference is zero) is avoided by not testing then.
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Mapping
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt
from scipy import stats as _st

from .._common.validation import as_float_array
from .._common.optional import require
from ._wilcoxon import METHODS, signed_rank_p_value

__all__ = ["Comparison", "Pair", "compare", "holm_bonferroni"]

ZERO_METHODS = ("wilcox", "pratt", "zsplit")


def holm_bonferroni(p_values: Any) -> np.ndarray:
    """Holm–Bonferroni step-down adjusted p-values.

    With the m p-values sorted ascending, ``p_(1) <= ... <= p_(m)``,
    ``p̃_(i) = max_{j <= i} min(1, (m − j + 1)·p_(j))``. The result has
    the shape and order of the input; p-values must lie in [0, 1] (NaN
    raises ``ValueError``). Rejecting where ``p̃ < alpha`` controls the
    family-wise error rate at alpha.

    Examples
    --------
    >>> from outprob.compare import holm_bonferroni
    >>> holm_bonferroni([0.01, 0.04, 0.03, 0.005])
    array([0.03, 0.06, 0.06, 0.02])
    """
    p = np.asarray(as_float_array(p_values, "p_values"), dtype=np.float64)
    if not np.all((p >= 0.0) & (p <= 1.0)):  # also refuses NaN
        raise ValueError("p_values must be in [0, 1] (NaN is not allowed)")
    flat = p.reshape(-1)
    m = flat.size
    order = np.argsort(flat, kind="stable")
    steps = np.maximum.accumulate((m - np.arange(m)) * flat[order])
    out = np.empty_like(flat)
    out[order] = np.minimum(1.0, steps)
    return out.reshape(p.shape)


class Pair(NamedTuple):
    """One pairwise test: methods ``first`` and ``second`` (input order)."""

    first: str
    second: str
    p_value: float
    adjusted_p_value: float
    significant: bool


def _readonly(a: Any, shape: Tuple[int, ...], name: str) -> npt.NDArray[np.float64]:
    arr = np.array(a, dtype=np.float64)
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
    arr.setflags(write=False)
    return arr


@dataclasses.dataclass(frozen=True, eq=False)
class Comparison:
    """Result of :func:`compare`: mean ranks and Holm-corrected pairwise
    Wilcoxon tests of k methods over ``n_sets`` score sets.

    ``p_values`` and ``adjusted_p_values`` are symmetric k×k matrices in the
    order of ``methods`` with 1.0 on the diagonal; ``p_value_methods`` says
    for each pair how its p-value was computed (``"exact"``,
    ``"asymptotic"`` or ``"scipy"``; ``""`` on the diagonal). Arrays are
    read-only.
    """

    methods: Tuple[str, ...]
    mean_ranks: np.ndarray
    p_values: np.ndarray
    adjusted_p_values: np.ndarray
    alpha: float
    n_sets: int
    lower_is_better: bool = True
    zero_method: str = "wilcox"
    method: Any = "auto"
    p_value_methods: Any = None

    def __post_init__(self) -> None:
        methods = tuple(str(m) for m in self.methods)
        k = len(methods)
        if len(set(methods)) != k:
            raise ValueError(f"method names must be unique, got {methods}")
        set_ = object.__setattr__
        set_(self, "methods", methods)
        set_(self, "mean_ranks", _readonly(self.mean_ranks, (k,), "mean_ranks"))
        set_(self, "p_values", _readonly(self.p_values, (k, k), "p_values"))
        set_(self, "adjusted_p_values", _readonly(self.adjusted_p_values, (k, k), "adjusted_p_values"))
        set_(self, "alpha", _check_alpha(self.alpha))
        set_(self, "n_sets", int(self.n_sets))
        how = self.p_value_methods
        if how is None:  # built from p-values alone: say what was asked for
            how = np.full((k, k), self.method if isinstance(self.method, str) else "scipy")
        how = np.array(how, dtype=str)
        if how.shape != (k, k):
            raise ValueError(f"p_value_methods must have shape {(k, k)}, got {how.shape}")
        np.fill_diagonal(how, "")
        how.setflags(write=False)
        set_(self, "p_value_methods", how)

    @property
    def n_methods(self) -> int:
        return len(self.methods)

    @property
    def significant(self) -> np.ndarray:
        """k×k booleans: ``adjusted_p_values < alpha`` (False on the diagonal)."""
        sig = self.adjusted_p_values < self.alpha
        np.fill_diagonal(sig, False)
        return sig

    @property
    def order(self) -> Tuple[str, ...]:
        """Method names by mean rank, best first (ties keep input order)."""
        return tuple(self.methods[i] for i in self._order_index())

    def _order_index(self) -> npt.NDArray[np.intp]:
        return np.argsort(self.mean_ranks, kind="stable")

    def ranking(self) -> List[Tuple[str, float]]:
        """``(method, mean rank)`` pairs, best first."""
        return [(self.methods[i], float(self.mean_ranks[i])) for i in self._order_index()]

    @property
    def cliques(self) -> Tuple[Tuple[str, ...], ...]:
        """Groups of methods joined by a bar in a critical-difference diagram.

        With the methods in mean-rank order ``o_1, ..., o_k`` (:attr:`order`),
        a run ``o_a..o_b`` is a clique when ``b > a``, no two of its methods
        differ significantly, and it is not contained in another such run.
        Cliques may overlap (significance is not transitive); they are given
        in order of their first method.
        """
        idx = self._order_index()
        sig = self.significant[np.ix_(idx, idx)]
        k = len(idx)
        out, last_end, end = [], 0, 0
        for start in range(k):
            end = max(end, start)
            while end + 1 < k and not sig[start : end + 2, end + 1].any():
                end += 1
            if end > start and end > last_end:
                out.append(tuple(self.methods[i] for i in idx[start : end + 1]))
                last_end = end
        return tuple(out)

    def pairwise(self) -> List[Pair]:
        """Every pair ``(i, j)``, ``i < j`` in input order, as :class:`Pair`."""
        sig = self.significant
        k = self.n_methods
        return [
            Pair(self.methods[i], self.methods[j], float(self.p_values[i, j]),
                 float(self.adjusted_p_values[i, j]), bool(sig[i, j]))
            for i in range(k) for j in range(i + 1, k)
        ]

    def to_dict(self) -> Dict[str, Any]:
        """A JSON-serialisable dict of the inputs and derived results."""
        return {
            "methods": list(self.methods),
            "n_sets": int(self.n_sets),
            "alpha": float(self.alpha),
            "lower_is_better": bool(self.lower_is_better),
            "zero_method": self.zero_method,
            "method": self.method if isinstance(self.method, str) else repr(self.method),
            "mean_ranks": self.mean_ranks.tolist(),
            "p_values": self.p_values.tolist(),
            "adjusted_p_values": self.adjusted_p_values.tolist(),
            "significant": self.significant.tolist(),
            "p_value_methods": self.p_value_methods.tolist(),
            "order": list(self.order),
            "cliques": [list(c) for c in self.cliques],
        }

    def __repr__(self) -> str:
        return f"Comparison(methods={self.methods!r}, n_sets={self.n_sets}, alpha={self.alpha})"

    def __str__(self) -> str:
        better = "lower" if self.lower_is_better else "higher"
        width = max([6, *(len(m) for m in self.methods)])
        lines = [
            f"{self.n_methods} methods over {self.n_sets} score set{'s' * (self.n_sets != 1)} "
            f"({better} is better);",
            f"Wilcoxon signed-rank tests, Holm-corrected, alpha = {self.alpha:g};",
            f"p-values: {self._p_value_summary()}",
            "",
            f"{'method':<{width}}  mean rank",
        ]
        lines += [f"{m:<{width}}  {r:9.3f}" for m, r in self.ranking()]
        pos = {m: i for i, m in enumerate(self.order)}
        sig = []
        for pair in self.pairwise():
            if pair.significant:
                a, b = sorted((pair.first, pair.second), key=pos.__getitem__)
                sig.append((a, b, pair.p_value, pair.adjusted_p_value))
        sig.sort(key=lambda s: (pos[s[0]], pos[s[1]]))
        if sig:
            w = max(23, *(len(a) + len(b) + 3 for a, b, _, _ in sig))
            lines += ["", f"{'significantly different':<{w}}  {'p':>9}  {'Holm p':>9}"]
            lines += [f"{a + ' - ' + b:<{w}}  {p:9.3g}  {q:9.3g}" for a, b, p, q in sig]
        else:
            lines += ["", "no pair differs significantly"]
        lines += ["", "cliques: " + ("; ".join(", ".join(c) for c in self.cliques) or "none")]
        return "\n".join(lines)

    def _p_value_summary(self) -> str:
        iu = np.triu_indices(self.n_methods, 1)
        names, counts = np.unique(self.p_value_methods[iu], return_counts=True)
        described = {
            "exact": "exact",
            "asymptotic": "normal approximation (tie-corrected)",
            "scipy": f"scipy.stats.wilcoxon(method={self.method!r})",
        }
        parts = [f"{described.get(str(m), str(m))} for {c} pair{'s' * (int(c) != 1)}"
                 for m, c in zip(names, counts)]
        return ", ".join(parts) if parts else "none"

    def to_frame(self, kind: str = "ranks") -> Any:
        """The result as a pandas DataFrame (needs pandas).

        ``kind="ranks"``: one row per method, best first, with its
        ``mean_rank``. ``kind="pairs"``: one row per pair (input order, as
        :meth:`pairwise`) with ``p_value``, ``adjusted_p_value``,
        ``significant`` and ``p_value_method``.
        """
        pd = require("pandas", "Comparison.to_frame")
        if kind == "ranks":
            ranking = self.ranking()
            frame = pd.DataFrame(
                {"mean_rank": [r for _, r in ranking]},
                index=pd.Index([m for m, _ in ranking], name="method"),
            )
        elif kind == "pairs":
            pos = {m: i for i, m in enumerate(self.methods)}
            rows = [
                {**p._asdict(), "p_value_method": str(self.p_value_methods[pos[p.first], pos[p.second]])}
                for p in self.pairwise()
            ]
            columns = [*Pair._fields, "p_value_method"]
            frame = pd.DataFrame(rows, columns=columns)
        else:
            raise ValueError(f"kind must be 'ranks' or 'pairs', got {kind!r}")
        frame.attrs.update(n_sets=self.n_sets, alpha=self.alpha, lower_is_better=self.lower_is_better)
        return frame

    def plot(self, ax: Any = None) -> Any:
        """Critical-difference-style diagram on a matplotlib ``Axes``.

        The mean-rank axis runs from 1 (left, best) to k, its labels thinned
        to at most about a dozen; each method is linked to its mean rank,
        the better half labelled on the left; a thick bar under the axis
        spans each clique (at least half a rank wide, so that a clique of
        nearly equal ranks still reads as a bar). The horizontal range is
        widened until every label lies inside the axes. Draws on ``ax`` (a
        new figure by default) and returns it. Needs matplotlib.
        """
        require("matplotlib", "Comparison.plot")
        k, order, ranks = self.n_methods, self.order, dict(self.ranking())
        cliques = self.cliques
        n_left = (k + 1) // 2
        rows = max(n_left, k - n_left)
        if ax is None:
            import matplotlib.pyplot as plt

            # Wider with more methods, so that the rank axis keeps ~0.3 in a rank.
            size = (max(8.0, 4.0 + 0.3 * k), 1.6 + 0.3 * (rows + len(cliques)))
            _, ax = plt.subplots(figsize=size, layout="constrained")
        line = dict(color="black", linewidth=0.8)
        ax.plot([1, k], [0, 0], **line)
        step = _tick_step(k)
        for t in range(1, k + 1):
            labelled = t == 1 or t % step == 0
            ax.plot([t, t], [0, 0.1 if labelled else 0.05], **line)
            if labelled:
                ax.text(t, 0.14, str(t), ha="center", va="bottom")
        for c, clique in enumerate(cliques):
            y = -0.2 - 0.18 * c
            lo, hi = ranks[clique[0]], ranks[clique[-1]]
            widen = max(0.05, (0.5 - (hi - lo)) / 2)
            ax.plot([lo - widen, hi + widen], [y, y], color="black", linewidth=3,
                    solid_capstyle="butt")
        top = -0.2 - 0.18 * len(cliques)
        reach = 0.5 + 0.05 * k  # the elbows' horizontal run beyond the axis
        labels = []
        for i, m in enumerate(order):
            left = i < n_left
            y = top - 0.3 * ((i if left else k - 1 - i) + 1)
            x_label = 1 - reach if left else k + reach
            r = ranks[m]
            ax.plot([r, r, x_label], [0, y, y], **line)
            labels.append(ax.text(x_label + (-0.05 if left else 0.05), y, f"{m} ({r:.2f})",
                                  ha="right" if left else "left", va="center"))
        ax.set_ylim(top - 0.3 * (rows + 1), 0.5)
        ax.set_axis_off()
        _fit_texts(ax, labels, (1 - reach, k + reach))
        return ax


def _tick_step(k: int) -> int:
    """Label every rank up to 12 methods, else every 2nd, 5th, 10th, ...: at
    most about a dozen labels however many methods."""
    for step in (1, 2, 5, 10, 20, 50, 100):
        if k // step <= 12:
            return step
    return int(10 ** len(str(k)))  # typeshed: int ** int is Any (a negative power is a float)


def _renderer(fig: Any) -> Any:
    """The figure's renderer, or an Agg one of its size for a figure without
    a drawing canvas (``Figure()`` made directly)."""
    if hasattr(fig.canvas, "get_renderer"):
        return fig.canvas.get_renderer()
    from matplotlib.backends.backend_agg import RendererAgg

    return RendererAgg(fig.bbox.width, fig.bbox.height, fig.dpi)


def _fit_texts(ax: Any, texts: List[Any], span: Tuple[float, float]) -> None:
    """Widen ``ax``'s x range around ``span`` until every text lies inside
    the axes. Texts keep their size in points while the range grows, so
    the extents are measured again after each change."""
    lo, hi = span
    pad = 0.02 * (hi - lo)
    ax.set_xlim(lo - pad, hi + pad)
    renderer = _renderer(ax.figure)
    for _ in range(5):
        inverse = ax.transData.inverted()
        extents = [inverse.transform(t.get_window_extent(renderer).get_points())[:, 0] for t in texts]
        left = min([lo, *(e.min() for e in extents)]) - pad
        right = max([hi, *(e.max() for e in extents)]) + pad
        current = ax.get_xlim()
        if left >= current[0] and right <= current[1]:
            return
        ax.set_xlim(min(left, current[0]), max(right, current[1]))


def _check_alpha(alpha: Any) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
        raise TypeError(f"alpha must be a number in (0, 1), got {alpha!r}")
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    return float(alpha)


def _as_table(
    table: Any, methods: Optional[Sequence[Any]],
) -> Tuple[Tuple[str, ...], npt.NDArray[np.float64]]:
    """(names, float64 array of shape (n_sets, n_methods)) from any input."""
    names: List[Any]
    if hasattr(table, "columns") and hasattr(table, "to_numpy"):  # DataFrame
        names = list(table.columns)
        values = as_float_array(table.to_numpy(), "table")
        keyed = True
    elif isinstance(table, Mapping):
        names = list(table.keys())
        columns: List[np.ndarray] = []
        for name, col in table.items():
            c = as_float_array(col, "table")
            if c.ndim != 1:
                raise ValueError(f"method {name!r}: values must be 1-D, got shape {c.shape}")
            if columns and len(c) != len(columns[0]):
                raise ValueError(
                    f"every method needs the same number of values: {names[0]!r} has "
                    f"{len(columns[0])}, {name!r} has {len(c)}"
                )
            columns.append(c)
        values = np.stack(columns, axis=1) if columns else np.empty((0, 0))
        keyed = True
    else:
        values = as_float_array(table, "table")
        if values.ndim != 2:
            raise ValueError(f"table must be 2-D (n_sets, n_methods), got shape {values.shape}")
        names = [f"m{j}" for j in range(values.shape[1])] if methods is None else list(methods)
        if len(names) != values.shape[1]:
            raise ValueError(f"got {len(names)} method names for {values.shape[1]} columns")
        keyed = False
    if keyed and methods is not None:  # select and order columns by name
        methods = list(methods)
        missing = [m for m in methods if m not in names]
        if missing:
            raise ValueError(f"unknown methods {missing}; the table has {names}")
        values = values[:, [names.index(m) for m in methods]]
        names = methods
    names = [str(n) for n in names]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"method names must be unique, repeated: {dup}")
    if values.shape[1] < 2 or values.shape[0] < 1:
        raise ValueError(
            f"need at least 2 methods and 1 score set, got {values.shape[1]} methods "
            f"and {values.shape[0]} score sets"
        )
    values = values.astype(np.float64, copy=False)
    bad = np.argwhere(~np.isfinite(values))
    if bad.size:
        r, j = bad[0]
        raise ValueError(f"table must be finite: {values[r, j]} at row {r}, method {names[j]!r}")
    return tuple(names), values


def compare(
    table: Any,
    methods: Optional[Sequence[Any]] = None,
    *,
    lower_is_better: bool = True,
    alpha: float = 0.05,
    zero_method: str = "wilcox",
    method: Any = "auto",
) -> Comparison:
    """Mean ranks and Holm-corrected pairwise Wilcoxon signed-rank tests.

    Parameters
    ----------
    table : array_like of shape (n_sets, n_methods), mapping or DataFrame
        Measure values: rows are score sets, columns are methods. A mapping
        ``name -> 1-D values`` or a pandas DataFrame (columns = methods)
        gives the names itself. Values must be finite.
    methods : sequence of str, optional
        For an array, the column names (default ``"m0", "m1", ...``); for a
        mapping or DataFrame, the methods to compare, in this order.
    lower_is_better : bool, default True
        Rank 1 goes to the lowest value; False ranks the highest first.
        The two-sided tests do not depend on it.
    alpha : float, default 0.05
        Family-wise significance level for ``adjusted_p_values < alpha``.
    zero_method : {"wilcox", "pratt", "zsplit"}, default "wilcox"
        Treatment of zero differences, passed to ``scipy.stats.wilcoxon``.
    method : {"auto", "exact", "asymptotic"} or scipy.stats.PermutationMethod
        How p-values are computed. ``"exact"``: the exact permutation
        distribution of the signed ranks given the observed ranks (ties and
        zeros included; SciPy's exact test without ties), O(n³) for n score
        sets. ``"asymptotic"``: the normal approximation with SciPy's tie
        and zero corrections. ``"auto"`` (default): exact up to 50 score
        sets, asymptotic above; 12 methods over 200 score sets take a few
        tens of milliseconds. Anything else is passed to
        ``scipy.stats.wilcoxon(method=...)``.

    Returns
    -------
    Comparison
        Names are converted with ``str``; see the module docstring for the
        formulas.

    Examples
    --------
    >>> from outprob.compare import compare
    >>> errors = {
    ...     "gs":     [0.31, 0.25, 0.41, 0.36, 0.28, 0.33, 0.39, 0.27],
    ...     "linear": [0.33, 0.24, 0.44, 0.35, 0.30, 0.32, 0.42, 0.26],
    ...     "robust": [0.21, 0.18, 0.30, 0.26, 0.20, 0.24, 0.29, 0.19],
    ... }
    >>> result = compare(errors)
    >>> result.ranking()
    [('robust', 1.0), ('gs', 2.5), ('linear', 2.5)]
    >>> result.cliques
    (('gs', 'linear'),)
    >>> print(result)
    3 methods over 8 score sets (lower is better);
    Wilcoxon signed-rank tests, Holm-corrected, alpha = 0.05;
    p-values: exact for 3 pairs
    <BLANKLINE>
    method  mean rank
    robust      1.000
    gs          2.500
    linear      2.500
    <BLANKLINE>
    significantly different          p     Holm p
    robust - gs                0.00781     0.0234
    robust - linear            0.00781     0.0234
    <BLANKLINE>
    cliques: gs, linear
    """
    if zero_method not in ZERO_METHODS:
        raise ValueError(f"zero_method must be one of {ZERO_METHODS}, got {zero_method!r}")
    alpha = _check_alpha(alpha)
    names, values = _as_table(table, methods)
    n, k = values.shape
    oriented = values if lower_is_better else -values
    mean_ranks = _st.rankdata(oriented, axis=1).mean(axis=0)
    if isinstance(method, str) and method not in METHODS:
        raise ValueError(f"method must be one of {METHODS} or a scipy.stats.PermutationMethod, got {method!r}")
    p = np.ones((k, k))
    how = np.full((k, k), "", dtype=object)
    for i in range(k):
        for j in range(i + 1, k):
            p[i, j], how[i, j] = signed_rank_p_value(values[:, i] - values[:, j], zero_method, method)
            p[j, i], how[j, i] = p[i, j], how[i, j]
    adjusted = np.ones((k, k))
    iu = np.triu_indices(k, 1)
    adjusted[iu] = holm_bonferroni(p[iu])
    adjusted.T[iu] = adjusted[iu]
    return Comparison(
        names, mean_ranks, p, adjusted, alpha, n, bool(lower_is_better), zero_method, method, how
    )
