"""ConformalScaler's parameters and stored state (contract §11 "Stored
state", "Streaming", "Selection", "PyOD bridge"; the bounds of §5's table).

Each finding of the third hardening review as a user met it, with the
contract's result: a ``ValueError`` naming the parameter or field (never
``OverflowError``, ``TypeError`` from stored state, or an aborted
interpreter); a stored state that contradicts itself refused, what it can
recompute (the Monte Carlo correction, n, the sorted calibration scores,
window counts) recomputed and compared; a refused batch not kept.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, strategies as st

import outprob
from outprob import _core

from ..stored_edits import edited
from ..strategies import conformal_states

X = np.arange(40.0)


def loads(d):
    """``from_dict`` of a dict as JSON carries it."""
    return outprob.ConformalScaler.from_dict(json.loads(json.dumps(d)))


def test_monte_carlo_simulations_are_bounded_before_anything_is_allocated():
    """§5, §11: 10¹² simulations asked for 8 TB and aborted the interpreter
    (exit 134); now a ValueError naming mc_simulations, on every path that
    computes the correction. Run in a child process: a regression aborts
    the child, not the test run."""
    code = textwrap.dedent(
        """
        import numpy as np, outprob
        from outprob import _core
        calls = [
            lambda: outprob.ConformalScaler(conditional="mc", mc_simulations=10**12).fit(np.arange(17.0)),
            lambda: outprob.ConformalScaler(mc_simulations=10**12).fit(np.arange(17.0))
                .fpr_upper_bound([3.0], method="mc"),
            lambda: outprob.ConformalScaler(conditional="mc", mc_simulations=10**12)
                .partial_fit(np.arange(17.0)),
            lambda: _core.conformal_mc_correction(17, delta=0.1, simulations=10**12, seed=0),
            # A Simes or Monte Carlo table of more than 2^24 bounds (a
            # sketch's n counts every score seen).
            lambda: _core.conformal_mc_correction(2**24 + 1, delta=0.1, simulations=100, seed=0),
        ]
        for call in calls:
            try:
                call()
            except ValueError as e:
                assert "mc_simulations" in str(e) or "conditional='dkwm'" in str(e), e
                print("refused")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["refused"] * 5


@pytest.mark.parametrize(
    "window,error",
    [(0, ValueError), (-1, ValueError), (2**70, ValueError), (2**32 + 1, ValueError),
     ("5", TypeError), (1.5, TypeError), (True, TypeError), (np.float64(5), TypeError)],
)
def test_conformal_window_is_checked_as_every_window(window, error):
    """§5, §9: ConformalScaler(window=0) kept every score, -1 dropped the
    oldest, "5", 1.5, True and 2**70 were taken; GaussianScaler refuses
    each alike."""
    with pytest.raises(error, match="window"):
        outprob.ConformalScaler(window=window).partial_fit(X)
    with pytest.raises(error, match="window"):
        outprob.GaussianScaler(window=window).partial_fit(X)


def test_conformal_window_of_a_numpy_int_keeps_the_newest_scores():
    s = outprob.ConformalScaler(window=np.int64(5)).partial_fit(X)
    np.testing.assert_array_equal(s.sorted_, X[-5:])


# -- §11: stored state of the wrong kind is a ValueError -----------------------------
MC = outprob.ConformalScaler(conditional="mc", mc_simulations=200).fit(X).to_dict()


@pytest.mark.parametrize(
    "path,value,field",
    [
        (("fitted", "n_calibration_"), float("inf"), "n_calibration_"),
        (("fitted", "trimmed_"), float("inf"), "trimmed_"),
        (("fitted", "n_calibration_"), "40", "n_calibration_"),
        (("spec", "simes_k"), 2**64, "simes_k"),
        (("spec", "mc_simulations"), 2**64, "mc_simulations"),
        (("spec", "delta"), None, "delta"),
        (("spec", "seed"), None, "seed"),
        (("params", "mc_simulations"), None, "mc_simulations"),
        (("params", "window"), "5", "window"),
        (("params", "k"), 2**70, "k"),
        (("ndim",), True, "ndim"),
    ],
)
def test_stored_values_of_the_wrong_kind_are_value_errors(path, value, field):
    """§11 "Stored state": OverflowError/TypeError were raised for these."""
    with pytest.raises(ValueError, match=field):
        loads(edited(MC, path, value))


def test_refused_batch_is_not_kept_in_the_stream(monkeypatch):
    """§9, §11 "Streaming": a batch whose fit is refused changes nothing —
    the stream counted 10 → 20 while n_samples_seen_ said 10."""
    for window in (None, 18):  # both reach n >= 17 at the second batch
        s = outprob.ConformalScaler(conditional="mc", mc_simulations=100, window=window)
        s.partial_fit(np.arange(10.0))
        before = s.to_dict()

        def refuse(*args, **kwargs):
            raise ValueError("refused by the test")

        with monkeypatch.context() as m:
            m.setattr(_core, "conformal_mc_correction", refuse)
            with pytest.raises(ValueError, match="refused by the test"):
                s.partial_fit(np.arange(10.0, 20.0))
        assert s.to_dict() == before and s.n_samples_seen_ == 10
        # The stream continues as one that never saw the refused batch.
        s.partial_fit(np.arange(20.0, 30.0))
        fresh = outprob.ConformalScaler(conditional="mc", mc_simulations=100, window=window)
        fresh.partial_fit(np.arange(10.0)).partial_fit(np.arange(20.0, 30.0))
        assert s.to_dict() == fresh.to_dict()


def test_the_reported_refusal_inside_partial_fit_keeps_nothing():
    """The finding as reported: mc_simulations=2**64 passed the first batch
    (n < 17 uses DKWM) and broke the second; it is refused at once now."""
    s = outprob.ConformalScaler(conditional="mc", mc_simulations=2**64)
    with pytest.raises(ValueError, match="mc_simulations"):
        s.partial_fit(np.arange(10.0))
    assert not s.__sklearn_is_fitted__()


# -- §11: stored state must agree with itself ----------------------------------------
def test_a_tampered_monte_carlo_correction_is_refused():
    """§11: γ is determined by n, δ, mc_simulations and seed; a tampered
    one moved p at the 99.9 % quantile from 0.0074 to 0.0038."""
    d = outprob.ConformalScaler(conditional="mc").fit(np.random.default_rng(0).normal(size=1000)).to_dict()
    gamma = d["fitted"]["mc_correction_"]
    assert loads(d).mc_correction_ == gamma  # the genuine state loads
    delta = d["spec"]["delta"]
    for tampered in (gamma / 2, delta - 1 + 1e-3, delta - 1e-3, np.nextafter(gamma, 1.0)):
        with pytest.raises(ValueError, match="mc_correction_"):
            loads(edited(d, ("fitted", "mc_correction_"), float(tampered)))
    with pytest.raises(ValueError, match="mc_correction_"):
        loads(edited(d, ("fitted",), {k: v for k, v in d["fitted"].items() if k != "mc_correction_"}))
    plain = outprob.ConformalScaler().fit(X).to_dict()
    with pytest.raises(ValueError, match="mc_correction_"):
        loads(edited(plain, ("fitted", "mc_correction_"), 0.01))


def test_the_stored_monte_carlo_correction_is_the_one_fit_computes():
    """Oracle: a fresh fit of as many scores (γ depends on n alone)."""
    d = outprob.ConformalScaler(conditional="mc", mc_simulations=300, seed=7).fit(X).to_dict()
    same_n = outprob.ConformalScaler(conditional="mc", mc_simulations=300, seed=7).fit(np.cos(X))
    assert d["fitted"]["mc_correction_"] == same_n.mc_correction_
    # Options changed after the fit: the stored spec, not the parameters,
    # says how γ was computed.
    d = edited(d, ("params", "mc_simulations"), 5000)
    assert loads(d).mc_correction_ == same_n.mc_correction_


@pytest.mark.parametrize(
    "path,value,field",
    [
        (("fitted", "n_calibration_"), 39, "n_calibration_"),
        (("fitted", "sorted_"), list(X[::-1]), "sorted_"),
        (("fitted", "sorted_"), ["1.0"] * 40, "sorted_"),
        (("fitted", "trimmed_"), 3, "trimmed_"),
        (("fitted", "contamination_"), 0.5, "trimmed_"),
        (("fitted", "n_samples_seen_"), 40, "n_samples_seen_"),
    ],
)
def test_a_fit_that_contradicts_itself_is_refused(path, value, field):
    d = outprob.ConformalScaler().fit(X).to_dict()
    with pytest.raises(ValueError, match=field):
        loads(edited(d, path, value))


def test_a_trimmed_fit_loads_and_its_trim_is_checked():
    s = outprob.ConformalScaler(contamination=0.1).fit(X)
    d = s.to_dict()
    assert (d["fitted"]["trimmed_"], d["fitted"]["n_calibration_"]) == (4, 36)
    assert loads(d).to_dict() == d
    with pytest.raises(ValueError, match="trimmed_"):
        loads(edited(d, ("fitted", "trimmed_"), 5))


WINDOW = outprob.ConformalScaler(window=5).partial_fit(np.arange(10.0)).to_dict()
SKETCH = outprob.ConformalScaler(k=8).partial_fit(np.arange(100.0)).to_dict()


@pytest.mark.parametrize(
    "base,path,value,field",
    [
        # With a stream, the stored fit was ignored: now it must be the
        # stream's.
        (WINDOW, ("fitted", "sorted_"), [0.0, 1.0, 2.0, 3.0, 4.0], "sorted_"),
        (WINDOW, ("fitted", "n_calibration_"), 3, "n_calibration_"),
        (WINDOW, ("fitted", "n_samples_seen_"), 6, "n_samples_seen_"),
        (SKETCH, ("fitted", "n_calibration_"), 99, "n_calibration_"),
        (SKETCH, ("fitted", "rank_error_"), 0.5, "rank_error_"),
        (SKETCH, ("spec", "seed"), 3, "spec"),
        # Window buffers of text, and counts no stream leaves.
        (WINDOW, ("stream", "buffers"), [["5", "6", "7", "8", "9"]], "buffers"),
        (WINDOW, ("stream", "seen"), [10**30], "seen"),
        (WINDOW, ("stream", "seen"), [1e30], "seen"),
        (WINDOW, ("stream", "seen"), [True], "seen"),
        (WINDOW, ("stream", "seen"), [4], "window"),
        (WINDOW, ("stream", "buffers"), [[6.0, 7.0, 8.0, 9.0]], "window"),
        (SKETCH, ("stream", "seen"), [99], "seen"),
    ],
)
def test_a_stream_that_contradicts_its_fit_is_refused(base, path, value, field):
    """§11 "Stored state": the fit is recomputed from the stream and must
    be the stored one; a window holds the newest min(window, seen)."""
    assert loads(base).to_dict() == base
    with pytest.raises(ValueError, match=field):
        loads(edited(base, path, value))


def test_a_resumed_conformal_stream_continues_as_the_original():
    """§11 "Streaming": the copy a batch goes into is exact."""
    rng = np.random.default_rng(3)
    batches = [rng.normal(size=rng.integers(1, 60)) for _ in range(40)]
    a = outprob.ConformalScaler(k=8, conditional="simes")
    b = outprob.ConformalScaler(k=8, conditional="simes")
    for x in batches:
        a.partial_fit(x)
        b = loads(b.partial_fit(x).to_dict())
    assert a.to_dict() == b.to_dict()
    q = np.linspace(-3, 3, 13)
    np.testing.assert_array_equal(a.pvalues(q), b.pvalues(q))


# -- §11 "Selection", PyOD bridge, Dask --------------------------------------------------
@pytest.mark.parametrize("alpha", ["0.1", True, np.bool_(True), None, [0.1]])
def test_select_takes_only_real_numbers(alpha):
    """§11: alpha="0.1" was parsed and alpha=True meant α = 1."""
    with pytest.raises(TypeError, match="alpha"):
        outprob.select([0.01, 0.5], alpha=alpha)
    with pytest.raises(TypeError, match="lam"):
        outprob.select([0.01, 0.5], method="storey", lam="0.5")


def test_select_of_no_pvalues_reports_a_null_proportion_of_one():
    """§11: π̂₀ = (1 + #{p > λ})/(m(1 − λ)) divides by m = 0 (it reported
    inf); nothing is selected and π̂₀ is 1, as BH and BY report it."""
    for method in ("bh", "storey", "by"):
        sel = outprob.select([], method=method)
        assert (len(sel), sel.threshold, sel.null_proportion) == (0, 0.0, 1.0)
    # Oracle for m > 0: Storey's formula itself.
    p = np.array([0.001, 0.2, 0.7, 0.9, 0.95])
    assert outprob.select(p, method="storey").null_proportion == (1 + 3) / (5 * 0.5)


def test_pyod_conformal_takes_numpy_integer_folds():
    """§11 "PyOD bridge": cv=np.int64(3) was refused."""
    pytest.importorskip("pyod")
    from pyod.models.knn import KNN

    import outprob.pyod

    X2 = np.random.default_rng(0).normal(size=(60, 2))
    a = outprob.pyod.conformal(KNN(), X2, cv=np.int64(3), random_state=0)
    b = outprob.pyod.conformal(KNN(), X2, cv=3, random_state=0)
    np.testing.assert_array_equal(a.pvalues(X2[:10]), b.pvalues(X2[:10]))
    for bad in (np.bool_(True), 3.0, "3"):
        with pytest.raises(ValueError, match="cv"):
            outprob.pyod.conformal(KNN(), X2, cv=bad)
    with pytest.raises(TypeError, match="split"):
        outprob.pyod.conformal(KNN(), X2, split="0.5")



def _leaves(d, path=()):
    if isinstance(d, dict):
        for k, v in d.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(d, list) and d and not isinstance(d[0], (list, dict)) and len(path) > 1 \
            and path[-1] not in ("sorted_", "buffers"):
        for i, v in enumerate(d):
            yield from _leaves(v, (*path, i))
    else:
        yield path, d


def _edits(value):
    numbers = [0, 1, -1, 2, 17, 2**53, 2**53 + 1, 2**64, -(2**64), 0.5, -0.5, 1e30, float("inf"),
               float("nan"), None, True, "1", []]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        numbers += [value + 1, value - 1, value * 2, float(np.nextafter(float(value), math.inf))]
    if isinstance(value, list) and value:
        numbers += [value[:-1], value + value[-1:], value[::-1], [str(v) for v in value]]
    return [v for v in numbers if not (type(v) is type(value) and v == value)]


def _independently_consistent(d):
    """What an accepted state must satisfy, from its own numbers and a
    fresh fit (not from the restore code): one column (these states are
    1-D)."""
    f, spec, params = d["fitted"], d["spec"], d["params"]
    stream = d.get("stream")
    if stream is None:
        a = np.array(f["sorted_"], dtype=float)
        n = a.size
        assert f["n_calibration_"] == n and np.all(np.diff(a) >= 0) and np.all(np.isfinite(a))
        t, c = f["trimmed_"], f["contamination_"]
        assert t == math.floor(c * (n + t))
        if spec["conditional"] == "mc" and n >= 17:
            fresh = outprob.ConformalScaler(conditional="mc", delta=spec["delta"],
                                            mc_simulations=spec["mc_simulations"],
                                            seed=spec["seed"]).fit(np.arange(float(n)))
            assert f["mc_correction_"] == fresh.mc_correction_
        else:
            assert "mc_correction_" not in f
    elif stream["kind"] == "window":
        (buf,), (seen,) = stream["buffers"], stream["seen"]
        assert len(buf) == min(params["window"], seen)
        sign = 1.0 if params["higher_is_outlier"] else -1.0
        fresh = outprob.ConformalScaler(**params).partial_fit(sign * np.array(buf))
        mine = {k: v for k, v in f.items() if k != "n_samples_seen_"}
        theirs = {k: v for k, v in fresh.to_dict()["fitted"].items() if k != "n_samples_seen_"}
        assert mine == theirs


@given(state=conformal_states(), data=st.data())
def test_a_stored_conformal_state_loads_only_if_it_agrees_with_itself(state, data):
    """§11 "Stored state": a genuine state loads and reads back unchanged;
    one edited field is a ValueError, or the edit is invisible (the state
    still agrees with itself: its own numbers and a fresh fit say so) and
    nothing is silently replaced."""
    assert loads(state).to_dict() == state
    _independently_consistent(state)
    leaves = [(p, v) for p, v in _leaves(state) if p and p[0] in ("fitted", "spec", "stream")]
    path, value = data.draw(st.sampled_from(leaves))
    edit = data.draw(st.sampled_from(_edits(value)))
    tampered = edited(state, path, edit)
    try:
        loaded = outprob.ConformalScaler.from_dict(tampered)
    except ValueError:
        return
    assert json.loads(json.dumps(loaded.to_dict())) == json.loads(json.dumps(tampered)), (path, edit)
    _independently_consistent(tampered)


def test_a_stored_tail_without_mc_simulations_round_trips_and_is_checked():
    """§11 "Stored state": a spec written before ``mc_simulations`` was
    stored lacks it, and the parameter's is taken; with a tail it holds
    ``tail`` and ``tail_quantile``, both or neither, each checked as the
    parameter is (``tail_quantile`` in (0, 1), no tail beside a
    calibration-conditional adjustment)."""
    cal = np.random.default_rng(7).normal(size=(800, 2))
    x = np.random.default_rng(8).normal(size=(40, 2)) * 3
    s = outprob.ConformalScaler(tail="gpd", tail_quantile=0.8, mc_simulations=500).fit(cal)
    d = s.to_dict()
    older = edited(d, ("spec",), {k: v for k, v in d["spec"].items() if k != "mc_simulations"})
    back = loads(older)
    np.testing.assert_array_equal(back.pvalues(x), s.pvalues(x))
    assert back.tail_ == s.tail_
    assert back.to_dict() == d  # the spec's mc_simulations is the parameter's again
    spec = older["spec"]
    without = {k: {key: v for key, v in spec.items() if key != k} for k in ("tail", "tail_quantile")}
    for bad, match in [
        ({**spec, "tail": "pareto"}, "tail must be"),
        ({**spec, "tail_quantile": 1.0}, "tail_quantile"),
        ({**spec, "tail_quantile": 0.0}, "tail_quantile"),
        ({**spec, "tail_quantile": float("nan")}, "tail_quantile"),
        ({**spec, "tail_quantile": "0.8"}, "tail_quantile"),
        ({**spec, "conditional": "dkwm"}, "conditional"),
        (without["tail"], "'spec' must hold exactly"),
        (without["tail_quantile"], "'spec' must hold exactly"),
        ({**spec, "tails": "gpd"}, "'spec' must hold exactly"),
    ]:
        with pytest.raises(ValueError, match=match):
            loads(edited(older, ("spec",), bad))
    # The parameter that stands in for the missing field is bounded too.
    with pytest.raises(ValueError, match="mc_simulations"):
        loads(edited(older, ("params", "mc_simulations"), 10**12))
