"""The named variants and the Gaussian and linear maps (contract §4): every
variant of ``outprob.VARIANTS`` against the reference, float64 and float32,
on the fitted scores and on new ones; any center/scale pair, fixed numbers
included (μ = 1 for LOF); the maps are monotone and bounded; the table
of the 12 variants."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from numpy.testing import assert_allclose

import outprob
import outprob.reference as ref

from ..strategies import score_arrays

M_VARIANTS = {"huber", "tukey"}
TINY = float(np.finfo(np.float64).tiny)  # below it relative precision is undefined
pytestmark = pytest.mark.filterwarnings("ignore::outprob.OutprobWarning")


def reference_fit(name, x):
    pair = ref.VARIANTS[name]
    return ref.fit_gaussian(x, *pair)


def assert_probabilities_close(name, got, want, dtype=np.float64, fitted=None):
    if dtype == np.float32:
        assert got.dtype == np.float32
        # Computed in float64, rounded once to float32.
        assert_allclose(got, want.astype(np.float32), rtol=2 * np.finfo(np.float32).eps, atol=0)
    elif name in M_VARIANTS:
        # μ, σ agree to 1e-9 (in units of σ), so p to 1e-9 absolute.
        assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    else:
        assert_allclose(got, want, rtol=1e-12, atol=TINY)


@pytest.mark.parametrize("name", list(ref.VARIANTS))
@given(x=score_arrays(max_size=2000), new=score_arrays(max_size=50))
def test_variant_equals_reference(name, x, new):
    if name in M_VARIANTS:
        mu, sigma, _ = reference_fit(name, x)
        assume(sigma == 0 or sigma > 1e-6 * max(abs(mu), float(np.max(np.abs(x)))))
    s = outprob.scaler(name)
    p = s.fit_transform(x)
    assert_probabilities_close(name, p, ref.variant_probabilities(name, x))
    # New scores, including ones outside the fitted range.
    q = s.transform(new)
    assert_probabilities_close(name, q, ref.variant_probabilities(name, x, new))
    assert np.all((p >= 0) & (p <= 1)) and np.all((q >= 0) & (q <= 1))


@pytest.mark.parametrize("name", [n for n in ref.VARIANTS if n not in M_VARIANTS])
@given(x=score_arrays(max_size=2000, dtype=np.float32))
def test_variant_float32_equals_reference(name, x):
    p = outprob.scaler(name).fit_transform(x)
    want = ref.variant_probabilities(name, x.astype(np.float64))
    assert_probabilities_close(name, p, want, dtype=np.float32)


@pytest.mark.parametrize("name", sorted(M_VARIANTS))
@given(x=score_arrays(max_size=800, dtype=np.float32))
def test_m_variant_float32_equals_reference(name, x):
    mu, sigma, _ = reference_fit(name, x.astype(np.float64))
    assume(sigma == 0 or sigma > 1e-6 * max(abs(mu), float(np.max(np.abs(x)))))
    s = outprob.scaler(name)
    p = s.fit_transform(x)
    assert p.dtype == np.float32
    assert_allclose(s.center_, mu, rtol=0, atol=1e-9 * (abs(mu) + sigma))
    # The transform itself, given the fitted numbers, is float32-exact.
    want = ref.gaussian_scaling(x.astype(np.float64), s.center_, s.scale_).astype(np.float32)
    assert_allclose(p, want, rtol=2 * np.finfo(np.float32).eps, atol=0)


CENTERS = ["mean", "median", "trimmed_mean", "huber", "tukey", 0.5]
SCALES = ["std", "nmad", "niqr", "trimmed_std", "huber", "tukey", 2.0]


@pytest.mark.parametrize("center", CENTERS)
@pytest.mark.parametrize("scale", SCALES)
def test_any_center_scale_pair(center, scale):
    rng = np.random.default_rng(7)
    x = np.r_[rng.lognormal(size=500), rng.uniform(30, 60, size=12)]
    s = outprob.GaussianScaler(center, scale, trim=0.2, ddof=1, maxiter=200)
    p = s.fit_transform(x)
    mu = ref.fit_center(x, center, trim=0.2, maxiter=200)
    sigma = ref.fit_scale(x, scale, mu, trim=0.2, ddof=1, maxiter=200)
    assert_allclose(s.center_, mu, rtol=1e-9)
    assert_allclose(s.scale_, sigma, rtol=1e-9)
    assert_allclose(p, ref.gaussian_scaling(x, mu, sigma), rtol=1e-9, atol=1e-12)


def test_monotone_and_bounded():
    x = np.linspace(-5, 20, 1001)
    for name in outprob.VARIANTS:
        p = outprob.scaler(name).fit_transform(x)
        assert np.all(np.diff(p) >= 0), name
        assert p.min() >= 0 and p.max() <= 1


def test_variants_table():
    assert len(outprob.VARIANTS) == 12
    assert set(outprob.VARIANTS) == set(ref.VARIANTS)
    for name, v in outprob.VARIANTS.items():
        s = outprob.scaler(name)
        if v.center is None:
            assert isinstance(s, outprob.LinearScaler)
        else:
            assert isinstance(s, outprob.GaussianScaler)
            assert (s.center, s.scale) == (v.center, v.scale) == ref.VARIANTS[name]
    with pytest.raises(TypeError):
        outprob.VARIANTS["x"] = outprob.VARIANTS["huber"]  # read-only
    with pytest.raises(ValueError, match="mean_nmad"):
        outprob.scaler("mean_nmda")


def test_fixed_center_for_lof():
    # Kriegel et al. fix μ = 1 for LOF; σ is still fitted.
    lof = np.array([0.95, 1.0, 1.02, 0.98, 1.05, 3.0])
    s = outprob.GaussianScaler(center=1.0, scale="std").fit(lof)
    assert s.center_ == 1.0
    assert_allclose(s.scale_, ref.std(lof), rtol=1e-12)
    with pytest.raises(ValueError, match="positive"):
        outprob.GaussianScaler(scale=0.0).fit(lof)
    with pytest.raises(ValueError, match="center"):
        outprob.GaussianScaler(center="average").fit(lof)
    with pytest.raises(TypeError, match="center"):
        outprob.GaussianScaler(center=None).fit(lof)
