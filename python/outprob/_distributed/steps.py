"""The passes of the exact distributed fit (contract §9) as steps that any
engine runs: ``map`` turns scores (a partition, or a batch of one) into a
small partial result, ``combine`` joins two partials of consecutive pieces
(associative, so an engine may fold a partition's batches first), ``pack``
makes a partial fit to travel from a worker and ``unpack`` rebuilds it.
The kernels are the core's (``_core.part_*``); nothing here reads the
scores in Python.
"""

from __future__ import annotations

from typing import Any, Callable, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from .. import _core


def _same(x: Any) -> Any:
    return x


class Step(NamedTuple):
    """One pass over the scores of a column: see the module docstring."""

    map: Callable[[np.ndarray], Any]
    combine: Callable[[Any, Any], Any]
    pack: Callable[[Any], Any] = _same
    unpack: Callable[[Any], Any] = _same


def reduce_packed(step: Step, packed: Sequence[Any]) -> Any:
    """The partials of consecutive partitions, unpacked and combined in order."""
    partials = [step.unpack(p) for p in packed]
    total = partials[0]
    for p in partials[1:]:
        total = step.combine(total, p)
    return total


def pretransformed(step: Step, kind: Optional[str], pre_min: float) -> Step:
    """``step`` on the pretransformed scores ``f(s)`` (contract §10)."""
    if kind is None:
        return step
    inner = step.map

    def map_(x: np.ndarray) -> Any:
        return inner(_core.part_pretransform(x, kind=kind, min=pre_min))

    return step._replace(map=map_)


# -- census ----------------------------------------------------------------------------

#: (len, count, NaN count, first NaN, ±inf count, first ±inf, min, max) of
#: raw scores, then the count, min and max of the scores the fit reads (the
#: pretransformed ones, when there is a pretransform).
Counts = Tuple[int, int, int, int, int, int, float, float]


def counts_of(c: Any) -> Counts:
    return (int(c.len), int(c.count), int(c.nan_count), int(c.nan_first), int(c.inf_count),
            int(c.inf_first), float(c.min), float(c.max))


def join_counts(a: Counts, b: Counts) -> Counts:
    """The counts of two consecutive pieces (first indexes from the start of ``a``)."""
    la, ca, na, nfa, ia, ifa, loa, hia = a
    lb, cb, nb, nfb, ib, ifb, lob, hib = b
    lo = min(loa, lob) if ca and cb else (loa if ca else lob)
    hi = max(hia, hib) if ca and cb else (hia if ca else hib)
    return (la + lb, ca + cb, na + nb, nfa if na else la + nfb, ia + ib,
            ifa if ia else la + ifb, lo, hi)


class CensusPart(NamedTuple):
    raw: Counts
    read: Counts
    sketch: Any  # _core.KllSketch of the oriented scores read, or None
    state: Any  # _core.StreamingState of their exact moments, or None


def moments_spec(negate: bool, ddof: int) -> Any:
    """The spec of an exact-moments state (made where it is used: a spec
    does not pickle, kernels do)."""
    return _core.GaussianSpec(center="mean", scale="std", ddof=ddof, negate=negate)


def census_step(negate: bool, sketch_k: int, moments_ddof: Optional[int],
                pre: Optional[str] = None, pre_min: float = 0.0) -> Step:
    """Counts, extremes and §5 census of the raw scores; of the scores the
    fit reads (``f(s)`` with a pretransform) their count and extremes, a
    KLL sketch of the oriented ones (``sketch_k`` > 0) and their exact
    moments (``moments_ddof`` not None)."""

    def map_(x: np.ndarray) -> CensusPart:
        raw = counts_of(_core.part_census(x))
        y = x if pre is None else _core.part_pretransform(x, kind=pre, min=pre_min)
        read = raw if pre is None else counts_of(_core.part_census(y))
        sketch = state = None
        if not read[4]:  # ±inf: refused by the planner, nothing to sketch
            if sketch_k:
                sketch = _core.KllSketch(k=sketch_k, double=True, seed=0)
                sketch.update(-y if negate else y)
            if moments_ddof is not None:
                state = _core.StreamingState(spec=moments_spec(negate, moments_ddof), k=8, seed=0,
                                             columns=1)
                state.update(y)
        return CensusPart(raw, read, sketch, state)

    def combine(a: CensusPart, b: CensusPart) -> CensusPart:
        for mine, theirs in ((a.sketch, b.sketch), (a.state, b.state)):
            if mine is not None and theirs is not None:
                mine.merge(theirs)
        return CensusPart(join_counts(a.raw, b.raw), join_counts(a.read, b.read),
                          a.sketch if a.sketch is not None else b.sketch,
                          a.state if a.state is not None else b.state)

    def pack(p: CensusPart) -> Tuple[Any, ...]:
        return (p.raw, p.read, None if p.sketch is None else p.sketch.serialize(),
                None if p.state is None else p.state.parts())

    def unpack(t: Tuple[Any, ...]) -> CensusPart:
        raw, read, sk, parts = t
        sketch = None if sk is None else _core.KllSketch.deserialize(bytes(sk), double=True, seed=0)
        state = None if parts is None else _core.StreamingState.from_parts(
            spec=moments_spec(negate, moments_ddof or 0), parts=parts)
        return CensusPart(tuple(raw), tuple(read), sketch, state)  # type: ignore[arg-type]

    return Step(map_, combine, pack, unpack)


# -- order statistics ------------------------------------------------------------------

def _add_histograms(a: List[Tuple[int, np.ndarray]], b: List[Tuple[int, np.ndarray]]) -> Any:
    return [(ba + bb, ca + cb) for (ba, ca), (bb, cb) in zip(a, b)]


def histogram_step(center: Optional[float], negate: bool,
                   specs: Sequence[Tuple[int, int, int, int]]) -> Step:
    """Per bracket ``(lo, hi, shift, buckets)``: the count of keys below
    ``lo`` and the bucket counts of ``(key − lo) >> shift``."""
    specs = list(specs)

    def map_(x: np.ndarray) -> Any:
        out = []
        for lo, _, shift, nb in specs:
            below, counts = _core.part_histogram(x, center=center, negate=negate, lo=lo,
                                                 shift=shift, buckets=nb)
            out.append((int(below), np.asarray(counts, dtype=np.uint64)))
        return out

    return Step(map_, _add_histograms)


def _concat_lists(a: List[List[np.ndarray]], b: List[List[np.ndarray]]) -> Any:
    return [pa + pb for pa, pb in zip(a, b)]


def collect_step(center: Optional[float], negate: bool,
                 brackets: Sequence[Tuple[int, int]]) -> Step:
    """Per key bracket ``[lo, hi]``: the keyed values in it."""
    brackets = list(brackets)

    def map_(x: np.ndarray) -> Any:
        return [[_core.part_collect(x, center=center, negate=negate, lo=lo, hi=hi)]
                for lo, hi in brackets]

    return Step(map_, _concat_lists)


def bracket_step(center: Optional[float], negate: bool,
                 brackets: Sequence[Tuple[int, int]]) -> Step:
    """Per key bracket: the count of keys below it and the values in it."""
    brackets = list(brackets)

    def map_(x: np.ndarray) -> Any:
        return [(int(_core.part_histogram(x, center=center, negate=negate, lo=lo, shift=63,
                                          buckets=1)[0]),
                 [_core.part_collect(x, center=center, negate=negate, lo=lo, hi=hi)])
                for lo, hi in brackets]

    def combine(a: Any, b: Any) -> Any:
        return [(ba + bb, va + vb) for (ba, va), (bb, vb) in zip(a, b)]

    return Step(map_, combine)


# -- sums --------------------------------------------------------------------------------

def _concat(a: List[Any], b: List[Any]) -> List[Any]:
    return a + b


def sum_below_step(negate: bool, v: float) -> Step:
    """Exact sums (as limbs) of the oriented scores below ``v``."""
    return Step(lambda x: [_core.part_sum_below(x, negate=negate, v=v)], _concat)


def squares_below_step(negate: bool, c: float, w: float, e: int) -> Step:
    """Σ((±x − c)·2^-e)² and counts over ``|±x − c| < w``, per piece (added
    up with ``math.fsum`` by the caller)."""
    return Step(lambda x: [_core.part_squares_below(x, negate=negate, c=c, w=w, e=e)], _concat)


def m_sums_step(negate: bool, norm: str, m: float, sigma: float) -> Step:
    """The sums of one step of Huber's proposal 2 at ``(m, σ)``, per piece."""
    return Step(lambda x: [_core.part_m_sums(x, negate=negate, norm=norm, m=m, sigma=sigma)],
                _concat)
