"""Contract §12, exchangeability martingales (``outprob.Martingale``): equal
to nonconform 2.0's ``nonconform.martingales`` to 1e-12 on the log scale
(run in its own environment by ``tests/nonconform_oracle.py``), Ville's
bound in simulation, p-values against a fixed calibration set raising
false alarms, alarms, checkpoints and bad input."""

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

from .. import nonconform_run
from ..strategies import examples

KINDS = {
    "jumper_default": ("jumper", {}),
    "jumper_fast": ("jumper", {"jump": 0.2}),
    "jumper_one": ("jumper", {"jump": 1.0}),
    "power_default": ("power", {}),
    "power_sharp": ("power", {"epsilon": 0.05}),
    "power_one": ("power", {"epsilon": 1.0}),
    "mixture_default": ("mixture", {}),
    "mixture_coarse": ("mixture", {"n_grid": 7, "min_epsilon": 0.2}),
}
THRESHOLD = 19.7  # not an integer: R_t = t exactly when jump = 1


def pvalue_streams() -> dict:
    rng = np.random.default_rng(32)
    quiet = rng.uniform(size=2000)
    change = np.r_[rng.uniform(size=1000), rng.uniform(size=1000) ** 3]  # a shift to small p
    edges = np.r_[rng.uniform(size=200), [1.0, 1e-300, 5e-324, 1.0, 0.5], rng.uniform(size=50),
                  [0.0], rng.uniform(size=20)]  # fmt: skip
    return {"quiet": quiet, "change": change, "edges": edges}


@pytest.fixture(scope="module")
def nc(tmp_path_factory):
    python = nonconform_run.interpreter()
    data = pvalue_streams()
    jobs = []
    for name, (kind, kw) in KINDS.items():
        for stream in data:
            params = {"jump": 0.01, "epsilon": 0.5, "n_grid": 100, "min_epsilon": 0.01, **kw}
            jobs.append({"kind": "martingale", "name": f"{name}_{stream}", "martingale": kind,
                         "p": stream, "threshold": THRESHOLD, **params})
    return data, nonconform_run.run(python, tmp_path_factory, data, jobs)


def close_on_log_scale(ours: np.ndarray, theirs: np.ndarray) -> None:
    """Equal infinities, else |a − b| ≤ 1e-12·(1 + |b|)."""
    assert_array_equal(np.isinf(ours), np.isinf(theirs))
    assert_array_equal(ours[np.isinf(ours)], theirs[np.isinf(theirs)])
    finite = np.isfinite(theirs)
    err = np.abs(ours[finite] - theirs[finite]) / (1 + np.abs(theirs[finite]))
    assert err.max(initial=0) <= 1e-12, err.max()


@pytest.mark.parametrize("name", list(KINDS))
@pytest.mark.parametrize("stream", ["quiet", "change", "edges"])
def test_statistics_and_alarms_equal_nonconform(nc, name, stream):
    data, out = nc
    kind, kw = KINDS[name]
    key = f"{name}_{stream}"
    for j, statistic in enumerate(["martingale", "cusum", "shiryaev_roberts"]):
        m = outprob.Martingale(kind, threshold=THRESHOLD, statistic=statistic, **kw)
        steps = m.update(data[stream])
        close_on_log_scale(steps.log_martingale, out[f"{key}_m"])
        close_on_log_scale(steps.log_cusum, out[f"{key}_c"])
        close_on_log_scale(steps.log_shiryaev_roberts, out[f"{key}_r"])
        assert_array_equal(steps.alarm, out[f"{key}_alarm"][:, j])
    if stream == "change" and kind != "power" and kw.get("epsilon") != 1.0:
        assert steps.alarm.any()


# -- the guarantees ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["jumper", "power", "mixture"])
def test_ville_bound_holds_for_online_pvalues_of_exchangeable_scores(kind):
    """P(sup M ≥ c) ≤ 1/c: over 1000 streams of 300 exchangeable scores
    (with ties), the online conformal p-values' martingale reaches c = 10
    in a fraction consistent with ≤ 0.1 (one-sided binomial test)."""
    rng = np.random.default_rng(4)
    c, runs, crossed = 10.0, 1000, 0
    for r in range(runs):
        scores = np.round(rng.normal(size=300), 1)
        p = outprob.OnlineConformal(seed=r).pvalues(scores)
        crossed += outprob.Martingale(kind, threshold=c).update(p).alarm.any()
    assert stats.binomtest(crossed, runs, 1 / c, alternative="greater").pvalue > 1e-3, crossed


def test_pvalues_against_a_fixed_calibration_set_raise_false_alarms():
    """Exchangeable scores, p-values against one small calibration set
    (ConformalScaler): given the set they are not uniform, and the
    martingale crosses c = 20 far more often than 1/20; the online p-values
    of the same scores do not."""
    rng = np.random.default_rng(8)
    fixed = online = 0
    runs = 200
    for r in range(runs):
        calibration, scores = rng.normal(size=10), rng.normal(size=2000)
        p = outprob.ConformalScaler().fit(calibration).pvalues(scores)
        fixed += outprob.Martingale("jumper", threshold=20).update(p).alarm.any()
        q = outprob.OnlineConformal(seed=r).update(calibration).pvalues(scores)
        online += outprob.Martingale("jumper", threshold=20).update(q).alarm.any()
    assert fixed / runs > 0.3
    assert stats.binomtest(online, runs, 1 / 20, alternative="greater").pvalue > 1e-3


# -- alarms ---------------------------------------------------------------------------------


def test_alarms_continue_or_restart_and_reset_clears_them():
    p = np.full(60, 0.001)
    cont = outprob.Martingale("power", threshold=100)
    a = cont.update(p)
    first = int(np.argmax(a.alarm))
    assert a.alarm[first:].all() and not a.alarm[:first].any()
    assert (cont.first_alarm, cont.alarms, cont.alarmed) == (first, 60 - first, True)
    # Fed on after the alarm without a reset: the statistics go on.
    more = cont.update([0.5])
    assert more.log_martingale[0] > a.log_martingale[-1] - 1 and cont.first_alarm == first
    r = outprob.Martingale("power", threshold=100, on_alarm="restart")
    b = r.update(p)
    assert int(np.argmax(b.alarm)) == first
    assert b.log_martingale[first + 1] == a.log_martingale[0]  # started again from M = 1
    assert r.alarms == b.alarm.sum() >= 2 and r.first_alarm == first
    r.reset()
    assert (r.n, r.alarms, r.first_alarm, r.log_martingale) == (0, 0, None, 0.0)
    assert r.log_cusum == -np.inf and r.to_dict()["state"] == outprob.Martingale("power").to_dict()["state"]
    none = outprob.Martingale("power", threshold=None).update(p)
    assert not none.alarm.any()


def test_cusum_and_shiryaev_roberts_alarms():
    p = np.r_[np.full(2000, 0.7), np.full(80, 0.01)]  # M sinks, then a change
    for statistic, column in [("cusum", "log_cusum"), ("shiryaev_roberts", "log_shiryaev_roberts")]:
        s = outprob.Martingale("power", statistic=statistic, threshold=50).update(p)
        assert_array_equal(s.alarm, getattr(s, column) >= np.log(50))
        assert s.alarm.any()
    plain = outprob.Martingale("power", threshold=50).update(p)
    assert not plain.alarm.any()  # M itself sank too far to recover in time


# -- checkpoints ----------------------------------------------------------------------------


@settings(max_examples=examples(30))
@given(kind=st.sampled_from(["jumper", "power", "mixture"]), cut=st.integers(0, 400),
       on_alarm=st.sampled_from(["continue", "restart"]), how=st.sampled_from(["dict", "json", "pickle"]))
def test_checkpoint_in_the_middle_resumes_bit_for_bit(kind, cut, on_alarm, how):
    rng = np.random.default_rng(cut)
    p = np.r_[rng.uniform(size=200), rng.uniform(size=200) ** 4, [0.0, 1.0]]
    whole = outprob.Martingale(kind, threshold=5, on_alarm=on_alarm)
    want = whole.update(p)
    m = outprob.Martingale(kind, threshold=5, on_alarm=on_alarm)
    first = m.update(p[:cut])
    if how == "pickle":
        m = pickle.loads(pickle.dumps(m))
    else:
        d = m.to_dict()
        m = outprob.Martingale.from_dict(json.loads(json.dumps(d)) if how == "json" else d)
    second = m.update(p[cut:])
    for field in ("log_martingale", "log_cusum", "log_shiryaev_roberts", "alarm"):
        got = np.r_[getattr(first, field), getattr(second, field)]
        assert_array_equal(got, getattr(want, field))
    assert m.to_dict() == whole.to_dict()


def test_long_streams_stay_finite_and_consistent():
    rng = np.random.default_rng(1)
    p = rng.uniform(size=1_000_000)
    for kind in ("jumper", "power", "mixture"):
        m = outprob.Martingale(kind, threshold=None)
        s = m.update(p)
        assert np.isfinite(s.log_martingale).all() and len(s) == p.size
        assert (s.log_cusum <= s.log_shiryaev_roberts).all()
        back = outprob.Martingale.from_dict(m.to_dict())
        assert back.log_martingale == m.log_martingale


# -- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [np.nan, -1e-9, 1.0 + 1e-9, np.inf])
def test_bad_pvalues_raise_and_change_nothing(bad):
    m = outprob.Martingale("mixture")
    m.update([0.3, 0.9])
    before = m.to_dict()
    with pytest.raises(ValueError, match=r"pvalues\[1\] = .* is not a p-value"):
        m.update([0.5, bad])
    assert m.to_dict() == before


@pytest.mark.parametrize("kw,field", [
    ({"threshold": -1.0}, "threshold"), ({"threshold": 0.0}, "threshold"),
    ({"threshold": float("nan")}, "threshold"), ({"threshold": float("inf")}, "threshold"),
    ({"jump": 0.0}, "jump"), ({"jump": 1.5}, "jump"), ({"epsilon": 0.0}, "epsilon"),
    ({"epsilon": float("nan")}, "epsilon"), ({"n_grid": 1}, "n_grid"), ({"min_epsilon": 2.0}, "min_epsilon"),
    ({"statistic": "ville"}, "statistic"), ({"on_alarm": "stop"}, "on_alarm"), ({"kind": "plugin"}, "kind"),
])  # fmt: skip
def test_bad_parameters_raise_naming_the_field(kw, field):
    kw = {"kind": "jumper", **kw}
    with pytest.raises(ValueError, match=f"^{field}:"):
        outprob.Martingale(**kw)


def checkpoint(kind):
    m = outprob.Martingale(kind)
    m.update(np.random.default_rng(2).uniform(size=40))
    return m.to_dict()


@pytest.mark.parametrize("kind,change,field", [
    ("jumper", {"components": [0.6, 0.6, -0.2]}, "components"),
    ("jumper", {"components": [0.5, 0.5]}, 'state: "components"'),
    ("power", {"log_martingale": 0.123}, "log_martingale"),
    ("mixture", {"log_sum": 1.0}, "log_sum"),
    ("mixture", {"steps": 41}, "steps"),
    ("jumper", {"alarms": 3}, "alarms"),
    ("jumper", {"log_cusum": 1e6}, "log_cusum"),
    ("power", {"log_shiryaev_roberts": float("nan")}, "log_shiryaev_roberts"),
    ("power", {"first_alarm": 2}, "alarms"),
])  # fmt: skip
def test_tampered_checkpoints_are_refused_naming_the_field(kind, change, field):
    d = checkpoint(kind)
    d["state"].update(change)
    with pytest.raises(ValueError, match=f"^{field}"):
        outprob.Martingale.from_dict(d)


def test_results_and_names():
    m = outprob.Martingale()
    s = m.update(0.3)
    assert isinstance(s, outprob.MartingaleSteps) and len(s) == 1
    assert type(m).__module__ == type(s).__module__ == "outprob"
    assert m.params["kind"] == "jumper" and "alarms=0" in repr(m)
