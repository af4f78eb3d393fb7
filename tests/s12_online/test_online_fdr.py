"""Contract §12, online FDR control (``outprob.OnlineFDR``): decisions equal
``online-fdr`` 1.0's on the same p-values for every rule, R onlineFDR's
documented examples, the papers' formulas where online-fdr departs from
them, the FDR bound in simulation, checkpoints and bad input."""

from __future__ import annotations

import json
import math
import pickle
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

import outprob

online_fdr = pytest.importorskip("online_fdr", reason="online-fdr is in the test extra")
from online_fdr.p_values import Addis, Lond, LordPlusPlus, Saffron  # noqa: E402
from ..strategies import examples

LORD_C, SAFFRON_C = 0.07720838, 0.4374901658


def stream(n: int, seed: int, signal: float = 0.2) -> np.ndarray:
    """Uniform nulls and a fraction of strong signals (Beta(0.1, 10))."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    alt = rng.uniform(size=n) < signal
    p[alt] = rng.beta(0.1, 10.0, size=int(alt.sum()))
    return p


def theirs(method: str, alpha: float, w0, lam, tau):
    if method == "lord++":
        return LordPlusPlus(alpha, wealth=w0)
    if method == "saffron":
        return Saffron(alpha, wealth=w0, lambda_=lam)
    if method == "addis":
        return Addis(alpha, wealth=w0, lambda_=lam, tau=tau)
    return Lond(alpha)


CASES = [
    ("lord++", 0.05, 0.005, None, None),
    ("lord++", 0.1, 0.05, None, None),
    ("saffron", 0.05, 0.025, 0.5, None),
    ("saffron", 0.2, 0.01, 0.3, None),
    ("addis", 0.05, 0.025, 0.25, 0.5),
    ("addis", 0.1, 0.02, 0.1, 0.8),
    ("lond", 0.05, None, None, None),
    ("lond", 0.2, None, None, None),
]


@pytest.mark.parametrize("method,alpha,w0,lam,tau", CASES)
@pytest.mark.parametrize("seed", [0, 1])
def test_decisions_and_levels_equal_online_fdr(method, alpha, w0, lam, tau, seed):
    p = stream(2500, seed)
    ref = theirs(method, alpha, w0, lam, tau)
    want, levels = [], []
    for x in p:
        want.append(ref.test_one(float(x)))
        levels.append(ref.last_test_level)
    want = np.array(want)
    ours = outprob.OnlineFDR(method, alpha=alpha, w0=w0, lam=lam, tau=tau)
    got, got_levels = ours.decide_with_levels(p)
    assert want.sum() > 20  # the comparison covers many rejections
    assert_array_equal(got, want)
    assert_allclose(got_levels, levels, rtol=1e-12, atol=0)
    again = outprob.OnlineFDR(method, alpha=alpha, w0=w0, lam=lam, tau=tau)
    assert_array_equal(again.decide(p), want)  # without the levels: the same decisions


# R onlineFDR's documented examples (the LORD, SAFFRON, ADDIS and LOND
# reference pages) as printed there: method, parameters, the p-values in
# the order tested, the levels (alphai) and the rejections (R).
R_DATA = json.loads((Path(__file__).parents[1] / "data" / "r_onlinefdr_examples.json").read_text())
R_P = R_DATA["pvalues"]["ordered"]
R_EXAMPLES = [(e["method"], e["params"], R_DATA["pvalues"][e["pvalues"]], e["levels"], e["rejected"])
              for e in R_DATA["examples"]]


@pytest.mark.parametrize("method,kw,p,printed,rejected", R_EXAMPLES)
def test_r_onlinefdr_documented_examples(method, kw, p, printed, rejected):
    got, levels = outprob.OnlineFDR(method, **kw).decide_with_levels(p)
    assert got.tolist() == [c == "1" for c in rejected]
    for level, text in zip(levels, printed.split()):
        decimals = len(text.split(".")[1])
        assert abs(level - float(text)) <= 0.5 * 10.0**-decimals, (level, text)


# -- the papers' formulas, from the whole history ------------------------------------


def paper(method, p, alpha, w0, lam, tau, gamma=None):
    """Levels and decisions of LORD++ (Ramdas et al. 2017), SAFFRON (Ramdas et
    al. 2018, Alg. 1), ADDIS (Tian & Ramdas 2019, γ counted from 0) and LOND
    (Javanmard & Montanari 2018), recomputed from all earlier p-values."""

    def g(j):
        if gamma is not None:
            return gamma[j - 1] if j <= len(gamma) else 0.0
        if method in ("lord++", "lond"):
            return LORD_C * math.log(max(j, 2)) / (j * math.exp(math.sqrt(math.log(j))))
        return SAFFRON_C / j**1.6

    taus, levels = [], []
    for t in range(1, len(p) + 1):
        before = p[: t - 1]
        if method == "lond":
            level = alpha * g(t) * (len(taus) + 1)
        elif method == "lord++":
            level = w0 * g(t) + sum(
                (alpha - w0 if j == 0 else alpha) * g(t - tj) for j, tj in enumerate(taus))
        elif method == "saffron":
            def c_after(i):
                return sum(x <= lam for x in before[i:])
            a = w0 * g(t - c_after(0)) + sum(
                (alpha - w0 if j == 0 else alpha) * g(t - tj - c_after(tj)) for j, tj in enumerate(taus))
            level = min(lam, (1 - lam) * a)
        else:
            s_t = sum(x <= tau for x in before)

            def offset(k):  # S^t − κ* − C₊ + 1
                return s_t - sum(x <= tau for x in p[:k]) - sum(x <= lam for x in before[k:]) + 1

            a = w0 * g(s_t - sum(x <= lam for x in before) + 1) + sum(
                (alpha - w0 if j == 0 else alpha) * g(offset(k)) for j, k in enumerate(taus))
            level = min(lam, (tau - lam) * a)
        if p[t - 1] <= level:
            taus.append(t)
        levels.append(level)
    return np.array([x <= a for x, a in zip(p, levels)]), np.array(levels)


@st.composite
def rules(draw):
    method = draw(st.sampled_from(["lord++", "saffron", "addis", "lond"]))
    alpha = draw(st.floats(0.01, 0.5))
    # The papers allow w0 = α and τ = 1 (online-fdr refuses both).
    w0 = None if method == "lond" else alpha * draw(st.sampled_from([1.0, 0.5, 0.1]))
    tau = draw(st.sampled_from([1.0, 0.5, 0.8])) if method == "addis" else None
    lam = {"saffron": draw(st.floats(0.05, 0.95)), "addis": (tau or 1) * draw(st.floats(0.05, 0.95))}.get(method)
    gamma = draw(st.none() | st.just([0.2 / j for j in range(1, 31)]))
    return method, alpha, w0, lam, tau, gamma


@settings(max_examples=examples(60))
@given(rule=rules(), seed=st.integers(0, 2**16), n=st.integers(1, 150))
def test_decisions_follow_the_papers_formulas(rule, seed, n):
    method, alpha, w0, lam, tau, gamma = rule
    p = stream(n, seed, signal=0.4)
    want, levels = paper(method, p.tolist(), alpha, w0, lam, tau, gamma)
    ours = outprob.OnlineFDR(method, alpha=alpha, w0=w0, lam=lam, tau=tau, gamma=gamma)
    got, got_levels = ours.decide_with_levels(p)
    assert_array_equal(got, want)
    assert_allclose(got_levels, levels, rtol=1e-12, atol=1e-300)


def test_addis_with_tau_one_is_saffron():
    p = stream(4000, 3)
    a = outprob.OnlineFDR("addis", alpha=0.1, w0=0.05, lam=0.5, tau=1.0).decide(p)
    s = outprob.OnlineFDR("saffron", alpha=0.1, w0=0.05, lam=0.5).decide(p)
    assert_array_equal(a, s)


def test_fdr_is_controlled_in_simulation():
    """FDR(T) ≤ α for independent p-values: the mean false-discovery
    proportion over 1500 streams of 200, nulls uniform, 20 % signals, is
    below α plus three standard errors, for every rule."""
    rng = np.random.default_rng(12)
    alpha = 0.1
    for method in ("lord++", "saffron", "addis", "lond"):
        fdp = []
        for _ in range(1500):
            null = rng.uniform(size=200) >= 0.2
            p = np.where(null, rng.uniform(size=200), rng.beta(0.2, 5.0, size=200))
            r = outprob.OnlineFDR(method, alpha=alpha).decide(p)
            fdp.append((r & null).sum() / max(r.sum(), 1))
        fdp = np.array(fdp)
        assert fdp.mean() <= alpha + 3 * fdp.std() / np.sqrt(fdp.size), (method, fdp.mean())


# -- batches, checkpoints ---------------------------------------------------------------


@settings(max_examples=examples(40))
@given(cuts=st.lists(st.integers(0, 600), max_size=6), method=st.sampled_from(["lord++", "saffron", "addis", "lond"]))
def test_any_batching_and_a_checkpoint_in_the_middle_resume_bit_for_bit(cuts, method):
    p = stream(600, 5, signal=0.3)
    whole = outprob.OnlineFDR(method)
    want = whole.decide(p)
    fdr = outprob.OnlineFDR(method)
    got = []
    bounds = [0, *sorted(cuts), p.size]
    for k, (a, b) in enumerate(zip(bounds, bounds[1:])):
        got.extend(fdr.decide(p[a:b]).tolist())
        if k % 2 == 0:
            fdr = outprob.OnlineFDR.from_dict(json.loads(json.dumps(fdr.to_dict())))
        else:
            fdr = pickle.loads(pickle.dumps(fdr))
    assert got == want.tolist()
    assert fdr.to_dict() == whole.to_dict()
    assert fdr.next_level == whole.next_level


def test_state_and_params_are_reported():
    fdr = outprob.OnlineFDR("addis")
    assert fdr.params == {"method": "addis", "alpha": 0.05, "w0": 0.025, "lam": 0.25, "tau": 0.5, "gamma": None}
    assert outprob.OnlineFDR("lond").params["w0"] is None
    fdr.decide(R_P)
    assert (fdr.n, fdr.rejections) == (15, 5)
    assert type(fdr).__module__ == "outprob" and "rejections=5" in repr(fdr)
    assert fdr.decide([]).shape == (0,)
    assert fdr.decide(np.float32(0.5)).tolist() == [False]


# -- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [np.nan, -0.1, 1.5, np.inf])
def test_bad_pvalues_raise_naming_the_first_and_change_nothing(bad):
    fdr = outprob.OnlineFDR("saffron")
    fdr.decide([0.01, 0.2])
    before = fdr.to_dict()
    with pytest.raises(ValueError, match=r"pvalues\[2\] = .* is not a p-value"):
        fdr.decide([0.3, 0.001, bad, 0.5])
    assert fdr.to_dict() == before
    with pytest.raises(ValueError, match="pvalues must be 1-D"):
        fdr.decide([[0.1, 0.2]])


@pytest.mark.parametrize("kw,field", [
    ({"alpha": 0.0}, "alpha"), ({"alpha": 1.0}, "alpha"), ({"alpha": float("nan")}, "alpha"),
    ({"w0": 0.06}, "w0"), ({"w0": -0.01}, "w0"), ({"lam": 0.5}, "lam"), ({"tau": 0.5}, "tau"),
    ({"gamma": [0.6, 0.6]}, "gamma"), ({"gamma": [0.1, 0.2]}, "gamma"), ({"gamma": [np.nan]}, "gamma"),
    ({"gamma": []}, "gamma"),
])  # fmt: skip
def test_bad_parameters_raise_naming_the_field(kw, field):
    with pytest.raises(ValueError, match=f"^{field}:"):
        outprob.OnlineFDR("lord++", **kw)


def test_bad_method_and_adaptive_parameters():
    with pytest.raises(ValueError, match="^method: expected 'lord\\+\\+'"):
        outprob.OnlineFDR("lord")
    with pytest.raises(ValueError, match="^lam:"):
        outprob.OnlineFDR("saffron", lam=1.0)
    with pytest.raises(ValueError, match="^lam:"):
        outprob.OnlineFDR("addis", lam=0.6, tau=0.5)
    with pytest.raises(ValueError, match="^w0: lond takes no w0"):
        outprob.OnlineFDR("lond", w0=0.01)


def checkpoint():
    fdr = outprob.OnlineFDR("saffron")
    fdr.decide(R_P * 2)
    return fdr.to_dict()


@pytest.mark.parametrize("change,field", [
    ({"rejections": 2}, "rejections"),
    ({"rejections": 99}, "rejections"),
    ({"clock": 29}, "clock"),
    ({"first": None}, "first"),
    ({"stamps": "reverse"}, "stamps"),
    ({"counts": "zero"}, "counts"),
    ({"counts": "short"}, "stamps"),
    ({"n": -1}, 'state: "n" is not valid'),
    ({"n": "ten"}, 'state: "n" is not valid'),
])  # fmt: skip
def test_tampered_checkpoints_are_refused_naming_the_field(change, field):
    d = checkpoint()
    state = d["state"]
    assert len(state["stamps"]) >= 2
    for k, v in change.items():
        if v == "reverse":
            state[k] = state[k][::-1]
        elif v == "zero":
            state[k] = [0, *state[k][1:]]
        elif v == "short":
            state[k] = state[k][:-1]
        else:
            state[k] = v
    with pytest.raises(ValueError, match=f"^{field}"):
        outprob.OnlineFDR.from_dict(d)


def test_incomplete_or_foreign_dicts_are_refused():
    d = checkpoint()
    del d["state"]["clock"]
    with pytest.raises(ValueError, match="'state' lacks 'clock'"):
        outprob.OnlineFDR.from_dict(d)
    d = checkpoint()
    del d["params"]["alpha"]
    with pytest.raises(ValueError, match="'params' lacks 'alpha'"):
        outprob.OnlineFDR.from_dict(d)
    with pytest.raises(ValueError, match="'format' must be 'outprob.OnlineFDR'"):
        outprob.OnlineFDR.from_dict({**checkpoint(), "format": "outprob.Martingale"})
    with pytest.raises(ValueError, match="'version'"):
        outprob.OnlineFDR.from_dict({**checkpoint(), "version": 2})
    d = checkpoint()
    d["params"]["alpha"] = 2.0
    with pytest.raises(ValueError, match="^alpha:"):
        outprob.OnlineFDR.from_dict(d)


def test_threads_sharing_a_rule_take_turns_by_batch():
    """Batches from several threads run one after another, each whole: every
    p-value is counted once and the state passes its own checks."""
    import threading

    fdr = outprob.OnlineFDR("lord++")
    batches = [stream(5000, s) for s in range(8)]
    threads = [threading.Thread(target=fdr.decide, args=(b,)) for b in batches]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert fdr.n == 40_000
    state = fdr.to_dict()
    assert outprob.OnlineFDR.from_dict(state).to_dict() == state
