"""The estimators of one score column of a distributed fit (contract §9),
read from passes an engine runs (:mod:`outprob._distributed.planner`)."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import _core
from .engine import Engine
from .steps import (
    Step,
    bracket_step,
    collect_step,
    histogram_step,
    m_sums_step,
    moments_spec,
    pretransformed,
    squares_below_step,
    sum_below_step,
)
from ..stats import NIQR_DIVISOR, NMAD_DIVISOR


BUCKET_BITS = 12


def _sketch_k(n_hint: Optional[int], collect_max: int) -> int:
    """k of the census's bracketing sketch: a bracket of 5εn ranks should
    hold at most ``collect_max`` values (k in [800, 20000]; 2000 when the
    length is unknown; 0 — no sketch — when even k = 20000 is too coarse)."""
    if not n_hint:
        return 2000
    eps = collect_max / (6.0 * n_hint)  # 5εn + a margin for rounding k
    k = (2.296 / eps) ** (1 / 0.9723) if eps > 0 else float("inf")
    return 0 if k > 20000 else int(max(k, 800))


def check_census(raw: Tuple[Any, ...], nan_policy: str, where: str = "") -> None:
    """contract §5 over a whole column, with the in-memory fit's messages
    (a first index is named when the engine knows one)."""
    length, count, nan_c, nan_f, inf_c, inf_f = raw[:6]
    if inf_c:
        at = f" (first at index {inf_f})" if inf_f is not None else ""
        raise ValueError(
            f"scores{where} contain {inf_c} infinite value{'s' if inf_c != 1 else ''}{at}; "
            "fitting needs finite scores: drop or clip them before fitting"
        )
    if nan_c and nan_policy == "raise":
        at = f" (first at index {nan_f})" if nan_f is not None else ""
        raise ValueError(
            f"scores{where} contain {nan_c} NaN value{'s' if nan_c != 1 else ''}{at} and "
            "nan_policy='raise'; use nan_policy='omit' to ignore them"
        )
    if count == 0:
        raise ValueError("cannot fit on an empty array of scores" if length == 0 else
                         f"all {length} scores{where} are NaN: nothing is left to fit after "
                         "omitting NaN")


def _bracket(sorted_values: np.ndarray, cum_weights: np.ndarray, rank: int, slack: float) -> Tuple[float, float]:
    """Values of a weighted sample around a 0-based rank, ``slack`` ranks
    either side."""
    last = len(sorted_values) - 1
    lo = int(np.searchsorted(cum_weights, rank + 1 - slack, side="left"))
    hi = int(np.searchsorted(cum_weights, rank + 1 + slack, side="left"))
    return float(sorted_values[min(lo, last)]), float(sorted_values[min(hi, last)])


class ColumnEstimators:
    """The estimators of one score column, each computed once, from passes
    the engine runs."""

    def __init__(self, engine: Engine, p: Dict[str, Any], collect_max: int,
                 n_hint: Optional[int] = None, sketch_k: Optional[int] = None,
                 moments: Optional[bool] = None) -> None:
        self.engine, self.p, self.collect_max = engine, p, collect_max
        self.negate = p["negate"]
        self.pre, self.pre_min = p["pretransform"], 0.0
        center, scale = p.get("center"), p.get("scale")
        if sketch_k is None:
            median = center in ("median", "huber", "tukey") or scale in ("nmad", "huber", "tukey")
            sketch_k = _sketch_k(n_hint, collect_max) if median else 0
        if moments is None:
            moments = center == "mean" or (scale == "std" and isinstance(center, str))
        if self.pre == "sqrt":  # y = √max(0, s − min) needs the raw minimum first
            part = engine.census(self.negate, 0, None, None, 0.0)
            check_census(part.raw, p["nan_policy"])
            self.pre_min = part.raw[6]
        part = engine.census(self.negate, sketch_k, p.get("ddof", 0) if moments else None,
                             self.pre, self.pre_min)
        check_census(part.raw, p["nan_policy"])
        if self.pre == "minus_log" and part.raw[6] <= 0:
            raise ValueError("pretransform: 'minus_log' needs positive scores to fit, got scores "
                             f"<= 0 (the smallest is {part.raw[6]})")
        self.n, lo, hi = part.read[1], part.read[6], part.read[7]
        # lo/hi: of the oriented scores the fit reads.
        self.lo, self.hi = (-hi, -lo) if self.negate else (lo, hi)
        self._state, self.sketch = part.state, part.sketch
        self.cache: Dict[Any, Any] = {}

    def run(self, step: Step) -> Any:
        return self.engine.run(pretransformed(step, self.pre, self.pre_min))

    @property
    def state(self) -> Any:
        """The exact-moments state (one more pass if the census skipped it)."""
        if self._state is None:
            self._state = self.engine.census(self.negate, 0, self.p.get("ddof", 0), self.pre,
                                             self.pre_min).state
        return self._state

    # -- order statistics ---------------------------------------------------------------
    def _select(self, center: Optional[float], lo_value: float, hi_value: float,
                ranks: Sequence[int]) -> Dict[int, float]:
        """Exact keyed values at the 0-based ranks (all in the same passes)."""
        negate = self.negate
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
            out = self.run(histogram_step(center, negate, specs))
            for (lo, hi, shift, _), (below, hist) in zip(specs, out):
                counts = np.asarray(hist, dtype=np.int64)
                cum: np.ndarray = below + np.cumsum(counts)
                for r, s in active.items():
                    if (s[0], s[1]) != (lo, hi):
                        continue
                    b = int(np.searchsorted(cum, r, side="right"))
                    new_lo = lo + (b << shift)
                    new_hi = min(hi, new_lo + (1 << shift) - 1)
                    s[:] = [new_lo, new_hi, int(cum[b - 1]) if b else below, int(counts[b])]
                    if s[3] <= self.collect_max or new_lo == new_hi:
                        done[r] = (new_lo, new_hi, s[2])
        values: Dict[int, float] = {}
        for r, (lo, hi, _) in done.items():
            if lo == hi:
                values[r] = float(_core.from_order_key(lo))
        to_collect = sorted({(lo, hi) for lo, hi, _ in done.values() if lo != hi})
        if to_collect:
            out = self.run(collect_step(center, negate, to_collect))
            for (lo, hi), pieces in zip(to_collect, out):
                vals = np.concatenate(pieces).tolist()
                rs = sorted(r for r, d in done.items() if (d[0], d[1]) == (lo, hi))
                got = _core.select_exact(vals, ranks=[r - done[r][2] for r in rs])
                values.update(zip(rs, got))
        return values

    def _guessed(self, center: Optional[float], ranks: Sequence[int]) -> Dict[int, float]:
        """Ranks settled by one pass over the sketch's brackets (values, or
        deviations from ``center``); the others are left out (a bad guess
        only costs the usual passes)."""
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
        keys = {r: (_core.order_key(a), _core.order_key(b)) for r, (a, b) in guesses.items()}
        brackets = sorted(set(keys.values()))
        out = self.run(bracket_step(center, self.negate, brackets))
        values: Dict[int, float] = {}
        for bracket, (below, pieces) in zip(brackets, out):
            vals = np.concatenate(pieces)
            rs = sorted(r for r, k in keys.items() if k == bracket and below <= r < below + vals.size)
            if rs:
                values.update(zip(rs, _core.select_exact(vals.tolist(), ranks=[r - below for r in rs])))
        return values

    def values(self, ranks: Sequence[int]) -> List[float]:
        got = self._select(None, self.lo, self.hi, ranks)
        return [got[r] for r in ranks]

    def deviation_values(self, c: float, ranks: Sequence[int]) -> List[float]:
        got = self._guessed(c, ranks)
        rest = [r for r in ranks if r not in got]
        if rest:
            top = max(abs(self.hi - c), abs(c - self.lo))
            got.update(self._select(c, 0.0, top, rest))
        return [got[r] for r in ranks]

    def _middle(self) -> List[int]:
        n = self.n
        return [n // 2] if n % 2 else [n // 2 - 1, n // 2]

    # -- estimators (contract §1–§3) ----------------------------------------------------
    def median(self) -> float:
        if "median" not in self.cache:
            ranks = self._middle()
            got = self._guessed(None, ranks)
            rest = [r for r in ranks if r not in got]
            if rest:
                got.update(zip(rest, self.values(rest)))
            self.cache["median"] = float(_core.median_value([got[r] for r in ranks]))
        return float(self.cache["median"])

    def nmad(self, about: Optional[float] = None) -> float:
        """median |±y − c| / Φ⁻¹(¾), c the median (or a fixed center)."""
        key = ("nmad", about)
        if key not in self.cache:
            c = self.median() if about is None else about
            dev = _core.median_value(self.deviation_values(c, self._middle()))
            self.cache[key] = float(dev) / NMAD_DIVISOR
        return float(self.cache[key])

    def niqr(self) -> float:
        if "niqr" not in self.cache:
            rank_sets = [list(_core.quantile_ranks(self.n, q=q)) for q in (0.25, 0.75)]
            wanted = sorted({r for rs in rank_sets for r in rs})
            vals = dict(zip(wanted, self.values(wanted)))
            q1, q3 = (float(_core.quantile_value(self.n, q=q, values=[vals[r] for r in rs]))
                      for q, rs in zip((0.25, 0.75), rank_sets))
            self.cache["niqr"] = (q3 - q1) / NIQR_DIVISOR
        return float(self.cache["niqr"])

    def mean(self) -> float:
        return float(self.state.results()[0].center)

    def std(self) -> float:
        try:
            return float(self.state.results()[0].scale)
        except ValueError:  # N <= ddof: no spread measurable (as in-memory)
            return 0.0

    def _squares(self, c: float, w: float, e: int) -> Tuple[float, int]:
        out = self.run(squares_below_step(self.negate, c, w, e))
        return math.fsum(float(s) for s, _ in out), sum(int(k) for _, k in out)

    def rms_about(self, c: float) -> float:
        """√(Σ(±y − c)²/(N − ddof)): the SD about a fixed center (ELKI)."""
        ddof = int(self.p["ddof"])
        if self.n <= ddof:
            return 0.0
        # In units of 2^k near the largest deviation: no overflow anywhere.
        half = max(self.hi * 0.5 - c * 0.5, c * 0.5 - self.lo * 0.5)
        k = int(np.clip(np.frexp(half)[1], -1022, 1022)) if half > 0 and math.isfinite(half) else 0
        total, _ = self._squares(c, math.inf, k)
        return float(np.ldexp(math.sqrt(total / (self.n - ddof)), k))

    def _keep(self) -> Tuple[int, int]:
        k = min(int(np.floor(self.p["trim"] * self.n)), self.n - 1)
        return k, self.n - k

    def trimmed_mean(self) -> float:
        k, keep = self._keep()
        if k == 0:
            return self.mean()
        v = self.values([keep - 1])[0]
        parts = self.run(sum_below_step(self.negate, v))
        below = sum(int(o.count) for o in parts)
        return float(_core.exact_total(parts, v=v, ties=keep - below)) / keep

    def trimmed_std(self, c: float) -> float:
        _, keep = self._keep()
        w = self.deviation_values(c, [keep - 1])[0]
        if w == 0.0:
            return 0.0
        e = int(np.clip(np.frexp(w)[1] - 1, -1022, 1022))
        total, count = self._squares(c, w, e)
        tie = np.ldexp(w, -e)
        total += (keep - count) * tie * tie
        return float(np.ldexp(np.sqrt(total / keep), e))

    def m_estimate(self, norm: str) -> Tuple[float, float, int, bool]:
        """Huber's proposal 2 (§3) with the norm's location, started from
        the median and nMAD: each location step's sums reduced in one pass,
        or — when the column fits in ``collect_max`` values — the column
        gathered in one pass and the sums taken on the client."""
        key = ("m", norm)
        if key in self.cache:
            return self.cache[key]  # type: ignore[no-any-return]
        mu0, sigma0 = self.median(), self.nmad()
        if sigma0 <= 0:
            sigma0 = self.niqr()
        if sigma0 <= 0:
            sigma0 = self.std() if self.p["ddof"] == 0 else self._std0()
        if sigma0 <= 0:
            self.cache[key] = (mu0, 0.0, 0, True)
            return self.cache[key]  # type: ignore[no-any-return]
        negate = self.negate
        if self.n <= self.collect_max:
            keys = (_core.order_key(self.lo), _core.order_key(self.hi))
            (pieces,) = self.run(collect_step(None, negate, [keys]))
            oriented = np.concatenate(pieces)

            def reduce(m: float, sigma: float) -> List[float]:
                return list(_core.part_m_sums(oriented, negate=False, norm=norm, m=m, sigma=sigma))
        else:
            def reduce(m: float, sigma: float) -> List[float]:
                out = self.run(m_sums_step(negate, norm, m, sigma))
                return [math.fsum(float(o[i]) for o in out) for i in range(6)]

        e = _core.m_iterate(reduce, norm=norm, maxiter=self.p["maxiter"], tol=self.p["tol"],
                            n=self.n, mu0=mu0, sigma0=sigma0)
        self.cache[key] = (e.location, e.scale, e.n_iter, e.converged)
        return self.cache[key]  # type: ignore[no-any-return]

    def _std0(self) -> float:
        """The SD with ddof = 0 (the M-estimation's last starting scale)."""
        st = _core.StreamingState.from_parts(spec=moments_spec(self.negate, 0),
                                             parts=self.state.parts())
        return float(st.results()[0].scale)
