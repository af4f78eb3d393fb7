"""The exact distributed fit at the ends of the double range (contract §9,
"Exact distributed fit": the partition sums in the in-memory fit's units;
§5's refusals): ``outprob.dask.fit`` equals the in-memory fit on scores
scaled by any power of two — Huber and Tukey near 1e±200 and on subnormal
scores, the trimmed mean near 1e307 — and a scale beyond the double range
is refused with §5's message. The oracle is the in-memory fit, which is
equivariant under powers of two (§3), checked here against the unscaled
fit too. Dask's synchronous scheduler runs the same passes as a cluster
(``test_dask.py`` runs them on a LocalCluster)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

import outprob  # noqa: E402
import outprob.dask as odask  # noqa: E402


def quiet(f, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args, **kw)


def make(name):
    if name == "trimmed_mean_trimmed_std":
        return outprob.GaussianScaler(center="trimmed_mean", scale="trimmed_std")
    return outprob.scaler(name)


def dask_fit(name, x, chunks, collect_max=1 << 20):
    with dask.config.set(scheduler="synchronous"):
        return quiet(odask.fit, make(name), da.from_array(x, chunks=chunks),
                     collect_max=collect_max)


def in_memory(name, x):
    return quiet(make(name).fit, x)


def assert_same_fit(got, want, name):
    """§9's tolerances: M-estimates 1e-12 relative, the SD 1e-15, every
    other estimate bit for bit."""
    assert got.scale_used_ == want.scale_used_, name
    if want.scale_used_ in ("huber", "tukey"):
        assert got.center_ == pytest.approx(want.center_, rel=1e-12, abs=1e-12 * want.scale_)
        assert got.scale_ == pytest.approx(want.scale_, rel=1e-12), name
        return
    assert got.center_ == want.center_, name
    if want.scale_used_ in ("std", "trimmed_std"):
        assert got.scale_ == pytest.approx(want.scale_, rel=1e-15, abs=0), name
    else:
        assert got.scale_ == want.scale_, name


Z = np.random.default_rng(0).normal(size=400)


@pytest.mark.parametrize("name", ["huber", "tukey"])
@pytest.mark.parametrize("magnitude", [1e200, 1e160, 1e-160, 1e-200, 2.0**-1060])
def test_m_estimates_at_large_and_tiny_magnitudes(name, magnitude):
    """Their partition sums of squares overflowed (1e200: σ 0.643× the
    in-memory σ) or underflowed (1e-160: 3.6e-5 relative); in the fit's
    units (σ₀ in [1, 2)) they do neither, gathered or reduced."""
    x = Z * magnitude
    want = in_memory(name, x)
    if magnitude >= 1e-300:  # normal scores: the in-memory fit is equivariant
        unit = in_memory(name, Z)
        assert want.scale_ / magnitude == pytest.approx(unit.scale_, rel=1e-12)
    for collect_max in (1 << 20, 50):  # the column gathered; sums reduced per step
        assert_same_fit(dask_fit(name, x, 100, collect_max), want, name)


@pytest.mark.parametrize("name", ["trimmed_mean_std", "trimmed_mean_nmad", "huber", "tukey"])
@pytest.mark.parametrize("scores", ["constant", "near", "spread"])
def test_near_the_top_of_the_range_as_in_memory(name, scores):
    """The kept sum of a trimmed mean beyond 1.8e308 gave inf ("fitted
    parameters must be finite numbers"); its exact mean is finite, as in
    memory (the contract's example: ``full(20, 1e307)``)."""
    x = {"constant": np.full(20, 1e307), "near": 1e307 + Z * 1e305, "spread": Z * 1e307}[scores]
    assert_same_fit(dask_fit(name, x, 7), in_memory(name, x), name)


@pytest.mark.parametrize("name", ["huber", "tukey", "trimmed_mean_nmad"])
def test_a_scale_beyond_the_double_range_gets_the_in_memory_message(name):
    """§5: the message of the in-memory fit, not a complaint about the
    fitted attributes."""
    x = np.r_[np.full(10, -1.7e308), np.zeros(5), np.full(10, 1.7e308)]
    with pytest.raises(ValueError) as want:
        in_memory(name, x)
    with pytest.raises(ValueError) as got:
        dask_fit(name, x, 4)
    assert "exceeds the double range" in str(got.value)
    assert str(got.value) == str(want.value)


# One score 2⁴⁰ starting scales away: its Huber residual overflows, and its
# term in the location step is t·σ (the limit), not 0.
@example(base=[0.0, 1.0, 2.2250738585e-313], ties=0, k=0, name="huber", chunks=1, gathered=False)
@example(base=[0.0, 1.0, 2.2250738585e-313], ties=0, k=0, name="huber", chunks=2, gathered=True)
# −0 and +0 are one value to the extremes and two order keys to the brackets.
@example(base=[0.0, 1.0, -0.0], ties=0, k=0, name="huber", chunks=1, gathered=True)
@example(base=[-0.0, 0.0, -1.0], ties=2, k=0, name="trimmed_mean_nmad", chunks=1, gathered=False)
@given(
    base=st.lists(st.floats(-8, 8, allow_nan=False), min_size=3, max_size=80),
    ties=st.integers(0, 20),
    k=st.integers(-1074, 1019),
    name=st.sampled_from(["huber", "tukey", "trimmed_mean_std", "trimmed_mean_nmad",
                          "trimmed_mean_trimmed_std", "mean_std"]),
    chunks=st.integers(1, 60),
    gathered=st.booleans(),
)
def test_partition_fits_equal_in_memory_fits_across_the_range(base, ties, k, name, chunks,
                                                              gathered):
    """Distributed extremes: scores times 2^k for any k of the double
    range, cut into any chunks — the exact distributed fit is the
    in-memory fit of the same scores, or both refuse them alike."""
    x = np.ldexp(np.r_[base, np.full(ties, base[0])], k)
    try:
        want = in_memory(name, x)
    except ValueError as exc:
        with pytest.raises(ValueError) as got:
            dask_fit(name, x, chunks, 1 << 20 if gathered else 10)
        assert str(got.value) == str(exc)
        return
    assert_same_fit(dask_fit(name, x, chunks, 1 << 20 if gathered else 10), want, name)
