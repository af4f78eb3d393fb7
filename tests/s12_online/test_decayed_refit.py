"""Contract §12, decayed fit (``outprob.DecayedFit``) and refits after a
drift (``outprob.RefitOnDrift``): the decayed moments and quantiles
against their weighted definitions (NumPy's weighted ``inverted_cdf``),
the stated rank-error bound, checkpoints and bad input; refits at the
stated positions, on the stated scores, against the definitions of the
refitted estimates and of the classical conformal p-value."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

import outprob
from outprob.reference.conformal import uniforms as splitmix_uniforms

from ..stored_edits import edited
from ..strategies import examples


def weights(n: int, h: float) -> np.ndarray:
    """w_i = 2^{-(n-1-i)/h}."""
    return np.exp2(-(n - 1 - np.arange(n)) / h)


def weighted_quantile(x, w, q):
    return float(np.quantile(x, q, weights=w, method="inverted_cdf"))


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=400), st.floats(1, 300),
       st.integers(0, 400))
def test_decayed_moments_equal_the_weighted_definition(xs, h, cut):
    x = np.array(xs)
    f = outprob.DecayedFit(h).update(x[:cut]).update(x[cut:])
    w = weights(x.size, h)
    mean = np.average(x, weights=w)
    assert f.n == x.size
    assert f.weight == pytest.approx(w.sum(), rel=1e-12)
    assert f.mean == pytest.approx(mean, rel=1e-9, abs=1e-9)
    assert f.std == pytest.approx(np.sqrt(np.average((x - mean) ** 2, weights=w)), rel=1e-7, abs=1e-6)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=200), st.floats(4, 40),
       st.floats(0, 1))
def test_one_score_per_epoch_gives_numpys_weighted_quantile(xs, h, q):
    x = np.array(xs)
    f = outprob.DecayedFit(h, epochs_per_half_life=1024, horizon=64).update(x)
    w = weights(x.size, h)
    assert f.rank_error == 0.0
    assert f.quantile(q) == weighted_quantile(x, w, q)
    m = weighted_quantile(x, w, 0.5)
    assert f.median == m
    assert f.nmad == pytest.approx(1.482602218505602 * weighted_quantile(np.abs(x - m), w, 0.5),
                                   rel=1e-15)


@pytest.mark.parametrize("h,m", [(50.0, 4), (300.0, 8), (1000.0, 16)])
def test_sketched_quantiles_are_within_the_stated_rank_error(h, m):
    rng = np.random.default_rng(7)
    x = np.r_[rng.normal(size=20_000), rng.normal(4, 2, size=5_000)]
    f = outprob.DecayedFit(h, epochs_per_half_life=m, k=64).update(x)
    w = weights(x.size, h)
    w /= w.sum()
    d = f.rank_error
    assert 0 < d < 0.1
    for q in (0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99):
        v = f.quantile(q)
        assert w[x < v].sum() <= q + d and w[x <= v].sum() >= q - d


def test_decayed_checkpoints_resume_exactly_and_tampering_is_refused():
    rng = np.random.default_rng(1)
    x = rng.normal(size=3000)
    a = outprob.DecayedFit(100, epochs_per_half_life=4, horizon=5, k=32).update(x[:1234])
    b = outprob.DecayedFit.from_dict(json.loads(json.dumps(a.to_dict())))
    c = pickle.loads(pickle.dumps(a))
    for f in (a, b, c):
        f.update(x[1234:])
    assert a.to_dict() == b.to_dict() == c.to_dict()
    assert a.quantile([0.1, 0.9]).tolist() == b.quantile([0.1, 0.9]).tolist()
    d = a.to_dict()
    for path, value, match in [(("params", "half_life"), 99.0, "other parameters"),
                               (("state", "bytes"), d["state"]["bytes"][:-8], None),
                               (("state", "bytes"), "not base64!", "base64")]:
        with pytest.raises(ValueError, match=match):
            outprob.DecayedFit.from_dict(edited(d, path, value))


def test_decayed_bad_input():
    f = outprob.DecayedFit(10).update([1.0, np.nan, 2.0])
    assert f.n == 2
    before = f.to_dict()
    with pytest.raises(ValueError, match="inf"):
        f.update([3.0, np.inf])
    assert f.to_dict() == before
    for bad in ({"half_life": 0.5}, {"half_life": np.nan}, {"half_life": 10, "horizon": 0},
                {"half_life": 10, "epochs_per_half_life": 0}, {"half_life": 10, "k": 2}):
        with pytest.raises(ValueError):
            outprob.DecayedFit(**bad)
    with pytest.raises(TypeError):
        outprob.DecayedFit("10")
    with pytest.raises(ValueError, match="no scores"):
        outprob.DecayedFit(10).mean
    with pytest.raises(ValueError, match="q"):
        f.quantile(1.5)


def shifted_stream(seed: int = 0):
    rng = np.random.default_rng(seed)
    return np.r_[rng.normal(size=1500), rng.normal(5, 2, size=2500)]


def test_window_refit_happens_delay_scores_after_the_alarm_on_the_newest_scores():
    x = shifted_stream()
    s = outprob.GaussianScaler(center="mean", scale="std").fit(x[:500])
    before = s.transform(x)
    r = outprob.RefitOnDrift(s, window=200)
    steps = r.update(x)
    kinds = [e.kind for e in r.events]
    assert kinds == ["alarm", "refit"]
    alarm, refit = r.events[0], r.events[1]
    assert 1500 <= alarm.index < 1700  # a shift of 5 SD is seen within 200 scores
    assert steps.alarm[alarm.index] and steps.alarm.sum() == kinds.count("alarm")
    assert alarm.log_statistic >= np.log(100)
    assert refit.index == alarm.index + 200 and refit.n_fit == 200
    # The fit is the definition's on the 200 newest scores at the refit.
    win = x[refit.index - 199: refit.index + 1]
    assert r.scaler.center_ == pytest.approx(win.mean(), rel=1e-12)
    assert r.scaler.scale_ == pytest.approx(win.std(), rel=1e-12)
    # Gaussian scaling (§4): max(0, erf((s − μ)/(σ√2))).
    z = (x[refit.index + 1:] - win.mean()) / (win.std() * np.sqrt(2))
    np.testing.assert_allclose(steps.output[refit.index + 1:], np.maximum(0, special.erf(z)),
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(steps.output[: refit.index + 1], before[: refit.index + 1])
    # The p-values restarted at the alarm: the next score is the first of a
    # new stream, ranked against itself only — p = θ₁ = 1 − U₀ (§12).
    assert steps.pvalues[alarm.index + 1] == 1.0 - splitmix_uniforms(0, 1)[0]
    assert steps.pvalues[alarm.index] != 1.0 - splitmix_uniforms(0, 1)[0]


def test_batches_of_any_size_give_the_same_events_and_outputs():
    x = shifted_stream(3)
    runs = []
    for cuts in ([], [1, 700, 1555, 1560, 2222], list(range(97, 4000, 97))):
        r = outprob.RefitOnDrift(outprob.GaussianScaler().fit(x[:300]), window=150)
        outs = [r.update(part).output for part in np.split(x, cuts)]
        runs.append((np.concatenate(outs), r.events))
    for out, events in runs[1:]:
        np.testing.assert_array_equal(out, runs[0][0])
        assert events == runs[0][1]


def test_decayed_refit_publishes_the_decayed_mean_and_std():
    x = shifted_stream(5)
    s = outprob.GaussianScaler(center="mean", scale="std").fit(x[:500])
    r = outprob.RefitOnDrift(s, refit="decayed", half_life=100)
    r.update(x)
    refit = next(e for e in r.events if e.kind == "refit")
    assert refit.index == next(e for e in r.events if e.kind == "alarm").index + 200
    seen = x[: refit.index + 1]
    w = weights(seen.size, 100.0)
    mu = np.average(seen, weights=w)
    assert refit.fitted["center"] == pytest.approx(mu, rel=1e-9)
    assert refit.fitted["scale"] == pytest.approx(np.sqrt(np.average((seen - mu) ** 2, weights=w)),
                                                  rel=1e-9)
    assert refit.n_fit == seen.size


def test_conformal_scaler_is_recalibrated_on_the_window():
    x = shifted_stream(2)
    c = outprob.ConformalScaler().fit(x[:400])
    r = outprob.RefitOnDrift(c, window=300)
    steps = r.update(x)
    refit = next(e for e in r.events if e.kind == "refit")
    cal = x[refit.index - 299: refit.index + 1]
    nxt = [e.index for e in r.events if e.kind == "refit" and e.index > refit.index]
    stop = nxt[0] + 1 if nxt else x.size
    later = x[refit.index + 1: stop]
    # Classical conformal p-value: (1 + #{cal >= s}) / (n + 1); transform
    # gives its complement 1 − p (§11).
    want = (1 + (cal[None, :] >= later[:, None]).sum(axis=1)) / (cal.size + 1)
    np.testing.assert_allclose(1 - steps.output[refit.index + 1: stop], want, rtol=1e-13)
    with pytest.raises(ValueError, match="decayed"):
        outprob.RefitOnDrift(c, refit="decayed")


def test_refit_bad_input():
    s = outprob.GaussianScaler().fit(np.arange(10.0))
    m = outprob.Martingale("power", threshold=2.0)
    m.update([1e-9])
    with pytest.raises(ValueError, match="reset"):
        outprob.RefitOnDrift(s, monitor=m)
    r = outprob.RefitOnDrift(s)
    with pytest.raises(ValueError, match="inf"):
        r.update([1.0, np.inf])
    assert r.n == 0
    for bad in ({"refit": "sometimes"}, {"window": 0}, {"delay": -1}):
        with pytest.raises(ValueError):
            outprob.RefitOnDrift(s, **bad)


def same_events(a, b) -> bool:
    """Equal events, NaN statistics equal to each other."""
    def key(e):
        return (e.kind, e.index, None if np.isnan(e.log_statistic) else e.log_statistic, e.n_fit,
                e.fitted, e.message)
    return [key(e) for e in a] == [key(e) for e in b]


@pytest.mark.parametrize("refit", ["window", "decayed"])
def test_refit_checkpoints_resume_bit_for_bit(refit):
    x = shifted_stream(9)
    make = lambda: outprob.RefitOnDrift(  # noqa: E731
        outprob.GaussianScaler(center="median", scale="nmad").fit(x[:400]), refit=refit,
        window=150, half_life=60)
    whole = make()
    want = whole.update(x).output
    for cut in (1000, 1540, 1700):  # before, around and after the alarm
        a = make()
        first = a.update(x[:cut]).output
        b = outprob.RefitOnDrift.from_dict(json.loads(json.dumps(a.to_dict())))
        c = pickle.loads(pickle.dumps(a))
        for r in (b, c):
            np.testing.assert_array_equal(np.r_[first, r.update(x[cut:]).output], want)
            assert same_events(r.events, whole.events)
    assert [e.kind for e in whole.events][:2] == ["alarm", "refit"]


def test_refit_tampered_checkpoints_are_refused():
    x = shifted_stream(9)
    r = outprob.RefitOnDrift(outprob.GaussianScaler().fit(x[:400]), window=150)
    r.update(x[:1600])
    good = r.to_dict()
    for key, value, fragment in [("n", -1, "'n'"), ("recent", [np.inf], "recent"),
                                 ("recent", list(range(151)), "recent"),
                                 ("pending", good["state"]["n"] + 10**6, "pending"),
                                 ("events", [{"kind": "boom", "index": 0}], "events"),
                                 ("decayed", outprob.DecayedFit(5).to_dict(), "decayed")]:
        bad = json.loads(json.dumps(good))
        bad["state"][key] = value
        with pytest.raises(ValueError, match=fragment):
            outprob.RefitOnDrift.from_dict(bad)
    bad = json.loads(json.dumps(good))
    del bad["state"]["monitor"]
    with pytest.raises(ValueError, match="monitor"):
        outprob.RefitOnDrift.from_dict(bad)
