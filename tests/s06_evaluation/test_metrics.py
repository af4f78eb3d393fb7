"""Evaluation measures (contract §6): the Rust core against the NumPy reference,
independent oracles (scikit-learn, SciPy), properties and input checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss

import outprob
from outprob import metrics
from outprob.reference import metrics as ref

SCHEMES = list(metrics.SCHEMES)
STRATA = [None, "outlier", "inlier", "both"]
RTOL = 1e-12


@st.composite
def labelled_probabilities(draw, min_size=1, max_size=300, dtype=np.float64):
    """(y, p): probabilities with heavy ties at exactly 0 and 1 (Gaussian
    scaling produces many exact zeros), few-valued and tiny ones; labels of
    one or both classes."""
    n = draw(st.integers(min_size, max(min_size, 12)) | st.integers(min_size, max_size))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(["mixed", "uniform", "few", "tiny", "drawn"]))
    if kind == "drawn":
        p = np.array(draw(st.lists(st.floats(0, 1, width=32 if dtype == np.float32 else 64), min_size=n, max_size=n)))
    elif kind == "uniform":
        p = rng.random(n)
    elif kind == "few":
        p = rng.choice(rng.random(draw(st.integers(1, 4))), size=n)
    elif kind == "tiny":
        p = rng.random(n) * 10.0 ** -draw(st.integers(1, 300))
    else:
        p = rng.random(n)
        u = rng.random(n)
        p[u < draw(st.floats(0, 0.9))] = 0.0
        p[u > draw(st.floats(0.6, 1.0))] = 1.0
    y_kind = draw(st.sampled_from(["random", "follow", "all0", "all1"]))
    if y_kind == "random":
        y = rng.random(n) < draw(st.floats(0, 1))
    elif y_kind == "follow":  # labels that agree with p, as good probabilities do
        y = rng.random(n) < p
    else:
        y = np.full(n, y_kind == "all1")
    return y.astype(int), p.astype(dtype)


def _defined(y, stratify):
    need = {"outlier": [1], "inlier": [0], "both": [0, 1]}.get(stratify, [])
    return all((y == c).any() for c in need)


@pytest.mark.parametrize("stratify", STRATA)
@given(yp=labelled_probabilities())
def test_brier_and_sharpness_equal_reference(stratify, yp):
    y, p = yp
    for ours, theirs in ((metrics.brier_score, ref.brier_score), (metrics.sharpness_error, ref.sharpness_error)):
        if _defined(y, stratify):
            assert_allclose(ours(y, p, stratify=stratify), theirs(y, p, stratify), rtol=RTOL, atol=0)
        else:
            with pytest.raises(ValueError, match="no (outlier|inlier)s"):
                ours(y, p, stratify=stratify)


@pytest.mark.parametrize("scheme", SCHEMES)
@given(yp=labelled_probabilities(), ks=st.lists(st.integers(1, 25), min_size=1, max_size=2))
def test_binned_measures_equal_reference(scheme, yp, ks):
    y, p = yp
    for k in ks:
        assert_array_equal(metrics.bin_edges(p, k, scheme), ref.bin_edges(p, k, scheme))
    edges = [ref.bin_edges(p, k, scheme) for k in ks]
    for errors_of, measure in (
        (ref.refinement_errors, metrics.refinement_error),
        (ref.calibration_errors, metrics.calibration_error),
    ):
        per_k = [errors_of(y, p, e) for e in edges]
        for stratify in STRATA:
            if not _defined(y, stratify):
                continue
            want = math.fsum(ref.stratified_mean(e, y, stratify) for e in per_k) / len(ks)
            got = measure(y, p, stratify=stratify, bins=scheme, n_bins=ks)
            assert_allclose(got, want, rtol=RTOL, atol=0)


@given(yp=labelled_probabilities(max_size=60))
def test_default_bins_equal_reference(yp):
    y, p = yp
    assume(_defined(y, "both"))
    assert_allclose(metrics.refinement_error(y, p, stratify="both"), ref.refinement_error(y, p, "both"), rtol=RTOL)
    assert_allclose(metrics.calibration_error(y, p, stratify="both"), ref.calibration_error(y, p, "both"), rtol=RTOL)


@given(yp=labelled_probabilities(dtype=np.float32))
def test_float32_probabilities(yp):
    y, p = yp
    e = metrics.evaluate(y, p, n_bins=[7])
    # float32 probabilities are evaluated exactly as their float64 values.
    f = metrics.evaluate(y, p.astype(np.float64), n_bins=[7])
    assert e.to_dict() == f.to_dict() or np.allclose(
        [v for m in e.MEASURES for v in getattr(e, m)], [v for m in f.MEASURES for v in getattr(f, m)], equal_nan=True, rtol=0, atol=0
    )
    assert isinstance(e.brier_score.overall, float)


@pytest.mark.parametrize("scheme", SCHEMES)
@given(yp=labelled_probabilities(), k=st.integers(1, 20))
def test_evaluate_equals_the_single_measures(scheme, yp, k):
    y, p = yp
    e = metrics.evaluate(y, p, bins=scheme, n_bins=k)
    for name in e.MEASURES:
        f = getattr(metrics, name)
        kw = {} if name in ("brier_score", "sharpness_error") else dict(bins=scheme, n_bins=k)
        s = getattr(e, name)
        assert s.overall == f(y, p, **kw)
        if _defined(y, "both"):
            assert s.outliers == f(y, p, stratify="outlier", **kw)
            assert s.inliers == f(y, p, stratify="inlier", **kw)
            assert s.stratified == f(y, p, stratify="both", **kw)
        else:
            assert math.isnan(s.stratified) and e.notes


@pytest.mark.parametrize("scheme", SCHEMES)
@given(yp=labelled_probabilities(), k=st.integers(1, 20))
def test_reliability_curve_equals_reference(scheme, yp, k):
    y, p = yp
    c = metrics.reliability_curve(y, p, bins=scheme, n_bins=k)
    mean_p, frac, count, edges = ref.reliability_curve(y, p, scheme, k)
    assert_array_equal(c.edges, edges)
    assert_array_equal(c.count, count)
    assert_allclose(c.mean_probability, mean_p, rtol=RTOL, atol=0, equal_nan=True)
    assert_allclose(c.outlier_fraction, frac, rtol=RTOL, atol=0, equal_nan=True)


# -- independent oracles ---------------------------------------------------------------


@given(yp=labelled_probabilities())
def test_brier_equals_scikit_learn(yp):
    y, p = yp
    want = brier_score_loss(y, p.astype(np.float64), labels=[0, 1])
    # scikit-learn squares the rounded 1 − p as well: absolute error ~u.
    assert_allclose(metrics.brier_score(y, p), want, rtol=1e-12, atol=1e-15)


@given(p=st.floats(0, 1))
def test_sharpness_is_scipy_entropy(p):
    want = scipy.stats.entropy([p, 1 - p], base=2)
    # SciPy takes log(1 − p) of the rounded 1 − p: an absolute error of up
    # to u/ln 2 ≈ 1.6e-16 in that term (we use log1p(−p)).
    assert_allclose(metrics.sharpness_error([0], [p]), want, rtol=1e-12, atol=1e-15)


@given(yp=labelled_probabilities(), k=st.integers(1, 20))
def test_equal_width_bins_equal_scikit_learn_calibration_curve(yp, k):
    y, p = yp
    p = p.astype(np.float64)
    # scikit-learn places edges with linspace, which may differ from b/k in
    # the last bit: compare where no probability sits on such an edge.
    grid = np.arange(1, k) / k
    assume(not np.isin(p, np.concatenate([grid, np.linspace(0, 1, k + 1)[1:-1]])).any())
    prob_true, prob_pred = calibration_curve(y, p, n_bins=k, strategy="uniform")
    c = metrics.reliability_curve(y, p, bins="equal_width", n_bins=k)
    full = c.count > 0
    assert_allclose(c.outlier_fraction[full], prob_true, rtol=1e-12)
    assert_allclose(c.mean_probability[full], prob_pred, rtol=1e-12)


# -- properties -------------------------------------------------------------------------------


@given(yp=labelled_probabilities(), k=st.integers(1, 25))
def test_equiareal_bins_partition_and_have_equal_area(yp, k):
    _, p = yp
    e = metrics.bin_edges(p, k)
    assert e[0] == 0.0 and e[-1] == 1.0 and 2 <= e.size <= k + 1
    assert np.all(np.diff(e) > 0)  # contiguous, non-overlapping, in order
    idx = np.searchsorted(e[1:-1], p, side="left")
    counts = np.bincount(idx, minlength=e.size - 1)
    assert counts.sum() == p.size  # every probability in exactly one bin
    # Documented tolerance: every bin but the last has area >= T and at most
    # T + width·m/N, m the probabilities on its right edge; the smallest of
    # those areas is >= T and so bounds them all.
    width = np.diff(e)
    area = width * counts / p.size
    if area.size > 1:
        target = area[:-1].min()
        on_edge = np.array([(p == t).sum() for t in e[1:]])
        assert np.all(area <= (target + width * on_edge / p.size) * (1 + 1e-12))


@pytest.mark.parametrize("scheme", SCHEMES)
@given(y=st.lists(st.integers(0, 1), min_size=1, max_size=200), k=st.integers(2, 20))
def test_perfect_probabilities_score_zero(scheme, y, k):
    y = np.array(y)
    e = metrics.evaluate(y, y.astype(float), bins=scheme, n_bins=k)
    measures = list(e.MEASURES)
    if scheme == "equal_frequency":
        # Quantile edges need not separate 0 from 1 (Q(1/k) = 1 when fewer
        # than a fraction 1/k are zeros): refinement is then not zero.
        measures.remove("refinement_error")
    for m in measures:
        s = getattr(e, m)
        assert s.overall == 0.0
        assert np.all(np.nan_to_num([s.outliers, s.inliers, s.stratified]) == 0.0)


def test_perfect_probabilities_with_default_bins():
    y = np.r_[np.zeros(90, int), np.ones(10, int)]
    e = metrics.evaluate(y, y.astype(float))
    assert all(v == 0.0 for m in e.MEASURES for v in getattr(e, m))


@given(yp=labelled_probabilities())
def test_skill_score_against_itself_is_zero(yp):
    y, p = yp
    for m in ("brier_score", "sharpness_error", "refinement_error", "calibration_error"):
        assert metrics.skill_score(y, p, p, measure=m) == 0.0


def test_skill_score_cases():
    y = [0, 0, 1]
    assert metrics.skill_score(y, [0.0, 0.1, 0.9], [0.0, 0.2, 0.8]) == 2.0
    assert metrics.skill_score(y, [0.0, 0.0, 1.0], [0.0, 0.2, 0.8]) == math.inf
    assert metrics.skill_score(y, [0.0, 0.2, 0.8], [0.0, 0.0, 1.0]) == -math.inf
    assert metrics.skill_score(y, [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]) == 0.0
    want = ref.skill_score(ref.refinement_error(y, [0.1, 0.6, 0.7], "outlier"), ref.refinement_error(y, [0.5, 0.5, 0.5], "outlier"))
    got = metrics.skill_score(y, [0.1, 0.6, 0.7], [0.5, 0.5, 0.5], measure="refinement_error", stratify="outlier")
    assert got == want
    with pytest.raises(ValueError, match="measure"):
        metrics.skill_score(y, [0.1, 0.2, 0.3], [0.1, 0.2, 0.3], measure="auc")


@given(yp=labelled_probabilities(min_size=2, max_size=80), seed=st.integers(0, 2**32 - 1))
def test_harmonic_improvement_score_equals_reference(yp, seed):
    y, p = yp
    assume(_defined(y, "both"))
    rng = np.random.default_rng(seed)
    candidates = [p, rng.random(p.size), np.clip(p + 0.1, 0, 1)]
    ks = (5, 12)
    got = metrics.harmonic_improvement_score(y, p, candidates, n_bins=ks)
    values, means = [], []
    for m, s in metrics.HIS_MEASURES:
        f = getattr(ref, m)
        kw = {"n_bins": ks} if m in ("refinement_error", "calibration_error") else {}
        values.append(f(y, p, s, **kw))
        means.append(math.fsum(f(y, c, s, **kw) for c in candidates) / len(candidates))
    assert_allclose(got, ref.harmonic_improvement_score(values, means), rtol=1e-12)


# -- edge cases and input checks ------------------------------------------------------------------


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize(
    "p",
    [[0.3] * 6, [0.0] * 6, [1.0] * 6, [0.0, 1.0, 0.0, 1.0, 1.0, 0.0], [0.2, 0.7], [0.5]],
    ids=["equal", "zeros", "ones", "two-values", "n<k", "single"],
)
def test_degenerate_probabilities_have_defined_results(scheme, p):
    y = np.arange(len(p)) % 2
    e = metrics.evaluate(y, p, bins=scheme)
    for m in e.MEASURES:
        s = getattr(e, m)
        assert 0.0 <= s.overall <= 1.0
    for k in (1, 5, 20):
        assert_array_equal(metrics.bin_edges(p, k, scheme), ref.bin_edges(np.array(p, float), k, scheme))
    assert_allclose(e.calibration_error.overall, ref.calibration_error(y, np.array(p, float), None, scheme), rtol=RTOL)


def test_labels_are_checked():
    p = [0.1, 0.2, 0.3]
    for y in ([0, 1, 1], [False, True, True], [0.0, 1.0, 1.0], np.array([0, 1, 1], dtype=np.uint8)):
        assert metrics.brier_score(y, p) == metrics.brier_score([0, 1, 1], p)
    with pytest.raises(ValueError, match=r"y_true\[1\] = 2 is not a label"):
        metrics.brier_score([0, 2, 1], p)
    with pytest.raises(ValueError, match=r"y_true\[2\] = 0.5"):
        metrics.evaluate([0, 1, 0.5], p)
    with pytest.raises(ValueError, match=r"y_true\[0\] = nan"):
        metrics.sharpness_error([np.nan, 1, 0], p)
    with pytest.raises(ValueError, match="labels"):
        metrics.brier_score(["a", "b", "c"], p)


def test_probabilities_are_checked():
    y = [0, 1, 0]
    with pytest.raises(ValueError, match=r"p\[1\] = 1.5 is not a probability"):
        metrics.brier_score(y, [0.1, 1.5, 0.2])
    with pytest.raises(ValueError, match=r"p\[2\] = -0.1"):
        metrics.evaluate(y, [0.1, 0.5, -0.1])
    with pytest.raises(ValueError, match=r"p\[0\] = NaN"):
        metrics.calibration_error(y, [np.nan, 0.5, 0.2])
    with pytest.raises(ValueError, match="3 labels but p has 2"):
        metrics.refinement_error(y, [0.1, 0.2])
    with pytest.raises(ValueError, match="empty"):
        metrics.evaluate([], [])
    with pytest.raises(ValueError, match="n_bins"):
        metrics.calibration_error(y, [0.1, 0.5, 0.2], n_bins=0)
    with pytest.raises(ValueError, match="bins"):
        metrics.calibration_error(y, [0.1, 0.5, 0.2], bins="quantile")


def test_absent_class():
    with pytest.raises(ValueError, match="no outliers"):
        metrics.brier_score([0, 0], [0.1, 0.2], stratify="outlier")
    with pytest.raises(ValueError, match="no inliers"):
        metrics.calibration_error([1, 1], [0.1, 0.2], stratify="both")
    e = metrics.evaluate([0, 0], [0.1, 0.2])
    assert math.isnan(e.brier_score.outliers) and math.isnan(e.brier_score.stratified)
    assert e.brier_score.inliers == e.brier_score.overall
    assert "no outliers" in str(e)


def test_evaluate_renders_and_converts():
    e = metrics.evaluate(np.r_[0, 0, 0, 1], np.r_[0.1, 0.0, 0.3, 0.9])
    text = str(e)
    assert "1 outlier, 3 inliers" in text and "k = 5..20" in text
    for m in e.MEASURES:
        assert m in text
    d = e.to_dict()
    assert d["brier_score"]["outliers"] == pytest.approx(0.01)
    assert d["n_bins"] == list(range(5, 21))


def test_robust_scaling_improves_outlier_brier_on_long_tailed_scores():
    rng = np.random.default_rng(0)
    scores = np.r_[rng.lognormal(size=950), rng.uniform(8, 30, size=50)]
    y = np.r_[np.zeros(950, int), np.ones(50, int)]
    gs = outprob.scaler("mean_std").fit_transform(scores)
    robust = outprob.scaler("mean_nmad").fit_transform(scores)
    assert metrics.skill_score(y, robust, gs, stratify="outlier") > 0


@given(
    y=hnp.arrays(st.sampled_from([np.int64, np.float64, np.bool_]), st.integers(0, 30)),
    p=hnp.arrays(st.sampled_from([np.float64, np.float32]), st.integers(0, 30)),
    scheme=st.sampled_from(SCHEMES + ["bogus"]),
    n_bins=st.integers(-1, 30) | st.lists(st.integers(0, 30), max_size=3),
    stratify=st.sampled_from(STRATA + ["all"]),
)
def test_arbitrary_input_gives_results_or_clear_errors(y, p, scheme, n_bins, stratify):
    for f in (metrics.refinement_error, metrics.calibration_error):
        try:
            v = f(y, p, bins=scheme, n_bins=n_bins, stratify=stratify)
        except ValueError as e:
            assert str(e)
            continue
        assert 0.0 <= v <= 1.0
    try:
        e = metrics.evaluate(y, p, bins=scheme, n_bins=n_bins)
    except ValueError:
        return
    for m in e.MEASURES:
        assert all(math.isnan(v) or 0.0 <= v <= 1.0 for v in getattr(e, m))


def test_evaluation_to_frame_matches_to_dict():
    pytest.importorskip("pandas")
    y = [0, 0, 0, 1, 0, 1]
    p = [0.1, 0.2, 0.05, 0.9, 0.4, 0.7]
    e = metrics.evaluate(y, p)
    frame = e.to_frame()
    d = e.to_dict()
    assert list(frame.index) == list(e.MEASURES) and list(frame.columns) == list(e.COLUMNS)
    for m in e.MEASURES:
        assert frame.loc[m].to_dict() == d[m]
    assert frame.attrs["n_outliers"] == 2 and frame.attrs["n_bins"] == list(range(5, 21))


def test_reliability_curve_to_frame():
    pytest.importorskip("pandas")
    c = metrics.reliability_curve([0, 0, 1, 1], [0.1, 0.3, 0.6, 0.8], bins="equal_width", n_bins=2)
    frame = c.to_frame()
    assert list(frame.columns) == ["lower", "upper", "mean_probability", "outlier_fraction", "count"]
    assert_array_equal(frame["lower"], [0.0, 0.5])
    assert_array_equal(frame["upper"], [0.5, 1.0])
    assert_allclose(frame["mean_probability"], [0.2, 0.7])
    assert_array_equal(frame["count"], [2, 2])


def test_to_frame_without_pandas_names_the_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"outprob\[pandas\]"):
        metrics.evaluate([0, 1], [0.2, 0.9]).to_frame()
