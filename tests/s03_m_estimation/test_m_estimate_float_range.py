"""Joint M-estimation across the float range (contract §3; §5, "The ends of
the float range": §3 runs on the scores times 2⁻ᵏ): the estimate is
equivariant under scaling by a power of two, subnormal scores converge as
their scaled copy does, scores near 1e308 converge, and the bucketed path
for large n agrees with the reference over a span of 600 decades."""

from __future__ import annotations

import math

import numpy as np
import pytest

from outprob import stats

pytestmark = pytest.mark.filterwarnings("ignore::outprob.OutprobWarning")


@pytest.mark.parametrize("norm", ["huber", "tukey"])
def test_m_estimate_is_equivariant_under_powers_of_two(norm):
    import warnings

    small = np.ldexp([-9e307, 4e307, -8e307, 9e307, 4e307], -1000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = stats.m_estimate(small, norm)
        for k in (1000, 500, -20):  # 2^1000: the data near 1e308
            got = stats.m_estimate(np.ldexp(small, k), norm)
            assert (got.location, got.scale) == (math.ldexp(base.location, k), math.ldexp(base.scale, k))
            assert (got.n_iter, got.converged) == (base.n_iter, base.converged)


def test_huber_near_the_top_of_the_range_converges_like_its_scaled_copy():
    x = np.array([-9e307, 4e307, -8e307, 9e307, 4e307])
    got = stats.m_estimate(x, "huber")
    assert got.converged and got.n_iter > 0


@pytest.mark.parametrize("norm", ["huber", "tukey"])
def test_large_n_path_agrees_with_small_n_path_over_a_wide_span(norm):
    import warnings

    import outprob.reference as ref

    rng = np.random.default_rng(0)
    n = 20_000  # ≥ 16384: the bucketed path
    x = np.exp(rng.uniform(np.log(1e-300), np.log(1e300), n)) * rng.choice([-1, 1], n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = stats.m_estimate(x, norm), ref.m_estimate(x, norm)
    assert got.location == pytest.approx(want.location, rel=1e-9, abs=1e-12 * want.scale)
    assert got.scale == pytest.approx(want.scale, rel=1e-9)
    assert got.n_iter == want.n_iter


SUBNORMAL = np.array([5e-324, 1e-323, 3e-323, 2e-322, 1.5e-323])


@pytest.mark.parametrize("norm", ["huber", "tukey"])
def test_subnormal_scores_converge_like_their_scaled_copy(norm):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sub = stats.m_estimate(SUBNORMAL, norm, maxiter=1000)
        big = stats.m_estimate(np.ldexp(SUBNORMAL, 1074), norm, maxiter=1000)
    assert (sub.n_iter, sub.converged) == (big.n_iter, big.converged)
    assert sub.n_iter < 1000
    assert sub.location == pytest.approx(math.ldexp(big.location, -1074), abs=5e-324)
