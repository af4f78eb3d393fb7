"""Sigmoid and mixture-model scaling (contract §10) against the NumPy EM of
outprob.reference.transformations: float64 and float32, ties, tiny N,
degenerate inputs, extremes, 2-D, serialisation."""

from __future__ import annotations

import json
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

import outprob
import outprob.reference.transformations as rt

from ..strategies import float_dtypes, score_arrays

pytestmark = pytest.mark.filterwarnings("ignore::outprob.OutprobWarning")


def grid(x: np.ndarray) -> np.ndarray:
    lo, hi = float(np.min(x)), float(np.max(x))
    w = (hi - lo) or 1.0
    return np.r_[np.linspace(lo - w, hi + w, 41), x[:50].astype(np.float64), np.nan]


# 100 negative scores whose last EM step labels every score an outlier: all
# targets are 101/102, so the M-step's optimum is a = 0, b = ln 101. Newton
# reached a = 1.04e-7 (|g_a| = 1.006e-7, just above 1e-9·n); the full step
# to a = 2e-14 decreases the cross-entropy by 5.6e-15, less than the
# rounding of its sum, and the core halved it (a = 5.2e-8) where the
# reference took it.
ALL_OUTLIERS_IN_THE_END = np.array([
    -0.4722287545705039, -0.7407327427607363, -0.3830633372019113, -0.9913909641091743,
    -11.248555249239253, -1.4790309473476404, -0.7272155621472125, -0.4613312197469209,
    -1.3422613692947598, -0.4218238821350137, -0.4893229206448291, -8.953659259118503,
    -2.1832457120284334, -0.1681011643639915, -13.483245916800952, -2.424643341346324,
    -3.80935807356534, -3.9243085355757796, -1.896027982448394, -1.3961659668882536,
    -0.18883997870223954, -0.981653700866715, -1.9335324335616892, -1.4238976831738903,
    -0.43654224955226645, -0.7425440937647096, -1.6621156157443873, -0.19226438752802127,
    -0.5657159924102595, -2.025787691164371, -0.11338598769607076, -0.2668996154677377,
    -3.9630963675968327, -0.7940597490431248, -0.3453318678909514, -0.39416310558459927,
    -1.0685666702425007, -1.206829315387032, -1.344527597314213, -0.49413024625311447,
    -0.20287170493606824, -0.5774402832312829, -0.7305521171930095, -1.3356066663666337,
    -2.0473853162320363, -1.5716148950408295, -1.7489678447478825, -0.1903057642074454,
    -0.34769265255120224, -0.5719431339813873, -1.0399826078971137, -0.42885676165647857,
    -0.36581939943230407, -0.7027664067030341, -1.4183621080915385, -1.2154682217540205,
    -0.13864295757581072, -2.116760015718908, -3.1957187832458405, -0.7074075360017136,
    -2.807857940532437, -2.04776916917531, -0.6276213464514853, -1.031947891218224,
    -5.069255628275617, -1.6624896322664133, -0.3164962573520535, -0.947039293356039,
    -1.574491018248287, -1.0014650636784008, -0.481791455985399, -14.843773466181709,
    -0.3503522380828598, -1.27874521810897, -0.588266756132691, -0.4789833757453157,
    -0.5224069511098532, -3.009705602595832, -0.4293091061026313, -1.415920613299467,
    -0.88541423208968, -1.7983669139980485, -2.1893763009846685, -1.397199628174843,
    -0.17059459889678966, -4.68308407987138, -1.3232315861188342, -0.6611612949671606,
    -0.3927373159552526, -0.25081115167679024, -0.9905026690973274, -7.0730125043913965,
    -0.9549352311868826, -2.3365231870988965, -0.6915205570498135, -0.6605247117439838,
    -2.008776523899361, -0.4220427803273357, -0.1887739073995812, -0.4781899892489974,
])


# Contract §10: constant scores whose rounded mean misses their value by an
# ulp (5·4.9999999884893356e-107 / 5, 3·0.1 / 3) are constant: d = 0, no EM.
@example(x=np.full(5, 4.9999999884893356e-107))
@example(x=np.full(3, 0.1))
# Deviations of 3.8e-157: their squares are subnormal (the reference's scale
# was 7e-12 off until it rescaled them).
@example(x=np.array([7.557485294109596e-157, 0.0]))
@example(x=ALL_OUTLIERS_IN_THE_END)
# Subnormal scores: halving them to guard against overflow rounded the mean's
# last bit away and left σ an ulp (6.7e-11 relative) off.
@example(x=np.array([0.0, 29813184990 * 5e-324]))
@example(x=np.array([0.0, 29813184991 * 5e-324]))
@given(x=float_dtypes().flatmap(lambda d: score_arrays(max_size=400, dtype=d)))
def test_sigmoid_matches_the_numpy_em(x):
    s = outprob.SigmoidScaler().fit(x)
    want = rt.fit_sigmoid(x.astype(np.float64)[~np.isnan(x)])
    assert (s.n_iter_, s.converged_) == (want["n_iter"], want["converged"])
    assert_allclose([s.center_, s.scale_], [want["center"], want["scale"]], rtol=1e-12)
    assert_allclose([s.a_, s.b_], [want["a"], want["b"]], rtol=1e-6, atol=1e-9)
    q = grid(x)
    got = s.transform(q.astype(x.dtype))
    assert got.dtype == x.dtype
    assert_allclose(got, rt.sigmoid_scaling(want, q.astype(x.dtype).astype(np.float64)), atol=1e-6)
    assert np.isnan(got[-1])
    finite = got[:-1]
    assert np.all((finite >= 0) & (finite <= 1))
    if s.a_ >= 0:  # monotone
        assert np.all(np.diff(s.transform(np.sort(q[:-1])).astype(np.float64)) >= 0)


def test_a_newton_step_below_the_rounding_of_the_cross_entropy_is_taken():
    """Contract §10, sigmoid M-step: a trial point that meets the stopping
    test is accepted without the decrease test. Here every score ends up an
    outlier, so the last M-step's optimum is known in closed form: the
    targets are all t = 101/102 and Σz = 0, so a = 0 and b = logit(t) =
    ln 101. The full Newton step from a = 1.04e-7 reaches it."""
    s = outprob.SigmoidScaler().fit(ALL_OUTLIERS_IN_THE_END)
    assert s.converged_
    z = (ALL_OUTLIERS_IN_THE_END - s.center_) / s.scale_
    assert np.all(s.a_ * z + s.b_ > 0)  # every score an outlier
    assert abs(s.a_) < 1e-12
    assert s.b_ == pytest.approx(np.log(101.0), rel=1e-14)


def test_sigmoid_degenerate_and_documented_cases():
    with pytest.warns(outprob.ZeroScaleWarning):
        flat = outprob.SigmoidScaler().fit([2.0, 2.0, 2.0])
    assert_array_equal(flat.transform([-1e300, 2.0, 1e300, np.inf]), [0.5] * 4)
    two = outprob.SigmoidScaler().fit([0.0, 0.0, 0.0, 1.0])
    p = two.transform([0.0, 1.0])
    assert p[1] > 0.5 > p[0]
    s = outprob.SigmoidScaler().fit([0.0, 1.0, 2.0, 3.0, 30.0])
    assert_array_equal(s.transform([np.inf, -np.inf]), [1.0, 0.0])
    one = outprob.SigmoidScaler().fit([7.0])
    assert one.transform(7.0) == 0.5


@pytest.mark.parametrize("factor, shift", [(1e-300, 0.0), (1e300, 0.0), (1.0, 1e6), (3.0, -7.0)])
def test_sigmoid_is_affine_invariant(factor, shift):
    rng = np.random.default_rng(0)
    x = np.r_[rng.normal(size=300), rng.normal(8, 1, size=15)]
    base = outprob.SigmoidScaler().fit(x)
    moved = outprob.SigmoidScaler().fit(x * factor + shift)
    assert_allclose(moved.transform(x * factor + shift), base.transform(x), atol=1e-9)


def nonneg_continuous(dtype):
    return score_arrays(max_size=400, dtype=dtype, kinds=("normal", "lognormal", "pareto")).map(np.abs)


# Contract §10. α → 1: the inlier weight 1 − α ≈ 1e-9 decides p near 1, and
# λ = Σ(1 − t)/Σ(1 − t)u must not be formed as n − Σt (rounding only).
@example(x=np.array([4.58749326, 5.95375785, 4.19976115, 4.6180551, 2.48244655,
                     5.17422559, 3.94461014, 3.44520142, 5.62702915, 6.26656632]))
# The same limit ran the reference into 0/0 (every 1 − t rounded to 0).
@example(x=np.array([4.0, 6.61, 3.37, 5.98, 5.16]))
# σ at its floor 1e-8: tol·σ = 1e-16 is below an ulp of μ ≈ 1.1, so the test
# on μ alone was decided by μ's last bit (α 1e-22 on one side, 1/6 on the other).
@example(x=np.array([11.732, 9.412, 10.813, 11.054, 10.548, 10.152]))
@given(x=float_dtypes().flatmap(nonneg_continuous))
def test_mixture_matches_the_numpy_em(x):
    m = outprob.MixtureScaler().fit(x)
    want = rt.fit_mixture(x.astype(np.float64))
    assert_allclose(m.scale_, want["scale"], rtol=1e-15)
    if 1e-3 < want["alpha"] < 1 - 1e-3 and want["converged"]:
        # A vanishing component's parameters are unidentifiable (and its
        # convergence test ill-conditioned); the probabilities below are not.
        assert m.n_iter_ == want["n_iter"]
        got = [m.alpha_, m.mu_, m.sigma_, m.lambda_]
        assert_allclose(got, [want[k] for k in ("alpha", "mu", "sigma", "lam")], rtol=1e-6)
    q = np.abs(grid(x))
    p = m.transform(q.astype(x.dtype))
    assert p.dtype == x.dtype
    assert_allclose(p, rt.mixture_scaling(want, q.astype(x.dtype).astype(np.float64)), atol=1e-6)
    assert np.isnan(p[-1]) and np.all((p[:-1] >= 0) & (p[:-1] <= 1))


def test_mixture_finds_a_separated_outlier_clump():
    rng = np.random.default_rng(5)
    x = np.r_[rng.exponential(size=500), rng.normal(9, 0.3, size=50)]
    m = outprob.MixtureScaler().fit(x)
    assert m.converged_
    p = m.transform(np.array([0.2, 1.0, 9.0]))
    assert p[0] < 0.01 and p[2] > 0.99
    assert m.transform(np.array([np.inf, 1e300]))[0] == 0.0  # not monotone: the tails
    big = outprob.MixtureScaler().fit(x * 1e300)
    assert_allclose(big.transform(x * 1e300), m.transform(x), atol=1e-9)


def test_mixture_degenerate_inputs():
    with pytest.warns(outprob.ZeroScaleWarning):
        flat = outprob.MixtureScaler().fit([3.0, 3.0])
    assert_array_equal(flat.transform([0.0, 3.0, 9.0]), [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="non-negative"):
        outprob.MixtureScaler().fit([-1.0, 2.0, 3.0])
    two = outprob.MixtureScaler().fit([1.0, 1.0, 1.0, 5.0])  # two distinct values: no crash
    p = two.transform([1.0, 5.0])
    assert np.all((p >= 0) & (p <= 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ties = outprob.MixtureScaler().fit(np.repeat([0.0, 1.0, 2.0, 10.0], [50, 30, 10, 3]))
    assert np.all(np.isfinite(ties.transform(np.arange(12.0))))


@pytest.mark.parametrize("name", ["sigmoid", "mixture"])
@pytest.mark.parametrize("shape", [(60,), (60, 3)])
def test_columns_serialisation_and_orientation(name, shape):
    rng = np.random.default_rng(2)
    x = rng.lognormal(size=shape).astype(np.float32)
    s = outprob.scaler(name).fit(x)
    p = s.transform(x)
    if len(shape) == 2:
        for j in range(shape[1]):
            assert_array_equal(p[:, j], outprob.scaler(name).fit(x[:, j]).transform(x[:, j]))
    data = json.loads(json.dumps(s.to_dict()))
    for t in (type(s).from_dict(data), pickle.loads(pickle.dumps(s))):
        assert_array_equal(t.transform(x), p)
    if name == "sigmoid":
        neg = outprob.scaler(name, higher_is_outlier=False).fit(-x)
        assert_array_equal(neg.transform(-x), p)
    bad = dict(data, fitted={**data["fitted"], "sigma_" if name == "mixture" else "scale_": -1.0})
    if len(shape) == 1:
        with pytest.raises(ValueError):
            type(s).from_dict(bad)
    with pytest.raises(ValueError):
        outprob.scaler(name, maxiter=0).fit(x)


def test_the_registry_names_them():
    assert type(outprob.scaler("sigmoid")) is outprob.SigmoidScaler
    assert type(outprob.scaler("mixture", tol=1e-6)) is outprob.MixtureScaler
