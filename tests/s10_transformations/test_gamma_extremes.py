"""Gamma scaling at the edges of its parameters (contract §10, "Gamma
scaling"; §7, stored state is untrusted): a fit of subnormal shape maps
as SciPy's ``gammaincc`` does, without a panic, and a stored fit with a
scale of 1e308 maps as SciPy does."""

from __future__ import annotations

import numpy as np

import outprob


def test_gamma_of_a_subnormal_shape_matches_scipy():
    from scipy import special

    s = outprob.GammaScaler(offset=1e-155).fit([-1.0, 1.0])
    k = s.mean_ / s.scale_
    assert 0 < k < np.finfo(float).tiny  # subnormal
    x = np.array([-1.0, 0.0, 0.5, 1.0, 1e10])
    t = (x + s.offset_) / s.scale_
    with np.errstate(invalid="ignore"):
        q = special.gammaincc(k, np.maximum(t, 0.0)) / special.gammaincc(k, k)
    want = np.where(t <= k, 0.0, 1 - q)  # at or below the mean: 0 (contract §10)
    np.testing.assert_allclose(s.transform(x), want, rtol=1e-12, atol=0)


def test_gamma_from_untrusted_json_with_a_huge_scale_maps():
    from scipy import special

    d = outprob.GammaScaler().fit(np.random.default_rng(0).gamma(2.0, size=100)).to_dict()
    d["fitted"]["scale_"] = 1e308
    s = outprob.from_dict(d)
    x = np.array([1.0, 2.0, 1e300])
    k, t = s.mean_ / s.scale_, (x + s.offset_) / s.scale_
    want = np.maximum(0.0, 1 - special.gammaincc(k, t) / special.gammaincc(k, k))
    np.testing.assert_allclose(s.transform(x), want, rtol=1e-12, atol=1e-300)
