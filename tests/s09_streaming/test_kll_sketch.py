"""The KLL quantile sketch (contract §9, "Quantile sketch (KLL)"): its bytes
are Apache DataSketches' (read, written and merged both ways, the same
quantiles and ranks), DataSketches' rank error formula, untrusted bytes
refused with ``ValueError``, counts that never wrap past 2⁶⁴ − 1, and a
float32 sketch that refuses what float32 cannot hold."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from outprob.streaming import KLLSketch, normalized_rank_error
from ..strategies import examples

datasketches = pytest.importorskip("datasketches")


RANKS = [0.0, 0.001, 0.1, 0.25, 1 / 3, 0.5, 0.7, 0.9, 0.999, 1.0]


def ds_sketch(x, k=200, double=True):
    s = datasketches.kll_doubles_sketch(k) if double else datasketches.kll_floats_sketch(k)
    s.update(np.asarray(x, np.float64 if double else np.float32))
    return s


@pytest.mark.parametrize("double", [True, False])
@pytest.mark.parametrize("n", [0, 1, 2, 150, 5_000, 120_000])
def test_reads_datasketches_bytes(n, double):
    x = np.random.default_rng(n).lognormal(size=n)
    theirs = ds_sketch(x, double=double)
    ours = KLLSketch.deserialize(theirs.serialize(), "float64" if double else "float32")
    assert ours.n == theirs.n and ours.num_retained == theirs.num_retained
    assert ours.serialize() == theirs.serialize()
    if n == 0:
        assert ours.is_empty
        return
    assert ours.get_normalized_rank_error() == pytest.approx(theirs.normalized_rank_error(False), rel=1e-14)
    for inclusive in (True, False):
        for r in RANKS:
            assert ours.quantile(r, inclusive) == theirs.get_quantile(r, inclusive)
        for y in np.quantile(x, [0.0, 0.2, 0.5, 0.9, 1.0]).tolist() + [-1.0, 1e9]:
            y = float(np.float32(y)) if not double else y
            assert ours.rank(y, inclusive) == theirs.get_rank(y, inclusive)
    assert ours.min == theirs.get_min_value() and ours.max == theirs.get_max_value()


@pytest.mark.parametrize("double", [True, False])
def test_datasketches_reads_ours_and_merges(double):
    rng = np.random.default_rng(5)
    x, y = rng.pareto(1.5, 200_000), rng.normal(size=50_000)
    dtype = "float64" if double else "float32"
    ours = KLLSketch(k=200, dtype=dtype)
    ours.update(x)
    cls = datasketches.kll_doubles_sketch if double else datasketches.kll_floats_sketch
    theirs = cls.deserialize(ours.serialize())
    assert theirs.n == ours.n
    for r in RANKS:
        assert theirs.get_quantile(r, True) == ours.quantile(r, True)
    # Merges across implementations, both ways, keep n and the guarantee.
    other = ds_sketch(y, double=double)
    ours.merge(KLLSketch.deserialize(other.serialize(), dtype))
    theirs.merge(other)
    assert ours.n == theirs.n == 250_000
    back = cls.deserialize(ours.serialize())
    back.update(np.asarray([1.0], np.float64 if double else np.float32))
    assert back.n == 250_001
    both = np.sort(np.concatenate([x, y]).astype(dtype))
    eps = ours.get_normalized_rank_error()
    for r in (0.05, 0.5, 0.95):
        q = ours.quantile(r)
        assert abs(np.searchsorted(both, q, side="right") / both.size - r) <= eps


def test_rank_error_formula_and_default_k():
    assert normalized_rank_error(800) <= 0.0035 < normalized_rank_error(780)
    assert normalized_rank_error(200) == pytest.approx(
        datasketches.kll_doubles_sketch.get_normalized_rank_error(200, False), rel=1e-14
    )
    assert KLLSketch().k == 800


@settings(max_examples=examples(200))
@given(st.binary(max_size=300))
def test_garbage_bytes_raise_value_error(data):
    for dtype in ("float64", "float32"):
        try:
            KLLSketch.deserialize(data, dtype)
        except ValueError:
            pass


def test_flipped_bytes_never_crash():
    s = KLLSketch(k=50)
    s.update(np.random.default_rng(1).normal(size=3000))
    good = s.serialize()
    rng = np.random.default_rng(2)
    for _ in range(300):
        b = bytearray(good)
        b[rng.integers(len(b))] ^= int(rng.integers(1, 256))
        try:
            t = KLLSketch.deserialize(bytes(b))
        except ValueError:
            continue
        t.update([1.0, 2.0])
        t.merge(s)
        t.quantile(0.5)


def test_sketch_pickles_and_rejects_bad_arguments():
    s = KLLSketch(k=100, seed=3)
    s.update(np.arange(10_000.0))
    t = pickle.loads(pickle.dumps(s))
    assert t.serialize() == s.serialize()
    s.update(np.arange(5000.0))
    t.update(np.arange(5000.0))
    assert t.serialize() == s.serialize()  # the seed travels with the pickle
    with pytest.raises(ValueError):
        KLLSketch(k=7)
    with pytest.raises(ValueError):
        KLLSketch(dtype="int")
    with pytest.raises(ValueError, match="empty"):
        KLLSketch().quantile(0.5)
    with pytest.raises(ValueError):
        s.quantile(1.5)


def _sketch_of_weight(top):
    """DataSketches' bytes of a valid sketch of 15 items, all at level
    `top` (weight 2^top each): n = 15·2^top (0.94·2^64 for top = 60)."""
    import struct

    from outprob.streaming import KLLSketch

    s = KLLSketch(k=16)
    s.update(np.arange(1.0, 16.0))
    b = bytes(s.serialize())
    assert b[18] == 1 and len(b) == 40 + 15 * 8  # one level of 15 items
    items = [b[40 + 8 * i : 48 + 8 * i] for i in range(15)]
    items.sort(key=lambda v: struct.unpack("<d", v)[0])  # levels above 0 are sorted
    head = bytearray(b[:20])
    struct.pack_into("<Q", head, 8, 15 << top)
    head[18] = top + 1
    for offset in range(2000):  # the free space below the top level
        crafted = bytes(head) + struct.pack(f"<{top + 1}I", *[offset] * (top + 1))
        crafted += b[24:40] + b"".join(items)
        try:
            return KLLSketch.deserialize(crafted)
        except ValueError:
            continue
    raise AssertionError("no offset gives a valid sketch")


def test_sketch_counts_never_wrap():
    big = _sketch_of_weight(60)
    assert big.n == 15 * 2**60 and big.quantile(0.5) == 8.0
    before = big.serialize()
    with pytest.raises(ValueError, match="at most 2\\^64"):
        big.merge(_sketch_of_weight(60))
    assert big.serialize() == before
    half = _sketch_of_weight(59)
    half.merge(_sketch_of_weight(59))  # 2 · 15·2^59 < 2^64: fine
    assert half.n == 15 * 2**60 and half.quantile(0.5) == 8.0


def test_float32_sketch_refuses_scores_beyond_float32():
    from outprob.streaming import KLLSketch

    s = KLLSketch(k=200, dtype="float32")
    s.update(np.array([1.0, 2.0]))
    before = s.serialize()
    for x in ([3.0, 1e300], [-1e39], np.array([3.0, 1e300])):
        with pytest.raises(ValueError, match="float32"):
            s.update(np.asarray(x, dtype=float))
        assert s.serialize() == before  # nothing added
    s.update(np.array([np.inf, 3.4e38]))  # ±inf and the float32 range stay allowed
    assert s.n == 4
