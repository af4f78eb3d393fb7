"""The parameters and stored state of the online classes (contract §12,
"Stored state (all three)"; the bounds of §5's table "Bounds of size and
count parameters").

The oracle is the contract: a size is in §5's table for a Python int of
any size (a ``ValueError`` naming it, never ``OverflowError``); a real
parameter is a number, not a bool or text (``TypeError`` naming it); a
stream counts at most 2⁵³ values and a batch that would pass that is
refused whole; stored ``params`` are checked as the constructor checks
them, every failure a ``ValueError`` naming the field.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import outprob

from ..stored_edits import edited

COUNT = 2**53


def stored(obj):
    """``to_dict`` as JSON carries it."""
    return json.loads(json.dumps(obj.to_dict()))


@pytest.mark.parametrize("value", [2**64, 2**70, -1, 1, 2**16 + 1])
def test_martingale_grid_is_bounded_for_any_int(value):
    """§5's table: n_grid ∈ [2, 2¹⁶]; 2**64 or -1 raised OverflowError, from
    the constructor and from a stored dict alike."""
    with pytest.raises(ValueError, match="n_grid"):
        outprob.Martingale("mixture", n_grid=value)
    d = stored(outprob.Martingale("mixture"))
    for bad in (value, None, "5", True):
        with pytest.raises(ValueError, match="n_grid"):
            outprob.Martingale.from_dict(edited(d, ("params", "n_grid"), bad))


def test_martingale_grid_at_its_bounds_is_taken():
    """§5's table: the ends of [2, 2¹⁶] are accepted (NumPy ints too)."""
    for n_grid in (2, np.int64(2**16)):
        m = outprob.Martingale("mixture", n_grid=n_grid)
        m.update([0.5, 0.1])
        assert m.params["n_grid"] == int(n_grid) and type(m.params["n_grid"]) is int
        assert outprob.Martingale.from_dict(stored(m)).log_martingale == m.log_martingale


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda v: outprob.Martingale("jumper", jump=v), "jump"),
        (lambda v: outprob.Martingale("power", epsilon=v), "epsilon"),
        (lambda v: outprob.Martingale("mixture", min_epsilon=v), "min_epsilon"),
        (lambda v: outprob.Martingale("jumper", threshold=v), "threshold"),
        (lambda v: outprob.OnlineFDR("lord++", alpha=v), "alpha"),
        (lambda v: outprob.OnlineFDR("lord++", w0=v), "w0"),
        (lambda v: outprob.OnlineFDR("saffron", lam=v), "lam"),
        (lambda v: outprob.OnlineFDR("addis", tau=v), "tau"),
    ],
)
@pytest.mark.parametrize("value", [True, np.True_, "0.5", b"1"])
def test_real_parameters_are_numbers_not_bools_or_text(make, name, value):
    """§12: a real parameter is a number; ``True`` read as 1.0 was taken
    where 1 is in range (τ = 1, ε = 1, jump = 1, a threshold of 1)."""
    with pytest.raises(TypeError, match=name):
        make(value)


@pytest.mark.parametrize(
    "cls, make, key, bad",
    [
        (outprob.Martingale, lambda: outprob.Martingale("power"), "epsilon", True),
        (outprob.Martingale, lambda: outprob.Martingale("jumper"), "jump", None),
        (outprob.Martingale, lambda: outprob.Martingale("jumper"), "threshold", "100"),
        (outprob.OnlineFDR, lambda: outprob.OnlineFDR("addis"), "tau", True),
        (outprob.OnlineFDR, lambda: outprob.OnlineFDR("lord++"), "alpha", "0.05"),
        (outprob.OnlineConformal, outprob.OnlineConformal, "seed", None),
        (outprob.OnlineConformal, outprob.OnlineConformal, "seed", "5"),
        (outprob.OnlineConformal, outprob.OnlineConformal, "seed", 2**64),
        (outprob.OnlineConformal, outprob.OnlineConformal, "seed", -1),
    ],
)
def test_stored_params_of_the_wrong_kind_are_value_errors(cls, make, key, bad):
    """§12 "Stored state": params checked as the constructor checks them,
    but a ValueError naming the field (a stored None seed was a TypeError)."""
    d = stored(make())
    with pytest.raises(ValueError, match=key):
        cls.from_dict(edited(d, ("params", key), bad))


def test_gamma_needs_at_least_one_term():
    """§5's table: `gamma` has 1 to 2³² terms."""
    with pytest.raises(ValueError, match="gamma"):
        outprob.OnlineFDR("lord++", gamma=[])
    assert outprob.OnlineFDR("lord++", gamma=[0.5]).params["gamma"] == [0.5]


# -- n is a count of §5: at most 2⁵³, a batch that would pass it refused whole ------
def _near_the_end(kind, n):
    """A state that has counted ``n`` values and agrees with itself."""
    if kind == "fdr":
        d = stored(outprob.OnlineFDR("lond"))
        d["state"].update(n=n, clock=n)
        return outprob.OnlineFDR, d
    if kind == "martingale":
        d = stored(outprob.Martingale("power"))
        d["state"]["n"] = n
        return outprob.Martingale, d
    d = stored(outprob.OnlineConformal())
    d["state"].update(n=n, scores=[0.0], counts=[n])
    return outprob.OnlineConformal, d


KINDS = ["fdr", "martingale", "conformal"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [COUNT + 1, 2**64 - 1, 2**64, 2**70])
def test_a_stored_count_beyond_two_to_the_53_is_refused(kind, n):
    cls, d = _near_the_end(kind, n)
    with pytest.raises(ValueError, match=r"\bn\b|'n'|\"n\""):
        cls.from_dict(d)


def _feed(kind, obj, values):
    if kind == "fdr":
        return obj.decide(values)
    if kind == "martingale":
        return obj.update(values)
    return obj.pvalues(values)


@pytest.mark.parametrize("kind", KINDS)
def test_a_batch_past_two_to_the_53_is_refused_whole(kind):
    cls, d = _near_the_end(kind, COUNT - 2)
    obj = cls.from_dict(d)
    before = stored(obj)
    with pytest.raises(ValueError, match="2\\^53"):
        _feed(kind, obj, [0.5, 0.5, 0.5])
    assert stored(obj) == before
    _feed(kind, obj, [0.5, 0.5])
    assert obj.n == COUNT
    with pytest.raises(ValueError, match="2\\^53"):
        _feed(kind, obj, [0.5])
    assert obj.n == COUNT


@pytest.mark.parametrize("value", [2**64, 2**70, -1, 0, 2**33])
@pytest.mark.parametrize(
    "make, name",
    [
        (lambda v: outprob.DecayedFit(10, epochs_per_half_life=v), "epochs_per_half_life"),
        (lambda v: outprob.DecayedFit(10, horizon=v), "horizon"),
        (lambda v: outprob.DecayedFit(10, k=v), "k"),
        (lambda v: outprob.RefitOnDrift(outprob.GaussianScaler().fit([0.0, 1.0]), window=v), "window"),
    ],
)
def test_decayed_and_refit_sizes_are_bounded_for_any_int(make, name, value):
    """§5's table: epochs_per_half_life ∈ [1, 1024], horizon ∈ [1, 64],
    k ∈ [8, 65535], window ∈ [1, 2³²] — any Python int outside is a
    ValueError naming the parameter, never OverflowError."""
    with pytest.raises(ValueError, match=name):
        make(value)


@pytest.mark.parametrize("value", [0.5, 2.0**40 + 1, np.nan, np.inf])
def test_half_life_is_bounded_by_the_core(value):
    """§5's table: half_life ∈ [1, 2⁴⁰] scores, NaN outside every range."""
    with pytest.raises(ValueError, match="half_life"):
        outprob.DecayedFit(value)
    with pytest.raises(ValueError, match="half_life"):
        outprob.RefitOnDrift(outprob.GaussianScaler().fit([0.0, 1.0]), refit="decayed", half_life=value)
    with pytest.raises(ValueError, match="delay"):
        outprob.RefitOnDrift(outprob.GaussianScaler().fit([0.0, 1.0]), delay=2**33)
