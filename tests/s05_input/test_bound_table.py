"""The bounds of size and count parameters (contract §5, "Bounds of size
and count parameters"): one table of the core, every row named by the
contract, checked for a Python or NumPy int of any size.

Oracle: the contract's table. A value outside a bound is a ``ValueError``
naming the parameter (never ``OverflowError`` or an aborted
interpreter), a value inside is not refused for the bound.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st

import outprob
from outprob import _core

from ..strategies import bound_values

CONTRACT = Path(__file__).resolve().parents[2] / "docs" / "contract.md"
X = np.arange(40.0)


# -- §5: every bound in one table of the core, named by the contract -----------------
def _rendered(v):
    sup = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
    if v == 2**64 - 1:
        return "2⁶⁴)"
    if v >= 2**16 and v & (v - 1) == 0:
        return "2" + str(v.bit_length() - 1).translate(sup)
    if v >= 10**4 and str(v).rstrip("0") == "1":
        return "10" + str(len(str(v)) - 1).translate(sup)
    return str(v)


def test_the_contract_table_names_every_bound_of_the_core():
    text = CONTRACT.read_text(encoding="utf-8")
    table = text[text.index("- Bounds of size and count parameters"):text.index("- The ends of the float range")]
    rows = [r for r in table.splitlines() if r.strip().startswith("|")]
    limits = _core.limits()
    assert len({key for key, *_ in limits}) == len(limits) == 21
    for key, name, lo, hi in limits:
        low, high = f"[{_rendered(lo)}, ", _rendered(hi)
        found = [r for r in rows if low in r and (f"{high}]" in r or f"= {high}]" in r or high.endswith(")") and high in r)]
        assert found, (key, name, low, high)


@pytest.mark.parametrize("value", [2**64, 2**70, 10**30, -1, -(2**64)])
@pytest.mark.parametrize(
    "make",
    [
        lambda v: outprob.ConformalScaler(simes_k=v).fit(X),  # unused: conditional=None
        lambda v: outprob.ConformalScaler(mc_simulations=v).fit(X),
        lambda v: outprob.ConformalScaler(conditional="mc", mc_simulations=v).fit(X),
        lambda v: outprob.ConformalScaler(window=v).partial_fit(X),
        lambda v: outprob.ConformalScaler(k=v).partial_fit(X),
        lambda v: outprob.ConformalScaler(seed=v).fit(X),
        lambda v: outprob.ConformalScaler(mc_simulations=v).fit(X).fpr_upper_bound([1.0], method="mc"),
    ],
)
def test_counts_beyond_64_bits_or_negative_are_value_errors(make, value):
    """§5: a Python int of any size is compared with the core's bound."""
    with pytest.raises(ValueError, match=r"must be at (least|most)"):
        make(value)


def test_limits_are_the_python_layers_bounds():
    """§5: the Python constants are the core's numbers."""
    from outprob import metrics, stats
    from outprob._common import validation

    table = {key: (lo, hi) for key, _, lo, hi in _core.limits()}
    assert stats.MAX_ITER == table["maxiter"][1] == 1000
    assert metrics.MAX_BINS == table["bins"][1] == 10**6
    assert metrics.MAX_BIN_COUNTS == table["bin_counts"][1] == 1000
    assert (validation.MIN_K, validation.MAX_K) == table["sketch_k"] == (8, 65535)
    assert validation.MAX_WINDOW == table["window"][1] == 2**32
    assert validation.MAX_COUNT == table["count"][1] == 2**53
    assert table["mc_simulations"] == (100, 10**7)
    assert re.search(r"mc_simulations.*\[100, 10⁷\]", CONTRACT.read_text(encoding="utf-8"))
    assert math.isfinite(float(table["adjusted_n"][1]))



#: Each bound's key and a call that takes the parameter (cheaply: the
#: adjustments that would use a huge value are not asked for).
ENTRY_POINTS = {
    "mc_simulations": lambda v: outprob.ConformalScaler(mc_simulations=v).fit(X[:5]),
    "simes_k": lambda v: outprob.ConformalScaler(simes_k=v, conditional="simes").fit(X[:5]),
    "window": lambda v: outprob.ConformalScaler(window=v).partial_fit(X[:5]),
    "sketch_k": lambda v: outprob.ConformalScaler(k=v).partial_fit(X[:5]),
    "seed": lambda v: outprob.ConformalScaler(seed=v, tie_break="randomized").fit(X[:5]).pvalues([1.0]),
    "top_k": lambda v: outprob.TopKScaler(k=v).fit(X[:5]),
    "em_maxiter": lambda v: outprob.MixtureScaler(maxiter=v).fit([2.0] * 5),
    "maxiter": lambda v: outprob.stats.m_estimate(X[:5], maxiter=v),
    "ddof": lambda v: outprob.stats.std(X[:5], ddof=v),
    "refit_every": lambda v: outprob.GaussianScaler(window=4, refit_every=v).partial_fit(X[:5]),
    "bins": lambda v: outprob.metrics.bin_edges(np.linspace(0, 1, 5), v),
    "n_grid": lambda v: outprob.Martingale("mixture", n_grid=v).update([0.5]),
}


@given(data=st.data())
def test_every_count_is_refused_exactly_outside_its_bound(data):
    """§5: a parameter outside the core's bound is a ValueError naming it
    (whatever the size of the int); inside, no error speaks of the bound."""
    key = data.draw(st.sampled_from(sorted(ENTRY_POINTS)))
    name, lo, hi = {k: (n, a, b) for k, n, a, b in _core.limits()}[key]
    value = data.draw(bound_values(lo, hi))
    try:
        ENTRY_POINTS[key](value)
    except ValueError as e:
        message = str(e)
    else:
        message = None
    # (bins are named by the caller's parameter, k or n_bins, and below 1
    # are "not a positive int")
    named = r"\w+" if key == "bins" else re.escape(name)
    bound = re.compile(rf"{named}:? must be (at least {lo}|at most {hi}|a positive int)")
    if lo <= value <= hi:
        assert message is None or not bound.search(message), (key, value, message)
    else:
        assert message is not None and bound.search(message), (key, value, message)
