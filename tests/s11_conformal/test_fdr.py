"""outprob.select (contract §11) against statsmodels' multipletests (BH,
BY; Storey's BH at level α/π̂₀) and the sort-based reference; FDR control
of BH on conformal p-values, measured."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.testing import assert_array_equal
from statsmodels.stats.multitest import multipletests

import outprob
import outprob.reference.conformal as rc


@given(
    p=st.lists(st.integers(0, 60), max_size=300).map(lambda g: np.array(g, dtype=float) / 60)
    | st.lists(st.floats(0, 1), min_size=1, max_size=300).map(np.array),
    alpha=st.sampled_from([0.01, 0.05, 0.1, 0.2, 0.5]),
)
def test_bh_and_by_equal_statsmodels(p, alpha):
    for method, name in (("bh", "fdr_bh"), ("by", "fdr_by")):
        sel = outprob.select(p, alpha, method)
        if p.size:
            want = multipletests(p, alpha=alpha, method=name)[0]
            assert_array_equal(sel.mask, want)
        assert_array_equal(sel.mask, rc.select(p, alpha, method))
        assert_array_equal(sel.indices, np.flatnonzero(sel.mask))
        if len(sel):
            assert sel.threshold >= p[sel.mask].max()
            assert not np.any((p <= sel.threshold) & ~sel.mask)


@given(
    p=st.lists(st.integers(0, 40), min_size=1, max_size=300).map(lambda g: np.array(g, dtype=float) / 40),
    alpha=st.sampled_from([0.05, 0.1, 0.2]),
    lam=st.sampled_from([0.3, 0.5, 0.7]),
)
def test_storey_is_bh_at_alpha_over_pi0(p, alpha, lam):
    sel = outprob.select(p, alpha, "storey", lam=lam)
    pi0 = (1 + np.sum(p > lam)) / (p.size * (1 - lam))
    assert sel.null_proportion == pytest.approx(pi0, rel=1e-15)
    assert_array_equal(sel.mask, multipletests(p, alpha=alpha / pi0, method="fdr_bh")[0])
    assert_array_equal(sel.mask, rc.select(p, alpha, "storey", lam))


def test_bad_input():
    with pytest.raises(ValueError, match="not a probability"):
        outprob.select([0.1, np.nan], 0.1)
    with pytest.raises(ValueError, match="not a probability"):
        outprob.select([0.1, 1.2], 0.1)
    with pytest.raises(ValueError, match="alpha"):
        outprob.select([0.1], 0.0)
    with pytest.raises(ValueError, match="method"):
        outprob.select([0.1], 0.1, "holm")
    with pytest.raises(ValueError, match="1-D"):
        outprob.select([[0.1]], 0.1)
    assert len(outprob.select([], 0.1)) == 0


def test_bh_on_conformal_pvalues_controls_the_fdr():
    """Realised FDR averaged over 400 batches is at most alpha (plus the
    binomial-scale noise of the average: mean FDP's standard error is at
    most 0.5/sqrt(400) = 0.025, the margin is 3 of those)."""
    rng = np.random.default_rng(0)
    alpha, fdp, power = 0.1, [], []
    for _ in range(400):
        cal = rng.normal(size=200)
        x = np.r_[rng.normal(size=90), rng.normal(3.0, 1.0, size=10)]
        sel = outprob.select(outprob.ConformalScaler().fit(cal).pvalues(x), alpha)
        fdp.append(np.sum(sel.indices < 90) / max(1, len(sel)))
        power.append(np.sum(sel.indices >= 90) / 10)
    assert np.mean(fdp) <= alpha + 0.075
    assert np.mean(power) > 0.2  # not trivially valid by selecting nothing
