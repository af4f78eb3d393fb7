"""Huber's proposal 2 (contract §3): the core against the NumPy reference and
against statsmodels wherever statsmodels converges."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from statsmodels.robust.norms import HuberT, TukeyBiweight
from statsmodels.robust.scale import Huber

import outprob
import outprob.reference as ref
from outprob import stats

from ..strategies import score_arrays

# Contract tolerance for M-estimates. A location is compared in units of the
# scale (location and scale are equivariant together): |Δμ| <= 1e-9·(|μ| + σ).
RTOL = 1e-9
NORMS = ["huber", "tukey"]


def assert_m_close(got, want, rtol=RTOL):
    loc, scale = want[0], want[1]
    assert abs(got[0] - loc) <= rtol * (abs(loc) + scale), (got, want)
    assert abs(got[1] - scale) <= rtol * scale, (got, want)


def resolved(x: np.ndarray, est) -> bool:
    """Whether the data resolve the M-estimate: one ulp of μ must be a
    negligible fraction of σ (below 1e-6·|μ| it is not, and the iterates of
    any two implementations part at the ulp level)."""
    return est.scale > 1e-6 * max(abs(est.location), float(np.max(np.abs(x))))


@pytest.mark.parametrize("norm", NORMS)
@given(x=score_arrays(max_size=1500))
@pytest.mark.filterwarnings("ignore::outprob.ConvergenceWarning")
def test_m_estimate_equals_reference(norm, x):
    want = ref.m_estimate(x, norm)
    assume(resolved(x, want) or want.scale == 0.0)
    got = stats.m_estimate(x, norm)
    assert_m_close(got, want)
    assert got.converged == want.converged
    if want.converged:
        assert abs(got.n_iter - want.n_iter) <= 1


@pytest.mark.filterwarnings("ignore::outprob.ConvergenceWarning")
def test_an_overflowing_huber_residual_counts_as_its_clipped_psi():
    """§3: one score 2⁴⁰ starting scales away; its residual overflows and
    its location term is t_H·σ, not 0. The 30th, unconverged iterate of the
    reference equals the in-memory one (it stayed at the mean of the other
    two scores, 1.1e-313, while the fit went to 6.6e-309)."""
    x = np.array([0.0, 1.0, 2.2250738585e-313])
    want = ref.m_estimate(x, "huber")
    assert_m_close(stats.m_estimate(x, "huber"), want)
    assert want.location > 1e-309


@pytest.mark.parametrize("norm", NORMS)
@given(x=score_arrays(max_size=800, dtype=np.float32))
@pytest.mark.filterwarnings("ignore::outprob.ConvergenceWarning")
def test_m_estimate_float32_equals_reference(norm, x):
    # float32 scores are estimated in float64: same numbers as the
    # reference on the widened scores.
    want = ref.m_estimate(x.astype(np.float64), norm)
    assume(resolved(x, want) or want.scale == 0.0)
    assert_m_close(stats.m_estimate(x, norm), want)


@st.composite
def contaminated_normal(draw):
    """Data statsmodels handles: a normal bulk (n >= 10) plus a few far
    outliers, at a random location and scale."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(10, 2000))
    x = rng.normal(size=n)
    k = draw(st.integers(0, max(0, n // 10)))
    x[:k] += rng.uniform(5, 50, size=k)
    return x * 10.0 ** draw(st.integers(-100, 100)) + draw(st.floats(-1e3, 1e3))


@pytest.mark.parametrize("norm", NORMS)
@given(x=contaminated_normal())
def test_m_estimate_equals_statsmodels(norm, x):
    sm_norm = HuberT() if norm == "huber" else TukeyBiweight()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            loc, scale = Huber(norm=sm_norm)(x)
    except ValueError:  # statsmodels did not converge within maxiter
        assume(False)
    loc, scale = float(loc), float(scale)
    assume(np.isfinite(loc) and scale > 1e-6 * max(abs(loc), float(np.max(np.abs(x)))))
    got = stats.m_estimate(x, norm)
    assert got.converged
    assert_m_close(got, (loc, scale))


def test_statsmodels_docstring_example():
    chem = [2.20, 2.20, 2.4, 2.4, 2.5, 2.7, 2.8, 2.9, 3.03, 3.03, 3.10, 3.37, 3.4, 3.4,
            3.4, 3.5, 3.6, 3.7, 3.7, 3.7, 3.7, 3.77, 5.28, 28.95]  # fmt: skip
    for norm, sm_norm in (("huber", HuberT()), ("tukey", TukeyBiweight())):
        loc, scale = Huber(norm=sm_norm)(np.array(chem))
        assert_m_close(stats.m_estimate(chem, norm), (float(loc), float(scale)))


def test_gamma_equals_statsmodels():
    assert ref.gamma(1.5) == pytest.approx(Huber().gamma, rel=1e-15)


def test_non_convergence_is_reported_not_raised():
    rng = np.random.default_rng(0)
    x = np.r_[rng.lognormal(size=1000), rng.uniform(20, 50, 30)]
    with pytest.raises(ValueError):  # statsmodels raises here ...
        Huber(norm=HuberT())(x)
    with pytest.warns(outprob.ConvergenceWarning, match="did not converge"):
        est = stats.m_estimate(x, "huber")  # ... we report
    assert not est.converged and est.n_iter == 30
    assert np.isfinite(est.location) and est.scale > 0
    want = ref.m_estimate(x, "huber")
    assert_m_close(est, want)
    # With room to converge, both agree with statsmodels.
    done = stats.m_estimate(x, "huber", maxiter=100)
    assert done.converged
    loc, scale = Huber(norm=HuberT(), maxiter=100)(x)
    assert_m_close(done, (float(loc), float(scale)))


def test_constant_and_tied_scores():
    assert stats.m_estimate([3.0] * 7, "tukey") == (3.0, 0.0, 0, True)
    # More than half tie: the nMAD is zero, the nIQR starts the iteration.
    est = stats.m_estimate([1.0] * 6 + [2.0, 3.0, 4.0, 5.0], "huber")
    assert est.scale > 0 and np.isfinite(est.location)
    assert_m_close(est, ref.m_estimate([1.0] * 6 + [2.0, 3.0, 4.0, 5.0], "huber"))


def test_parameters():
    x = [1.0, 2.0, 3.0, 4.0, 50.0]
    tight = stats.m_estimate(x, "huber", c=1.0, tuning=1.0, maxiter=50, tol=1e-10)
    assert_m_close(tight, ref.m_estimate(x, "huber", c=1.0, tuning=1.0, maxiter=50, tol=1e-10))
    with pytest.raises(ValueError, match="norm"):
        stats.m_estimate(x, "cauchy")
    with pytest.raises(ValueError, match="maxiter"):
        stats.m_estimate(x, maxiter=0)
    with pytest.raises(ValueError, match="tol"):
        stats.m_estimate(x, tol=-1.0)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("maxiter", [1, 30])
@pytest.mark.filterwarnings("ignore::outprob.ConvergenceWarning")
def test_subnormal_scale_next_to_the_largest_double(norm, maxiter):
    # σ₀ is subnormal and the largest score near 1.8e308 keeps the iteration's
    # scaling from lifting it, so 1/σ overflows: the steps must divide by σ
    # (from the fuzz corpus: a product with 1/σ gave NaN).
    x = np.array([-8.155000000000001, -8.155000000000001, -8.690840987797e-311] + [0.0] * 10
                 + [-0.75, 12.75, 1.7e308, -30.75, 3.25] + [0.0] * 4 + [-23.5, 0.0])
    want = ref.m_estimate(x, norm, maxiter=maxiter)
    got = stats.m_estimate(x, norm, maxiter=maxiter)
    assert np.isfinite(got.location) and got.scale > 0
    assert_m_close(got, want)
    assert got.converged == want.converged


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [5_000, 20_000, 40_000, 120_000])
@pytest.mark.parametrize("kind", ["lognormal", "normal", "ties", "negated"])
def test_large_fits_equal_reference(norm, n, kind):
    # Both sides of the sorted/bucketed threshold (`bucketed_min`), with
    # the bulk about μ₀ summed apart, against the NumPy reference.
    rng = np.random.default_rng(n)
    if kind == "normal":
        x = rng.normal(3.0, 2.0, n)
    elif kind == "ties":
        x = np.round(rng.lognormal(0.0, 0.7, n), 1)
    else:
        x = rng.lognormal(0.0, 1.0, n)
        x[: n // 30] = 10.0 + rng.lognormal(2.0, 1.0, n // 30)
        if kind == "negated":
            x = -x
    want = ref.m_estimate(x, norm, maxiter=100)
    got = stats.m_estimate(x, norm, maxiter=100)
    assert want.converged
    assert_m_close(got, want)
    assert got.converged
    assert abs(got.n_iter - want.n_iter) <= 1


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [20_000, 300_000])
def test_large_fits_of_float32_and_nan_equal_reference(norm, n):
    # Contract §5 on the bucketed path, with the far tails set apart (20 000)
    # and not (300 000 >= 2^18): float32 scores are estimated in float64,
    # NaN is omitted.
    rng = np.random.default_rng(n + 1)
    x = rng.lognormal(0.0, 1.0, n)
    x[: n // 30] = 10.0 + rng.lognormal(2.0, 1.0, n // 30)
    x32 = x.astype(np.float32)
    assert_m_close(
        stats.m_estimate(x32, norm, maxiter=100),
        ref.m_estimate(x32.astype(np.float64), norm, maxiter=100),
    )
    with_nan = x.copy()
    with_nan[::50] = np.nan
    assert_m_close(
        stats.m_estimate(with_nan, norm, maxiter=100),
        ref.m_estimate(with_nan[~np.isnan(with_nan)], norm, maxiter=100),
    )
