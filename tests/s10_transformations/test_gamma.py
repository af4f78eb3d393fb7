"""Gamma scaling (contract §10): GammaScaler against
outprob.reference.gamma_scaling. The incomplete gamma kernel itself is
tested in Rust (`rust/core/src/numeric/gamma/tests.rs`) against SciPy's
values on a wide grid (`scipy_grid.bin`) and mpmath's."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from scipy import special

import outprob
from outprob.reference import gamma_scaling as ref

from ..strategies import score_arrays


# -- GammaScaler against the reference -------------------------------------------


def _fit_ref(x, method):
    s = np.asarray(x, dtype=np.float64)
    if method == "moments":
        return (*ref.fit_gamma_moments(s), "moments")
    return ref.fit_gamma_quantiles(s)


METHODS = st.sampled_from(["moments", "quantiles"])

#: Units of the map's condition in the tolerance below: 1 for the
#: reference's rounding of x = t/θ, 0.3 for the two kernels' own error
#: (SciPy's gammainc against the core's at exactly representable x), and
#: Λ₁₂·1.9 for the table: its 12 Chebyshev nodes are each evaluated at a
#: rounded x (<= 1 unit), their interpolation amplifies that by at most the
#: Lebesgue constant Λ₁₂ = 2.54, and x·p' varies by at most e^0.63 = 1.9
#: across one of its pieces. 1 + 0.3 + 4.84 = 6.1, rounded up.
CONDITION_UNITS = 7.0


def map_condition(s, offset, mean, scale):
    """u·x·∂p/∂x at x = (s + offset)/θ, u = 2⁻⁵³: how far the gamma map
    moves when x is rounded once; 0 at or below the mean (where p = 0).

    ∂p/∂x = f(x)/Q(k, k) with f the Γ(k, 1) density, and
    x·f(x) = xᵏe⁻ˣ/Γ(k) = exp(k·(log1p(δ) − δ))·√(k/2π)/Γ*(k) with
    δ = (x − k)/k = (t − m)/m and Γ*(k) = Γ(k)/(√(2π)·k^(k−½)·e⁻ᵏ): the
    form without the cancelling k·ln x − x − ln Γ(k) (SciPy's gamma.pdf
    underflows to 0 at k = 5e26, where the map is steepest).
    """
    t = np.asarray(s, dtype=np.float64) + offset
    if scale == 0:
        return np.zeros_like(t)
    k = mean / scale
    delta = (t - mean) / mean
    small = np.abs(delta) < 1e-3
    d = np.where(small, delta, 0.0)
    series = -(d**2) / 2 + d**3 / 3 - d**4 / 4 + d**5 / 5  # log1p(δ) − δ, |δ| < 1e-3
    with np.errstate(all="ignore"):
        log1pmx = np.where(small, series, np.log1p(delta) - delta)
        if k >= 10:  # Stirling's series of ln Γ*(k), error < 1e-9 at k = 10
            log_gamma_star = 1 / (12 * k) - 1 / (360 * k**3) + 1 / (1260 * k**5)
        else:
            log_gamma_star = special.gammaln(k) - (k - 0.5) * np.log(k) + k - 0.5 * np.log(2 * np.pi)
        x_density = np.exp(k * log1pmx + 0.5 * np.log(k / (2 * np.pi)) - log_gamma_star)
    q_mean = float(special.gammaincc(k, k))
    return np.where(t > mean, 2.0**-53 * np.nan_to_num(x_density) / q_mean, 0.0)


# Contract §10: 29 negative scores, quartile fit k = 1.46e8. p = 0.2424480660575
# here and 0.2424480660563 in SciPy, 5.1e-12 relative apart: one rounding of
# x = t/θ ≈ k moves p by up to u·x·p' = 1.0e-12 at this k.
@example(
    -np.array([2.91, 2.92, 1.89, 1.09, 0.27, 1.43, 1.52, 0.24, 0.25, 3.6, 2.38, 0.91,
               1.61, 3.51, 3.24, 3.05, 1.46, 1.82, 2.46, 0.29, 2.04, 1.04, 3.18, 0.31,
               2.47, 3.14, 0.88, 3.23, 18000.0]),
    "quantiles",
)
# k = 5.2e26 (spread of a few ulps of 7): one rounding of x moves p by
# 5.8e-5, and SciPy's gamma.pdf, used for that bound, underflowed to 0.
@example(np.array([7.00000000000001] * 3 + [7.0] * 4 + [7.000000000000921, 7.0]), "moments")
# The mean of t = s + 205 is 2.3e-14; mean(s) + 205 rounded it to 0 and the
# fit was refused as having a non-positive mean.
@example(np.array([-204.9999999999999, -205.0, -205.0, -205.0, -205.0]), "moments")
# m = 1.3e-313 and θ = 6.2e-314, subnormal (k ≈ 2.1): the table's 1/m
# overflowed and mapped the upper score to 1 (the exact map gives 0.65).
@example(np.array([2.22507386e-313, 0.0]), "quantiles")
@given(score_arrays(max_size=400), METHODS)
def test_scaler_matches_reference_float64(x, method):
    """Fit and map against the SciPy reference (contract §10).

    The probabilities agree to 1e-12 plus CONDITION_UNITS·u·x·∂p/∂x: the
    gamma map is an erf-like step of width √k in x = t/θ ≈ k, so one
    rounding of x (relative u = 2⁻⁵³) moves p by up to u·x·∂p/∂x ≈
    u·√(k/2π)/Q(k, k), 1e-12 at k = 1.5e8 and 1e-11 at k = 1e10. Neither
    side can do better in double precision: the reference rounds
    x = fl(t/θ) before SciPy's gammainc, and the core's table holds node
    values computed at rounded x. At k <= 1e6 the term is below 1e-13 and
    the tolerance is the plain 1e-12. Against 40-digit mpmath values of the
    exact map at the exact t/θ, both sides stay within 1.5 units of it
    (tests/THOROUGH.md, 2026-12-07).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = outprob.GammaScaler(method).fit(x)
    off, mean, scale, used = _fit_ref(x, method)
    assert g.method_used_ == used
    assert g.offset_ == pytest.approx(off, rel=1e-15, abs=0)
    assert g.mean_ == pytest.approx(mean, rel=1e-9 if used == "quantiles" else 1e-13)
    assert g.scale_ == pytest.approx(scale, rel=1e-9 if used == "quantiles" else 1e-13)
    p = g.transform(x)
    want = ref.gamma_scaling(x, g.offset_, g.mean_, g.scale_)
    assert np.all((p >= 0) & (p <= 1))
    condition = map_condition(x, g.offset_, g.mean_, g.scale_)
    np.testing.assert_array_less(
        np.abs(p - want), 1e-12 + 1e-12 * np.abs(want) + CONDITION_UNITS * condition
    )


@given(score_arrays(max_size=300, dtype=np.float32), METHODS)
def test_scaler_float32_is_native(x, method):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = outprob.GammaScaler(method).fit(x)
        p = g.transform(x)
        g64 = outprob.GammaScaler(method).fit(x.astype(np.float64))
    assert p.dtype == np.float32
    assert (g.mean_, g.scale_) == (g64.mean_, g64.scale_)  # fitted in f64 from exact widening
    np.testing.assert_array_equal(p, g64.transform(x.astype(np.float64)).astype(np.float32))


@given(
    st.lists(st.floats(0, 1e6, allow_nan=False), min_size=2, max_size=60),
    METHODS,
)
def test_probabilities_are_monotone_and_bounded(values, method):
    x = np.sort(np.asarray(values))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = outprob.GammaScaler(method).fit_transform(x)
    assert np.all((p >= 0) & (p <= 1))
    assert np.all(np.diff(p) >= 0)


def test_example_values_and_ties():
    g = outprob.GammaScaler()
    p = g.fit_transform([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(p, ref.gamma_probabilities([1.0, 2.0, 3.0, 4.0]), rtol=1e-14)
    assert (g.shape_, g.mean_) == (pytest.approx(3.75), pytest.approx(2.5))
    ties = np.array([1.0] * 6 + [2.0] * 3 + [9.0])
    for method in ("moments", "quantiles"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = outprob.GammaScaler(method).fit_transform(ties)
        want = ref.gamma_probabilities(ties, method=method)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
        assert got[-1] > 0.5 and got[0] == 0.0


def test_degenerate_inputs_follow_the_documented_rules():
    with pytest.warns(outprob.ZeroScaleWarning) as caught:
        g = outprob.GammaScaler("quantiles").fit([3.0, 3.0, 3.0])
    assert [str(w.message)[:30] for w in caught] == [
        "the quartiles determine no gam", "the scores are constant (zero ",
    ]
    assert (g.scale_, g.shape_, g.method_used_) == (0.0, np.inf, "moments")
    np.testing.assert_array_equal(g.transform([2.0, 3.0, 3.5, np.nan]), [0, 0, 1, np.nan])
    # One score: no variance, the same step.
    with pytest.warns(outprob.ZeroScaleWarning):
        assert outprob.GammaScaler().fit([5.0]).scale_ == 0.0
    # Two distinct values: a gamma exists; the larger one is above the mean.
    p = outprob.GammaScaler().fit_transform([1.0, 2.0])
    np.testing.assert_allclose(p, ref.gamma_probabilities([1.0, 2.0]), rtol=1e-13)
    # Zero IQR: the quartile fit falls back to the moments.
    with pytest.warns(outprob.ZeroScaleWarning, match="fell back"):
        g = outprob.GammaScaler("quantiles").fit([1.0] * 8 + [5.0])
    assert g.method_used_ == "moments"


def test_offsets():
    x = np.array([-3.0, -1.0, 0.0, 2.0, 7.0])
    with pytest.warns(outprob.OutprobWarning, match="shifted"):
        g = outprob.GammaScaler().fit(x)
    assert g.offset_ == 3.0
    np.testing.assert_allclose(g.transform(x), ref.gamma_probabilities(x), rtol=1e-13, atol=1e-15)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = outprob.GammaScaler(offset=5.0).fit(x)
    assert g.offset_ == 5.0
    np.testing.assert_allclose(
        g.transform(x), ref.gamma_probabilities(x, offset=5.0), rtol=1e-13, atol=1e-15
    )
    with pytest.raises(ValueError, match="mean"):
        outprob.GammaScaler(offset=-10.0).fit(x)
    for bad in ("zero", np.inf, None):
        with pytest.raises((ValueError, TypeError)):
            outprob.GammaScaler(offset=bad).fit(x)
    with pytest.raises(ValueError, match="method"):
        outprob.GammaScaler("mle").fit(x)


def test_columns_negation_nan_and_inf():
    rng = np.random.default_rng(3)
    X = rng.gamma([0.5, 2.0, 30.0], 2.0, size=(200, 3))
    X[5, 1] = np.nan
    g = outprob.GammaScaler("quantiles").fit(X)
    P = g.transform(X)
    for j in range(3):
        col = X[:, j]
        off, m, th, _ = ref.fit_gamma_quantiles(col)
        assert g.mean_[j] == pytest.approx(m, rel=1e-9)
        np.testing.assert_allclose(P[:, j], ref.gamma_scaling(col, off, m, th), rtol=1e-8, atol=1e-10)
    assert np.isnan(P[5, 1])
    neg = outprob.GammaScaler(higher_is_outlier=False).fit(-X[:, 0])
    np.testing.assert_allclose(neg.transform(-X[:, 0]), outprob.GammaScaler().fit_transform(X[:, 0]))
    one = outprob.GammaScaler().fit(X[:, 0])
    np.testing.assert_array_equal(one.transform([np.inf, -np.inf]), [1.0, 0.0])


def test_persistence_and_registry():
    x = np.random.default_rng(4).gamma(1.5, 2.0, 300)
    g = outprob.scaler("robust_gamma").fit(x)
    assert isinstance(g, outprob.GammaScaler) and g.method == "quantiles"
    assert outprob.scaler("gamma", higher_is_outlier=False).method == "moments"
    assert set(outprob.VARIANTS) < set(outprob.TRANSFORMATIONS)
    assert {"gamma", "robust_gamma"} <= set(outprob.TRANSFORMATIONS)
    back = outprob.from_dict(g.to_dict())
    assert isinstance(back, outprob.GammaScaler)
    np.testing.assert_array_equal(back.transform(x), g.transform(x))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(g)).transform(x), g.transform(x))
    bad = g.to_dict()
    bad["fitted"]["mean_"] = -1.0
    with pytest.raises(ValueError, match="mean_"):
        outprob.GammaScaler.from_dict(bad)
