"""Exact fitting on Dask collections (contract §9).

``fit(scaler, collection)`` fits an outprob scaler to a ``dask.array``
(1-D, or 2-D with one score column per column) or a ``dask.dataframe``
(Series or DataFrame; every column a score column) and returns the fitted
scaler: the same center and scale as the in-memory fit of the same scores —
order statistics bit for bit, mean bit for bit, SD and trimmed SD within
1e-15 relative, M-estimates within 1e-12 relative — using only map steps
over partitions and small reductions on the client (no shuffle):

1. census: count, min/max, NaN and ±inf, and — when the center is the
   mean or the scale the SD — the exact sum and SD state (1 pass; a fit
   that needs the mean or SD only as a fallback reads them in 1 more);
   when the fit needs the median (median, nMAD, M-estimates), a KLL sketch
   of each partition (k from 800 to 20000, so that a bracket of 5εn ranks
   holds at most ``collect_max`` values; none beyond ~1.5·10⁹ scores),
   merged: it brackets the median and then the
   median deviation, and one pass each (count below the bracket, collect
   the values in it, select exactly) usually settles them — so
   median + nMAD take 3 passes; a bracket that misses the rank (rarer than
   the sketch's 1% failure rate) costs the passes below instead;
2. order statistics: each wanted rank's bracket of 64-bit order-preserving
   keys is narrowed 2^12-fold per pass by a histogram of the bracket (all
   ranks of a column share the passes: both quartiles at once), until the
   bracket holds at most ``collect_max`` values, which are collected and
   selected exactly by the core (at most 6 histogram passes, usually 1–2,
   then 1 collect pass); the same on ``|x − median|`` for the nMAD and on
   ``|x − c|`` for the trimmed SD's cut-off;
3. sums below a cut-off (trimmed mean, trimmed SD): 1 pass;
4. M-estimates: one sum-reduction per location step of the iteration (the
   scale step's sums come with the first location step of each iteration).

Pass bound per score column: census 1 (+1 for a fallback to the SD); each selection round at most 7; the
nMAD or trimmed SD adds a second round; trimmed mean/SD 1 sum pass each;
M-estimation at most ``maxiter²`` reductions (typically 10–40). Columns are
fitted one after another. ``method="sketch"`` fits in one pass from merged
per-partition KLL sketches, with the error bounds of
:class:`outprob.streaming.StreamingFit` instead of exactness.

``transform(scaler, collection)`` is lazy (``map_blocks`` /
``map_partitions``).
"""

from __future__ import annotations

import pickle
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

try:
    import dask
    import dask.array as da
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise ImportError(
        "outprob.dask needs Dask: install the extra with `pip install outprob[dask]`"
    ) from exc

from . import _core
from ._exceptions import ZeroScaleWarning
from ._input import as_float_array
from .stats import NIQR_DIVISOR, NMAD_DIVISOR

__all__ = ["fit", "transform", "FitInfo"]

BUCKET_BITS = 12


class FitInfo(dict):  # type: ignore[type-arg]
    """Passes over the data, bytes the partitions returned, and (for
    ``method="sketch"``) the per-column error bounds."""


def _is_dataframe(c: Any) -> bool:
    return hasattr(c, "map_partitions") and not isinstance(c, da.Array)


def _partitions(collection: Any) -> Tuple[List[Any], int, int]:
    """Delayed partitions (whole rows), their dimensionality, columns."""
    if isinstance(collection, da.Array):
        if collection.ndim == 1:
            return list(collection.to_delayed().ravel()), 1, 1
        if collection.ndim != 2:
            raise ValueError(f"scores must be 1-D or 2-D, got {collection.ndim}-D")
        arr = collection.rechunk({1: -1})
        return list(arr.to_delayed().ravel()), 2, arr.shape[1]
    if _is_dataframe(collection):
        ncols = 1 if collection.ndim == 1 else len(collection.columns)
        return list(collection.to_delayed()), collection.ndim, ncols
    raise TypeError(f"expected a dask array or dataframe, got {type(collection).__name__}")


def _column(part: Any, j: int, ndim: int) -> np.ndarray:
    a = np.asarray(part)
    if ndim == 2:
        a = a[:, j] if a.ndim == 2 else a.reshape(-1, 1)[:, j]
    # as_float_array also aligns buffers that arrive over the wire unaligned.
    return as_float_array(a.reshape(-1))


class _Runner:
    """Maps a kernel over the partitions of one column and counts passes."""

    def __init__(self, parts: List[Any], ndim: int, j: int) -> None:
        self.parts, self.ndim, self.j = parts, ndim, j
        self.passes = 0
        self.bytes = 0

    def map(self, kernel: Any, *args: Any) -> List[Any]:
        ndim, j = self.ndim, self.j

        def task(part: Any) -> Any:
            return kernel(_column(part, j, ndim), *args)

        out = list(dask.compute(*[dask.delayed(task)(p) for p in self.parts]))
        self.passes += 1
        self.bytes += len(pickle.dumps(out, protocol=5))
        return out


def _needs_moments(params: Dict[str, Any]) -> bool:
    """Whether the fit reads the mean or the SD (else the census skips the
    exact sums: they cost more than the rest of the census)."""
    return params.get("center") == "mean" or params.get("scale") == "std"


def _needs_median(params: Dict[str, Any]) -> bool:
    """Whether the fit selects the median (and so the median deviation)."""
    return (params.get("center") in ("median", "huber", "tukey")
            or params.get("scale") in ("nmad", "huber", "tukey"))


def _sketch_k(n_hint: Optional[int], collect_max: int) -> int:
    """k of the census's bracketing sketch: a bracket of 5εn ranks should
    hold at most ``collect_max`` values (k in [800, 20000]; 2000 when the
    length is unknown; 0 — no sketch — when even k = 20000 is too coarse)."""
    if not n_hint:
        return 2000
    eps = collect_max / (6.0 * n_hint)  # 5εn + a margin for rounding k
    k = (2.296 / eps) ** (1 / 0.9723) if eps > 0 else float("inf")
    return 0 if k > 20000 else int(max(k, 800))


def _census(run: _Runner, params: Dict[str, Any], moments: bool,
            sketch: int = 0) -> Tuple[int, float, float, Any, Any]:
    """Count, min and max of the oriented scores (and, when ``moments``, the
    merged exact-moments state; when ``sketch``, a merged KLL sketch of the
    oriented scores that brackets ranks), checking §5 over the whole column."""
    negate = not params["higher_is_outlier"]
    nan_policy = params["nan_policy"]

    ddof = params["ddof"]

    def spec() -> Any:
        # Made where it is used: the kernel travels to workers, a spec does
        # not pickle.
        return _core.GaussianSpec(center="mean", scale="std", ddof=ddof, negate=negate)

    def kernel(x: np.ndarray) -> Any:
        census = _core.part_census(x)
        if census.inf_count:
            return census, None, None
        sk = None
        if sketch:
            k = _core.KllSketch(k=sketch, double=True, seed=0)
            k.update(-x if negate else x)
            sk = k.serialize()
        if not moments:
            return census, None, sk
        state = _core.StreamingState(spec=spec(), k=8, seed=0, columns=1)
        state.update(x)
        return census, state.parts(), sk

    out = run.map(kernel)
    offset, nan_total, inf_total, count = 0, 0, 0, 0
    lo, hi = float("inf"), float("-inf")
    first_nan = first_inf = None
    state = None
    merged = None
    for census, parts, sk in out:
        length, c, nan_c, nan_f = census.len, census.count, census.nan_count, census.nan_first
        inf_c, inf_f, p_lo, p_hi = census.inf_count, census.inf_first, census.min, census.max
        if sk is not None:
            part_sketch = _core.KllSketch.deserialize(bytes(sk), double=True, seed=0)
            if merged is None:
                merged = part_sketch
            else:
                merged.merge(part_sketch)
        if nan_c and first_nan is None:
            first_nan = offset + nan_f
        if inf_c and first_inf is None:
            first_inf = offset + inf_f
        nan_total += nan_c
        inf_total += inf_c
        offset += length
        count += c
        if c:
            lo, hi = min(lo, p_lo), max(hi, p_hi)
        if parts is not None:
            s = _core.StreamingState.from_parts(spec=spec(), parts=parts)
            if state is None:
                state = s
            else:
                state.merge(s)
    if inf_total:
        raise ValueError(
            f"scores contain {inf_total} infinite value{'s' if inf_total != 1 else ''} (first at "
            f"index {first_inf}); fitting needs finite scores: drop or clip them before fitting"
        )
    if nan_total and nan_policy == "raise":
        raise ValueError(
            f"scores contain {nan_total} NaN value{'s' if nan_total != 1 else ''} (first at index "
            f"{first_nan}) and nan_policy='raise'; use nan_policy='omit' to ignore them"
        )
    if count == 0:
        raise ValueError("cannot fit on an empty array of scores" if offset == 0 else
                         f"all {offset} scores are NaN: nothing is left to fit after omitting NaN")
    return count, (-hi if negate else lo), (-lo if negate else hi), state, merged


def _guess_pass(run: _Runner, negate: bool, center: Optional[float],
                guesses: Dict[int, Tuple[float, float]], collect_max: int) -> Dict[int, float]:
    """One pass that tries to settle ranks from guessed value brackets: per
    bracket, the count below it and the values in it; a rank is settled
    exactly when it falls inside its bracket (a bad guess only costs the
    usual passes: the caller selects the ranks left over)."""
    brackets = sorted({(_core.order_key(a), _core.order_key(b)) for a, b in guesses.values()})

    def kernel(x: np.ndarray) -> Any:
        return [(_core.part_histogram(x, center=center, negate=negate, lo=lo, shift=63, buckets=1)[0],
                 _core.part_collect(x, center=center, negate=negate, lo=lo, hi=hi))
                for lo, hi in brackets]

    out = run.map(kernel)
    values: Dict[int, float] = {}
    for i, (lo, hi) in enumerate(brackets):
        below = sum(int(p[i][0]) for p in out)
        vals = np.concatenate([p[i][1] for p in out])
        rs = sorted(r for r, (a, b) in guesses.items()
                    if (_core.order_key(a), _core.order_key(b)) == (lo, hi)
                    and below <= r < below + vals.size)
        if rs:
            values.update(zip(rs, _core.select_exact(vals.tolist(), ranks=[r - below for r in rs])))
    return values


def _bracket(sorted_values: np.ndarray, cum_weights: np.ndarray, rank: int, slack: float) -> Tuple[float, float]:
    """Values of a weighted sample around a 0-based rank, ``slack`` ranks
    either side."""
    last = len(sorted_values) - 1
    lo = int(np.searchsorted(cum_weights, rank + 1 - slack, side="left"))
    hi = int(np.searchsorted(cum_weights, rank + 1 + slack, side="left"))
    return float(sorted_values[min(lo, last)]), float(sorted_values[min(hi, last)])


def _select(run: _Runner, negate: bool, center: Optional[float], lo_value: float, hi_value: float,
            ranks: Sequence[int], collect_max: int) -> Dict[int, float]:
    """Exact keyed values at the 0-based ranks (all in the same passes)."""
    lo0, hi0 = _core.order_key(lo_value), _core.order_key(hi_value)
    # lo, hi, below, count (−1: not counted yet)
    state: Dict[int, List[int]] = {r: [lo0, hi0, 0, -1] for r in sorted(set(ranks))}
    done: Dict[int, Tuple[int, int, int]] = {}
    for _ in range(64 // BUCKET_BITS + 2):
        active = {r: s for r, s in state.items() if r not in done}
        if not active:
            break
        brackets = sorted({(s[0], s[1]) for s in active.values()})
        specs: List[Tuple[int, int, int, int]] = []
        for lo, hi in brackets:
            span = hi - lo + 1
            shift = max(0, (span - 1).bit_length() - BUCKET_BITS)
            specs.append((lo, hi, shift, ((span - 1) >> shift) + 1))

        def histogram_kernel(x: np.ndarray, specs: List[Tuple[int, int, int, int]] = specs) -> Any:
            return [_core.part_histogram(x, center=center, negate=negate, lo=lo, shift=shift, buckets=nb)
                    for lo, _, shift, nb in specs]

        out = run.map(histogram_kernel)
        for i, (lo, hi, shift, nb) in enumerate(specs):
            below = sum(int(p[i][0]) for p in out)
            counts = np.asarray(np.sum([p[i][1] for p in out], axis=0, dtype=np.uint64), dtype=np.int64)
            cum: np.ndarray = below + np.cumsum(counts)
            for r, s in active.items():
                if (s[0], s[1]) != (lo, hi):
                    continue
                b = int(np.searchsorted(cum, r, side="right"))
                new_lo = lo + (b << shift)
                new_hi = min(hi, new_lo + (1 << shift) - 1)
                s[:] = [new_lo, new_hi, int(cum[b - 1]) if b else below, int(counts[b])]
                if s[3] <= collect_max or new_lo == new_hi:
                    done[r] = (new_lo, new_hi, s[2])
    values: Dict[int, float] = {}
    to_collect = sorted({(lo, hi) for lo, hi, _ in done.values() if lo != hi})
    for r, (lo, hi, _) in done.items():
        if lo == hi:
            values[r] = float(_core.from_order_key(lo))
    if to_collect:
        def collect_kernel(x: np.ndarray) -> Any:
            return [_core.part_collect(x, center=center, negate=negate, lo=lo, hi=hi)
                    for lo, hi in to_collect]

        out = run.map(collect_kernel)
        for i, (lo, hi) in enumerate(to_collect):
            vals = np.concatenate([p[i] for p in out]).tolist()
            rs = sorted(r for r, d in done.items() if (d[0], d[1]) == (lo, hi))
            got = _core.select_exact(vals, ranks=[r - done[r][2] for r in rs])
            values.update(zip(rs, got))
    return values


class _Column:
    """The estimators of one score column, each computed once."""

    def __init__(self, run: _Runner, params: Dict[str, Any], collect_max: int,
                 n_hint: Optional[int] = None) -> None:
        self.run, self.p, self.collect_max = run, params, collect_max
        self.negate = not params["higher_is_outlier"]
        # lo/hi: of the oriented scores. A sketch taken in the census
        # brackets the median and the median deviation, so that one pass
        # each usually settles them (exactly, by selection in the bracket).
        self.n, self.lo, self.hi, self._state, self.sketch = _census(
            run, params, _needs_moments(params),
            _sketch_k(n_hint, collect_max) if _needs_median(params) else 0)
        self.cache: Dict[Any, Any] = {}
        self.m: Optional[Tuple[Any, ...]] = None

    @property
    def state(self) -> Any:
        """The exact-moments state (one more pass if the census skipped it)."""
        if self._state is None:
            self._state = _census(self.run, self.p, True)[3]
        return self._state

    def values(self, ranks: Sequence[int]) -> List[float]:
        got = _select(self.run, self.negate, None, self.lo, self.hi, ranks, self.collect_max)
        return [got[r] for r in ranks]

    def _guessed(self, center: Optional[float], ranks: Sequence[int]) -> Dict[int, float]:
        """Ranks settled by one pass over the sketch's brackets (values, or
        deviations from ``center``); the others are left out."""
        if self.sketch is None:
            return {}
        v, w = self.sketch.weighted_items()
        v = np.asarray(v)
        if center is not None:
            v = np.abs(v - center)
        order = np.argsort(v, kind="stable")
        v, cw = v[order], np.cumsum(np.asarray(w)[order])
        # Deviation counts err by up to twice the sketch's rank error ε
        # (with its 99% confidence); a margin on top.
        slack = 2.5 * self.sketch.normalized_rank_error(pmf=False) * self.n + 2
        if 2 * slack > self.collect_max:  # a bracket would hold too many values to collect
            return {}
        guesses = {r: _bracket(v, cw, r, slack) for r in ranks}
        return _guess_pass(self.run, self.negate, center, guesses, self.collect_max)

    def median(self) -> float:
        if "median" not in self.cache:
            n = self.n
            ranks = [n // 2] if n % 2 else [n // 2 - 1, n // 2]
            got = self._guessed(None, ranks)
            rest = [r for r in ranks if r not in got]
            if rest:
                got.update(zip(rest, self.values(rest)))
            self.cache["median"] = float(_core.median_value([got[r] for r in ranks]))
        return float(self.cache["median"])

    def deviation_values(self, c: float, ranks: Sequence[int]) -> List[float]:
        got = self._guessed(c, ranks)
        rest = [r for r in ranks if r not in got]
        if rest:
            top = max(abs(self.hi - c), abs(c - self.lo))
            got.update(_select(self.run, self.negate, c, 0.0, top, rest, self.collect_max))
        return [got[r] for r in ranks]

    def nmad(self) -> float:
        if "nmad" not in self.cache:
            n, med = self.n, self.median()
            ranks = [n // 2] if n % 2 else [n // 2 - 1, n // 2]
            self.cache["nmad"] = float(_core.median_value(self.deviation_values(med, ranks))) / NMAD_DIVISOR
        return float(self.cache["nmad"])

    def niqr(self) -> float:
        if "niqr" not in self.cache:
            qs = (0.25, 0.75)
            rank_sets = [list(_core.quantile_ranks(self.n, q=q)) for q in qs]
            vals = dict(zip(sorted({r for rs in rank_sets for r in rs}),
                            self.values(sorted({r for rs in rank_sets for r in rs}))))
            q1, q3 = (float(_core.quantile_value(self.n, q=q, values=[vals[r] for r in rs]))
                      for q, rs in zip(qs, rank_sets))
            self.cache["niqr"] = (q3 - q1) / NIQR_DIVISOR
        return float(self.cache["niqr"])

    def mean(self) -> float:
        return float(self.state.results()[0].center)

    def std(self) -> float:
        try:
            return float(self.state.results()[0].scale)
        except ValueError:  # N <= ddof: no spread measurable (as in-memory)
            return 0.0

    def _keep(self) -> Tuple[int, int]:
        k = min(int(np.floor(self.p["trim"] * self.n)), self.n - 1)
        return k, self.n - k

    def trimmed_mean(self) -> float:
        k, keep = self._keep()
        if k == 0:
            return self.mean()
        v = self.values([keep - 1])[0]
        negate = self.negate
        out = self.run.map(lambda x: _core.part_sum_below(x, negate=negate, v=v))
        below = sum(int(o.count) for o in out)
        total = _core.exact_total(out, v=v, ties=keep - below)
        return float(total) / keep

    def trimmed_std(self, c: float) -> float:
        k, keep = self._keep()
        w = self.deviation_values(c, [keep - 1])[0]
        if w == 0.0:
            return 0.0
        e = int(np.clip(np.frexp(w)[1] - 1, -1022, 1022))
        negate = self.negate
        out = self.run.map(lambda x: _core.part_squares_below(x, negate=negate, c=c, w=w, e=e))
        count = sum(int(o[1]) for o in out)
        tie = np.ldexp(w, -e)
        total = float(np.sum([o[0] for o in out])) + (keep - count) * tie * tie
        return float(np.ldexp(np.sqrt(total / keep), e))

    def m_estimate(self, norm: str) -> Tuple[float, float, int, bool]:
        if self.m is not None and self.m[0] == norm:
            return self.m[1]
        mu0 = self.median()
        sigma0 = self.nmad()
        if sigma0 <= 0:
            sigma0 = self.niqr()
        if sigma0 <= 0:
            sigma0 = float(self.state.results()[0].scale) if self.p["ddof"] == 0 else _std0(self)
        if sigma0 <= 0:
            result = (mu0, 0.0, 0, True)
        else:
            negate = self.negate

            def reduce(m: float, sigma: float) -> List[float]:
                out = self.run.map(
                    lambda x: _core.part_m_sums(x, negate=negate, norm=norm, m=m, sigma=sigma))
                return [float(v) for v in np.sum(np.array(out, dtype=np.float64), axis=0)]

            e = _core.m_iterate(reduce, norm=norm, maxiter=self.p["maxiter"], tol=self.p["tol"],
                                n=self.n, mu0=mu0, sigma0=sigma0)
            result = (e.location, e.scale, e.n_iter, e.converged)
        self.m = (norm, result)
        return result


def _std0(col: _Column) -> float:
    spec = _core.GaussianSpec(center="mean", scale="std", negate=col.negate)
    st = _core.StreamingState.from_parts(spec=spec, parts=col.state.parts())
    return float(st.results()[0].scale)


def _gaussian_column(col: _Column, p: Dict[str, Any]) -> Dict[str, Any]:
    fitted: Dict[str, Any] = {}
    center_spec, scale_spec = p["center"], p["scale"]

    def center() -> float:
        if not isinstance(center_spec, str):
            return float(center_spec)
        if center_spec == "mean":
            return col.mean()
        if center_spec == "median":
            return col.median()
        if center_spec == "trimmed_mean":
            return col.trimmed_mean()
        loc, _, n_iter, conv = col.m_estimate(center_spec)
        fitted["n_iter_"], fitted["converged_"] = n_iter, conv
        return loc

    c = center()

    def scale(which: Any) -> float:
        if not isinstance(which, str):
            return float(which)
        if which == "std":
            return col.std()
        if which == "nmad":
            return col.nmad()
        if which == "niqr":
            return col.niqr()
        if which == "trimmed_std":
            return col.trimmed_std(c)
        _, s, n_iter, conv = col.m_estimate(which)
        fitted["n_iter_"], fitted["converged_"] = n_iter, conv
        return s

    # The §5 fallback chain, as the core defines it.
    chain = [scale_spec, *_core.GaussianSpec(center="mean", scale=scale_spec).fallbacks]
    used, s = chain[0], scale(chain[0])
    for fallback in chain[1:]:
        if s > 0:
            break
        warnings.warn(f"{used} is 0; falling back to {fallback}", ZeroScaleWarning, stacklevel=4)
        used, s = fallback, scale(fallback)
    fitted.update(center_=c, scale_=max(s, 0.0), scale_used_=used if isinstance(used, str) else "value")
    return fitted


def _build(scaler: Any, columns: List[Dict[str, Any]], ndim: int, names: Any = None) -> Any:
    """A fitted copy of ``scaler`` (which is left as it is)."""
    return type(scaler)(**scaler.get_params())._set_fitted(columns, ndim, names)


def _names(collection: Any, ndim: int) -> Any:
    """The column names a DataFrame fit records (as scikit-learn would)."""
    if not _is_dataframe(collection) or ndim != 2:
        return None
    from ._input import feature_names

    return feature_names(collection)


def fit(scaler: Any, collection: Any, *, method: str = "exact", k: int = 800,
        collect_max: int = 1 << 20, return_info: bool = False) -> Any:
    """Fits ``scaler`` (a :class:`outprob.GaussianScaler` or
    :class:`outprob.LinearScaler`, unfitted or not; it is not modified) to
    a Dask collection and returns the fitted scaler (and a :class:`FitInfo`
    with ``return_info=True``). See the module docstring for exactness and
    the pass bound.

    >>> import dask.array as da, numpy as np, outprob, outprob.dask
    >>> x = da.from_array(np.arange(10.0), chunks=3)
    >>> s = outprob.dask.fit(outprob.GaussianScaler("median", "nmad"), x)
    >>> float(s.center_), float(s.scale_) == float(outprob.stats.nmad(np.arange(10.0)))
    (4.5, True)
    """
    if method not in ("exact", "sketch"):
        raise ValueError(f"method must be 'exact' or 'sketch', got {method!r}")
    if collect_max < 1:
        raise ValueError("collect_max must be positive")
    p = scaler.get_params()
    p.setdefault("trim", 0.1)
    p.setdefault("ddof", 0)
    p.setdefault("maxiter", 30)
    p.setdefault("tol", 1e-8)
    linear = "center" not in p
    parts, ndim, ncols = _partitions(collection)
    size = collection.shape[0] if isinstance(collection, da.Array) else None
    n_hint = int(size) if size is not None and np.isfinite(size) else None
    info = FitInfo(passes=0, bytes=0, bounds=[])
    columns = []
    if method == "sketch":
        return _fit_sketch(scaler, p, parts, ndim, ncols, k, linear, info, return_info,
                           _names(collection, ndim))
    for j in range(ncols):
        run = _Runner(parts, ndim, j)
        col = _Column(run, p, collect_max, n_hint)
        if linear:
            columns.append({"min_": col.lo, "max_": col.hi})
        else:
            columns.append(_gaussian_column(col, p))
        info["passes"] += run.passes
        info["bytes"] += run.bytes
    out = _build(scaler, columns, ndim, _names(collection, ndim))
    return (out, info) if return_info else out


def _fit_sketch(scaler: Any, p: Dict[str, Any], parts: List[Any], ndim: int, ncols: int, k: int,
                linear: bool, info: FitInfo, return_info: bool, names: Any) -> Any:
    from .streaming import StreamingFit

    kw = dict(scaling="linear" if linear else "gaussian", nan_policy=p["nan_policy"],
              higher_is_outlier=p["higher_is_outlier"], k=k)
    if not linear:
        kw.update(center=p["center"], scale=p["scale"], trim=p["trim"], ddof=p["ddof"],
                  maxiter=p["maxiter"], tol=p["tol"])

    def task(part: Any) -> Any:
        a = as_float_array(np.asarray(part))
        f = StreamingFit(**kw)
        if a.size:
            f.update(a.reshape(-1) if ndim == 1 else a.reshape(a.shape[0], -1))
        return f.to_dict()

    out = list(dask.compute(*[dask.delayed(task)(q) for q in parts]))
    info["passes"], info["bytes"] = 1, len(pickle.dumps(out, protocol=5))
    total = StreamingFit(**kw)
    for d in out:
        total.merge(StreamingFit.from_dict(d))
    results = total.results()
    info["bounds"] = [r._asdict() for r in results]
    # The scaler's own reading of a streaming result: the bounds become
    # fitted attributes as after partial_fit.
    template = type(scaler)(**scaler.get_params())
    columns = [template._stream_column(r, j)[0] for j, r in enumerate(results)]
    fitted = _build(scaler, columns, ndim, names)
    return (fitted, info) if return_info else fitted


def transform(scaler: Any, collection: Any) -> Any:
    """Lazily applies a fitted scaler to every block/partition.

    >>> import dask.array as da, numpy as np, outprob, outprob.dask
    >>> s = outprob.GaussianScaler().fit(np.arange(10.0))
    >>> p = outprob.dask.transform(s, da.from_array(np.arange(10.0), chunks=4))
    >>> bool(np.array_equal(p.compute(), s.transform(np.arange(10.0))))
    True
    """
    if isinstance(collection, da.Array):
        arr = collection if collection.ndim == 1 else collection.rechunk({1: -1})
        dtype = np.float32 if arr.dtype == np.float32 else np.float64

        def apply_block(block: np.ndarray) -> Any:
            # transform aligns blocks that arrive over the wire unaligned.
            return scaler.transform(block)

        return da.map_blocks(apply_block, arr, dtype=dtype)
    if _is_dataframe(collection):
        def apply(df: Any) -> Any:
            named = hasattr(scaler, "feature_names_in_")
            out = scaler.transform(df if named else np.asarray(df))
            return type(df)(out, index=df.index, **({"columns": df.columns} if df.ndim == 2 else {"name": df.name}))
        return collection.map_partitions(apply)
    raise TypeError(f"expected a dask array or dataframe, got {type(collection).__name__}")
