"""Contract §12, online conformal p-values (``outprob.OnlineConformal``):
exact against the O(n²) definition with the same uniform draws (the
SplitMix64 stream of ``outprob.reference.conformal``), uniform and
super-uniform at small sizes (binomial tests), checkpoints and bad input."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal
from scipy import stats

import outprob
from outprob.reference.conformal import uniforms as splitmix_uniforms

from ..stored_edits import edited
from ..strategies import examples


def definition(scores, theta) -> np.ndarray:
    """p_n = (#{i ≤ n: s_i > s_n} + θ_n #{i ≤ n: s_i = s_n})/n, O(n²)."""
    s = np.asarray(scores, dtype=np.float64)
    return np.array([((s[: n + 1] > s[n]).sum() + theta[n] * (s[: n + 1] == s[n]).sum()) / (n + 1)
                     for n in range(s.size)])  # fmt: skip


score_lists = st.lists(
    st.one_of(st.integers(-3, 3).map(float), st.floats(-1e6, 1e6, allow_nan=False),
              st.sampled_from([0.0, -0.0, np.inf, -np.inf])),
    max_size=300,
)  # fmt: skip


@settings(max_examples=examples(60))
@given(scores=score_lists, seed=st.integers(0, 2**64 - 1), cut=st.integers(0, 300))
def test_equal_to_the_definition_with_the_same_draws(scores, seed, cut):
    theta = 1.0 - splitmix_uniforms(seed, len(scores))
    want = definition(scores, theta)
    oc = outprob.OnlineConformal(seed=seed)
    got = np.r_[oc.pvalues(scores[:cut]), oc.pvalues(scores[cut:])]
    assert_array_equal(got, want)
    low = outprob.OnlineConformal(seed=seed, higher_is_outlier=False)
    assert_array_equal(low.pvalues([-x for x in scores]), want)
    plain = outprob.OnlineConformal(smoothed=False).pvalues(scores)
    assert_array_equal(plain, definition(scores, np.ones(len(scores))))


@pytest.mark.parametrize("ties", [True, False])
def test_many_batches_of_every_size_equal_the_definition(ties):
    """Small batches against many earlier ones (a large stored set is
    searched, not walked) and long batches, with ties or without: bit for
    bit the O(n²) definition with the same draws."""
    rng = np.random.default_rng(5)
    n = 6000
    scores = rng.integers(-40, 40, size=n).astype(float) if ties else rng.lognormal(size=n)
    scores[rng.integers(0, n, size=20)] = np.inf
    scores[rng.integers(0, n, size=20)] = -np.inf
    cuts = np.cumsum(rng.choice([1, 2, 7, 64, 300, 1000], size=n))
    cuts = cuts[cuts < n]
    want = definition(scores, 1.0 - splitmix_uniforms(9, n))
    oc = outprob.OnlineConformal(seed=9)
    got = np.concatenate([oc.pvalues(b) for b in np.split(scores, cuts)])
    assert_array_equal(got, want)
    back = outprob.OnlineConformal.from_dict(json.loads(json.dumps(oc.to_dict())))
    assert back.n == n
    more = rng.choice(scores, size=500)
    want_more = definition(np.r_[scores, more], 1.0 - splitmix_uniforms(9, n + 500))[n:]
    assert_array_equal(back.pvalues(more), want_more)


def test_given_uniforms_replace_the_draws():
    rng = np.random.default_rng(0)
    scores = np.round(rng.normal(size=500), 1)
    u = rng.uniform(size=500)
    oc = outprob.OnlineConformal(seed=3)
    assert_array_equal(oc.pvalues(scores, uniforms=u), definition(scores, u))
    assert oc.n == 500


def test_float32_scores_and_warm_up():
    scores = np.array([0.5, 2.0, 1.0, 2.0, 3.0], dtype=np.float32)
    oc = outprob.OnlineConformal(smoothed=False).update(scores[:2])
    assert_array_equal(oc.pvalues(scores[2:]), definition(scores.astype(float), np.ones(5))[2:])


@pytest.mark.parametrize("ties", [False, True])
def test_smoothed_pvalues_are_uniform_at_every_position(ties):
    """P(p_n ≤ a) = a for exchangeable scores, at positions 1..6 (smoothed:
    exactly uniform, ties or not): two-sided binomial tests over 4000
    streams; the plain p-values are super-uniform (one-sided)."""
    rng = np.random.default_rng(21)
    runs = 4000
    smooth, plain = np.empty((runs, 6)), np.empty((runs, 6))
    for r in range(runs):
        x = rng.integers(0, 3, size=6).astype(float) if ties else rng.normal(size=6)
        smooth[r] = outprob.OnlineConformal(seed=r).pvalues(x)
        plain[r] = outprob.OnlineConformal(smoothed=False).pvalues(x)
    for a in (0.1, 0.3, 0.5, 0.8):
        for n in range(6):
            k = int((smooth[:, n] <= a).sum())
            assert stats.binomtest(k, runs, a).pvalue > 1e-4, (a, n, k)
            k = int((plain[:, n] <= a).sum())
            assert stats.binomtest(k, runs, a, alternative="greater").pvalue > 1e-4, (a, n, k)


def test_smoothed_pvalues_are_independent():
    """Under exchangeability p_1 … p_n are independent: the indicator of
    p_5 ≤ 1/2 does not depend on that of p_4 ≤ 1/2 (Fisher's exact test)."""
    rng = np.random.default_rng(5)
    table = np.zeros((2, 2), dtype=int)
    for r in range(3000):
        p = outprob.OnlineConformal(seed=r).pvalues(rng.integers(0, 4, size=5).astype(float))
        table[int(p[3] <= 0.5), int(p[4] <= 0.5)] += 1
    assert stats.fisher_exact(table).pvalue > 1e-4, table


# -- checkpoints ----------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["dict", "json", "pickle"])
@pytest.mark.parametrize("higher", [True, False])
def test_checkpoint_in_the_middle_of_a_batch_resumes_bit_for_bit(how, higher):
    rng = np.random.default_rng(9)
    scores = np.r_[np.round(rng.normal(size=3000), 2), [np.inf, -np.inf, 0.0, -0.0]]
    want = outprob.OnlineConformal(seed=7, higher_is_outlier=higher).pvalues(scores)
    oc = outprob.OnlineConformal(seed=7, higher_is_outlier=higher)
    first = oc.pvalues(scores[:1234])
    if how == "pickle":
        oc = pickle.loads(pickle.dumps(oc))
    else:
        d = oc.to_dict()
        oc = outprob.OnlineConformal.from_dict(json.loads(json.dumps(d)) if how == "json" else d)
    assert_array_equal(np.r_[first, oc.pvalues(scores[1234:])], want)
    d = oc.to_dict()["state"]
    assert d["n"] == scores.size == sum(d["counts"])
    assert d["scores"] == sorted(d["scores"])


# -- bad input ------------------------------------------------------------------------------


def test_nan_scores_and_bad_uniforms_raise_and_change_nothing():
    oc = outprob.OnlineConformal()
    oc.update([1.0, 2.0])
    before = oc.to_dict()
    with pytest.raises(ValueError, match=r"^scores: scores\[2\] is NaN"):
        oc.pvalues([0.5, 1.5, np.nan])
    with pytest.raises(ValueError, match=r"^uniforms: uniforms\[1\] = 1.5"):
        oc.pvalues([0.5, 1.5], uniforms=[0.2, 1.5])
    with pytest.raises(ValueError, match="as many outputs and uniforms"):
        oc.pvalues([0.5, 1.5], uniforms=[0.2])
    with pytest.raises(ValueError, match=r"^scores: scores\[0\] is NaN"):
        oc.update([np.nan])
    assert oc.to_dict() == before
    with pytest.raises(ValueError, match="seed must be in"):
        outprob.OnlineConformal(seed=-1)
    with pytest.raises(TypeError, match="seed must be an integer"):
        outprob.OnlineConformal(seed=1.5)  # type: ignore[arg-type]


@pytest.mark.parametrize("change,field", [
    ({"n": 5}, "n"),
    ({"counts": [1, 0, 2]}, "counts"),
    ({"counts": [1, 2]}, "counts"),
    ({"scores": [3.0, 2.0, 1.0]}, "scores"),
    ({"scores": [1.0, 1.0, 2.0]}, "scores"),
    ({"scores": [1.0, float("nan"), 2.0]}, "scores"),
    ({"scores": "abc"}, 'state: "scores"'),
])  # fmt: skip
def test_tampered_checkpoints_are_refused_naming_the_field(change, field):
    oc = outprob.OnlineConformal()
    oc.update([1.0, 2.0, 2.0, 3.0])
    d = oc.to_dict()
    with pytest.raises(ValueError, match=f"^{field}"):
        outprob.OnlineConformal.from_dict(edited(d, ("state",), {**d["state"], **change}))
    with pytest.raises(ValueError, match="'smoothed' must be a bool"):
        outprob.OnlineConformal.from_dict(edited(d, ("params", "smoothed"), "yes"))


def test_names():
    oc = outprob.OnlineConformal(seed=4)
    assert type(oc).__module__ == "outprob" and oc.params == {
        "seed": 4, "higher_is_outlier": True, "smoothed": True}
    assert "n=0" in repr(oc)
