"""The erf of Gaussian scaling (contract §4: p = max(0, erf((s − μ)/(σ√2))))
through the public transform, against ``scipy.special.erf``.

With μ = 0 and σ = 0.7071067811865475, σ√2 rounds to exactly 1, so the
map's z = (s − μ)/(σ√2) is the score itself and the transform returns
max(0, erf(s)): erf of every positive score, and, with
``higher_is_outlier=False`` (s ↦ −s), of every negative score's magnitude.
The kernel is designed for < 1 ulp from the correctly rounded erf (the Rust
tests of `rust/core/src/numeric/erf/` measure it against a correctly
rounded table and libm, including erf's oddness and signed zeros); SciPy's
erf has an error of its own, so the bound here is 4 ulp, computed with
``np.spacing``."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

import outprob

MAX_ULP = 4
#: Piece width of the kernel's piecewise polynomial on [0, 5.92).
PIECE = 0.375
#: Smallest double whose erf rounds to 1.0.
CUT = 5.921587195794507
#: σ with fl(σ·√2) = 1: z = s exactly.
SIGMA = 0.7071067811865475
assert SIGMA * np.sqrt(2.0) == 1.0


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|a − b| in units of the spacing of doubles at the smaller magnitude
    (an upper bound of the number of doubles between a and b); 0 where the
    two are equal (including ±0 and ±inf), inf where only one is NaN."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.abs(a - b) / np.spacing(np.minimum(np.abs(a), np.abs(b)))
    d[a == b] = 0.0
    both_nan = np.isnan(a) & np.isnan(b)
    d[both_nan] = 0.0
    d[np.isnan(a) ^ np.isnan(b)] = np.inf
    return d


def gaussian(x: np.ndarray, higher: bool = True) -> np.ndarray:
    """max(0, erf(±x)) by the public Gaussian transform with z = ±x."""
    s = outprob.GaussianScaler(center=0.0, scale=SIGMA, higher_is_outlier=higher)
    return s.fit(np.array([0.0, 1.0])).transform(x)


def check(x: np.ndarray) -> float:
    x = np.ascontiguousarray(x, dtype=np.float64)
    worst = 0.0
    for sign, higher in ((1.0, True), (-1.0, False)):
        got = gaussian(x, higher)
        assert isinstance(got, np.ndarray)
        assert got.dtype == np.float64
        assert got.shape == x.shape
        if x.size == 0:
            return 0.0
        with np.errstate(invalid="ignore"):
            want = np.maximum(special.erf(sign * x), 0.0)
        want[np.isnan(x)] = np.nan
        d = ulp_distance(got, want)
        i = int(np.argmax(d))
        assert d[i] <= MAX_ULP, (
            f"erf({sign * x[i]!r}) = {got[i]!r}, scipy {want[i]!r}: {d[i]} ulp"
        )
        worst = max(worst, float(d[i]))
    return worst


def test_dense_grid():
    check(np.linspace(-7.0, 7.0, 2_000_001))


def test_random_points():
    rng = np.random.default_rng(20240601)
    check(rng.uniform(-7.0, 7.0, size=1_000_000))
    # magnitudes log-uniform down to 1e-300, both signs
    mag = 10.0 ** rng.uniform(-300.0, np.log10(7.0), size=200_000)
    check(mag * rng.choice([-1.0, 1.0], size=mag.size))
    # random bit patterns: every exponent, NaN and inf included
    bits = rng.integers(0, 2**63, size=200_000, dtype=np.int64)
    x = bits.view(np.float64)
    check(np.where(rng.random(size=x.size) < 0.5, -x, x))


def test_near_zero_and_subnormals():
    tiny = np.geomspace(5e-324, 1.0, 20_000)
    check(np.r_[tiny, -tiny])
    # erf(x) = 2x/√π correctly rounded for the tiniest subnormals
    sub = np.array([5e-324, 1e-323, 1.5e-323, 1e-320, 2.2250738585072014e-308])
    np.testing.assert_array_equal(gaussian(sub), sub * 2.0 / np.sqrt(np.pi))
    np.testing.assert_array_equal(gaussian(-sub, False), sub * 2.0 / np.sqrt(np.pi))


def test_piece_boundaries():
    # 64 doubles on each side of every boundary of the piecewise polynomial
    # and of CUT
    steps = np.arange(-64, 65)
    xs = []
    for b in [PIECE * i for i in range(1, 16)] + [CUT]:
        bits = np.array([b]).view(np.int64)[0]
        xs.append((bits + steps).view(np.float64))
    x = np.concatenate(xs)
    check(np.r_[x, -x])


def test_special_values():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, CUT, -CUT, 30.0, -1e308])
    got = gaussian(x)
    np.testing.assert_array_equal(got[[2, 3, 5, 6, 7, 8]], [1.0, 0.0, 1.0, 0.0, 1.0, 0.0])
    # max(0, erf(±0)) is +0
    assert got[0] == 0.0 and not np.signbit(got[0])
    assert got[1] == 0.0 and not np.signbit(got[1])
    assert np.isnan(got[4])


def test_odd_and_bounded():
    # erf(−x) = −erf(x): the probability of x is that of −x with the
    # orientation reversed, bit for bit
    rng = np.random.default_rng(7)
    x = rng.uniform(0.0, 8.0, size=100_000)
    pos, neg = gaussian(x), gaussian(-x, False)
    np.testing.assert_array_equal(neg, pos)
    assert np.all((pos >= 0.0) & (pos <= 1.0))
    np.testing.assert_array_equal(gaussian(-x), np.zeros_like(x))


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000])
def test_lengths(n):
    # tails of the vector loop
    x = np.linspace(-6.5, 6.5, n)
    check(x)
    one = [gaussian(x[i : i + 1])[0] for i in range(n)]
    np.testing.assert_array_equal(gaussian(x), one)
