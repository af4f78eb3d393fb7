"""Comparing transformations (contract §6): Holm–Bonferroni against statsmodels,
mean ranks against per-row ``scipy.stats.rankdata``, pairwise p-values
against ``scipy.stats.wilcoxon``, cliques against a brute-force search over
runs, input validation and serialisation."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.polynomial import polynomial as P
from numpy.testing import assert_allclose, assert_array_equal
from scipy.stats import PermutationMethod, rankdata, wilcoxon
from statsmodels.stats import multitest

from outprob.compare import Comparison, compare, holm_bonferroni


def multipletests(p, method):
    """statsmodels' ``multipletests`` (the oracle for Holm), without the
    ``gc.collect()`` its Holm branch runs on every call: with the whole test
    suite's objects alive that collection costs ~0.1 s per call and
    dominated this module's run time; it has no effect on the result."""
    collect = gc.collect
    gc.collect = lambda *args: 0  # type: ignore[assignment]
    try:
        return multitest.multipletests(p, method=method)
    finally:
        gc.collect = collect


# ---------------------------------------------------------------- strategies

p_value_arrays = hnp.arrays(
    np.float64,
    st.integers(1, 60),
    elements=st.floats(0.0, 1.0) | st.sampled_from([0.0, 0.01, 0.05, 0.5, 1.0]),
)


@st.composite
def tables(draw, max_sets: int = 60, max_methods: int = 6) -> np.ndarray:
    """(n_sets, n_methods) tables: continuous values, or few distinct values
    (ties within rows, zero differences, identical columns). Sizes cover
    every p-value path: exact up to 50 score sets (with and without ties),
    asymptotic above."""
    n = draw(st.integers(1, max_sets))
    k = draw(st.integers(2, max_methods))
    if draw(st.booleans()):
        elements = st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False)
    else:
        elements = st.integers(0, 3).map(float)
    t = draw(hnp.arrays(np.float64, (n, k), elements=elements))
    if k > 2 and draw(st.booleans()):
        t[:, draw(st.integers(1, k - 1))] = t[:, 0]  # a duplicated column
    return t


def signed_ranks(d, zero_method):
    """Ranks of |d| over the non-zero differences, zeros handled as
    ``scipy.stats.wilcoxon`` documents for each ``zero_method``."""
    nonzero = d != 0
    ranks = rankdata(np.abs(d[nonzero]) if zero_method == "wilcox" else np.abs(d))
    return ranks if zero_method == "wilcox" else ranks[nonzero]


def enumerated_p_value(d, zero_method):
    """Two-sided p-value of the signed-rank statistic over all 2ⁿ sign
    patterns of the differences, by brute force: the definition of the
    exact permutation test (SciPy's ``PermutationMethod`` computes the same,
    in seconds from n = 14 on)."""
    ranks = signed_ranks(d, zero_method)
    signs = 1 - 2 * ((np.arange(2**ranks.size)[:, None] >> np.arange(ranks.size)) & 1)
    null = ((signs * np.sign(d[d != 0])) > 0) @ ranks
    observed = ranks[d[d != 0] > 0].sum()
    return min(1.0, 2 * min(np.mean(null <= observed), np.mean(null >= observed)))


def generating_function_p_value(d, zero_method):
    """The same p-value from the generating function of R⁺,
    Π_i (1 + x^(2 r_i)) / 2, multiplied out as polynomials."""
    ranks = signed_ranks(d, zero_method)
    doubled = np.rint(2 * ranks).astype(int)
    pmf = np.array([1.0])
    for r in doubled:
        factor = np.zeros(r + 1)
        factor[0] = factor[r] = 0.5
        pmf = P.polymul(pmf, factor)
    observed = int(doubled[d[d != 0] > 0].sum())
    return min(1.0, 2 * min(pmf[: observed + 1].sum(), pmf[observed:].sum()))


def expected_wilcoxon(a, b, zero_method="wilcox", **kwargs):
    """The p-value ``compare`` promises: exact up to 50 differences, SciPy's
    normal approximation above. Oracles: SciPy's exact test (no ties or
    zeros), enumeration of every sign pattern (ties or zeros, up to 16
    differences), the generating function of the statistic (ties or zeros,
    17 to 50 differences)."""
    d = a - b
    if np.all(d == 0):  # contract: no non-zero difference -> p = 1
        return 1.0
    if kwargs or d.size > 50:
        return wilcoxon(a, b, zero_method=zero_method, **kwargs).pvalue
    if np.all(d != 0) and np.unique(np.abs(d)).size == d.size:
        return wilcoxon(a, b, zero_method=zero_method, method="exact").pvalue
    if d.size <= 16:
        return enumerated_p_value(d, zero_method)
    return generating_function_p_value(d, zero_method)


# ---------------------------------------------------------------- Holm


@given(p=p_value_arrays)
def test_holm_equals_statsmodels(p):
    assert_allclose(holm_bonferroni(p), multipletests(p, method="holm")[1], rtol=1e-12, atol=0)


def test_holm_hand_example():
    # m = 4; sorted 0.005, 0.01, 0.03, 0.04 -> 4·0.005, 3·0.01, 2·0.03,
    # max(2·0.03, 1·0.04), back in input order.
    got = holm_bonferroni([0.01, 0.04, 0.03, 0.005])
    assert_allclose(got, [0.03, 0.06, 0.06, 0.02], rtol=1e-15)
    # Capped at 1; monotone in the sorted order.
    assert_allclose(holm_bonferroni([0.3, 0.6, 0.2]), [0.6, 0.6, 0.6], rtol=1e-15)
    assert_array_equal(holm_bonferroni([0.9, 0.8]), [1.0, 1.0])


def test_holm_keeps_shape_and_order():
    p = np.array([[0.04, 0.001], [0.2, 0.01]])
    got = holm_bonferroni(p)
    assert got.shape == (2, 2)
    assert_allclose(got.ravel(), multipletests(p.ravel(), method="holm")[1], rtol=1e-12)
    assert holm_bonferroni(0.2).shape == ()
    assert holm_bonferroni([]).shape == (0,)


@pytest.mark.parametrize("bad", [[0.1, np.nan], [0.1, -0.01], [1.5], [np.inf]])
def test_holm_rejects_invalid(bad):
    with pytest.raises(ValueError, match="p_values"):
        holm_bonferroni(bad)


# ---------------------------------------------------------------- mean ranks


@given(t=tables())
def test_mean_ranks_equal_rankdata_per_row(t):
    want = np.mean([rankdata(row) for row in t], axis=0)
    assert_allclose(compare(t).mean_ranks, want, rtol=1e-12)
    want_high = np.mean([rankdata(-row) for row in t], axis=0)
    assert_allclose(compare(t, lower_is_better=False).mean_ranks, want_high, rtol=1e-12)


def test_mean_ranks_hand_example_with_ties():
    t = [[1.0, 1.0, 2.0], [3.0, 2.0, 1.0]]
    # Row ranks (1.5, 1.5, 3) and (3, 2, 1).
    assert_array_equal(compare(t).mean_ranks, [2.25, 1.75, 2.0])
    # Higher is better: (2.5, 2.5, 1) and (1, 2, 3).
    assert_array_equal(compare(t, lower_is_better=False).mean_ranks, [1.75, 2.25, 2.0])


# ---------------------------------------------------------------- Wilcoxon


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
@given(t=tables())
def test_pairwise_p_values_equal_scipy(zero_method, t):
    r = compare(t, zero_method=zero_method)
    k = t.shape[1]
    assert_array_equal(np.diag(r.p_values), np.ones(k))
    assert_array_equal(r.p_values, r.p_values.T)
    assert_array_equal(r.adjusted_p_values, r.adjusted_p_values.T)
    for i in range(k):
        for j in range(i + 1, k):
            want = expected_wilcoxon(t[:, i], t[:, j], zero_method)
            assert_allclose(r.p_values[i, j], want, rtol=1e-12)
            exact = t.shape[0] <= 50 or np.all(t[:, i] == t[:, j])
            assert r.p_value_methods[i, j] == ("exact" if exact else "asymptotic")
    iu = np.triu_indices(k, 1)
    holm = multipletests(r.p_values[iu], method="holm")[1]
    assert_allclose(r.adjusted_p_values[iu], holm, rtol=1e-12)
    assert_array_equal(np.diag(r.adjusted_p_values), np.ones(k))
    assert_array_equal(r.significant, (r.adjusted_p_values < r.alpha) & ~np.eye(k, dtype=bool))


def test_method_is_passed_to_scipy():
    rng = np.random.default_rng(3)
    t = rng.integers(0, 4, size=(12, 3)).astype(float)  # ties: "auto" would permute
    r = compare(t, method="asymptotic")
    for i, j in [(0, 1), (0, 2), (1, 2)]:
        want = expected_wilcoxon(t[:, i], t[:, j], method="asymptotic")
        assert_allclose(r.p_values[i, j], want, rtol=1e-12)
    assert r.method == "asymptotic" and r.to_dict()["method"] == "asymptotic"
    assert "normal approximation (tie-corrected) for 3 pairs" in str(r)


def test_permutation_method_is_passed_to_scipy():
    rng = np.random.default_rng(4)
    t = rng.integers(0, 4, size=(10, 2)).astype(float)
    how = PermutationMethod(n_resamples=500, random_state=np.random.default_rng(1))
    r = compare(t, method=how)
    want = wilcoxon(
        t[:, 0], t[:, 1],
        method=PermutationMethod(n_resamples=500, random_state=np.random.default_rng(1)),
    ).pvalue
    assert r.p_values[0, 1] == want
    assert r.p_value_methods[0, 1] == "scipy" and "scipy.stats.wilcoxon" in str(r)


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
def test_exact_p_values_with_ties_equal_scipy_exact_permutation_test(zero_method):
    # SciPy's own exact permutation test (every sign pattern; seconds per
    # call from 14 differences on), with ties and zeros.
    rng = np.random.default_rng(5)
    for n in (9, 12):
        a, b = rng.integers(0, 5, size=(2, n)).astype(float)
        want = wilcoxon(a, b, zero_method=zero_method, method=PermutationMethod(n_resamples=np.inf)).pvalue
        r = compare(np.column_stack([a, b]), zero_method=zero_method)
        assert_allclose(r.p_values[0, 1], want, rtol=1e-12)


def test_many_methods_and_score_sets_say_how_p_values_were_computed():
    rng = np.random.default_rng(6)
    t = rng.integers(0, 5, size=(200, 12)).astype(float)  # ties everywhere
    r = compare(t)
    iu = np.triu_indices(12, 1)
    assert set(r.p_value_methods[iu]) == {"asymptotic"}
    assert "p-values: normal approximation (tie-corrected) for 66 pairs" in str(r)
    small = compare(t[:40])
    assert set(small.p_value_methods[iu]) == {"exact"}
    assert "p-values: exact for 66 pairs" in str(small)


def test_unknown_method_is_refused():
    with pytest.raises(ValueError, match="method must be one of"):
        compare(np.arange(6.0).reshape(3, 2), method="permutation")


@pytest.mark.parametrize("n", [1, 2, 7, 30])
def test_identical_columns_give_p_one_without_warning(n):
    col = np.linspace(0.1, 0.9, n)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = compare(np.column_stack([col, col, col + 1.0]))
    assert r.p_values[0, 1] == 1.0
    assert r.adjusted_p_values[0, 1] == 1.0


@given(t=tables())
def test_higher_is_better_equals_negated_table(t):
    a = compare(t, lower_is_better=False)
    b = compare(-t)
    assert_array_equal(a.mean_ranks, b.mean_ranks)
    assert a.order == b.order and a.cliques == b.cliques
    assert_allclose(a.p_values, b.p_values, rtol=1e-9)
    assert_allclose(a.adjusted_p_values, b.adjusted_p_values, rtol=1e-9)
    assert a.lower_is_better is False


# ---------------------------------------------------------------- cliques


def one_best_table(n: int = 12) -> dict:
    """'best' wins every row; 'a' and 'b' trade places with equal margins."""
    rng = np.random.default_rng(7)
    base = rng.uniform(1.0, 2.0, n)
    swing = np.where(np.arange(n) % 2 == 0, 0.1, -0.1) * rng.uniform(0.5, 1.0, n)
    return {"a": base + swing, "b": base - swing, "best": base - 0.5}


def test_cliques_one_clearly_best_two_indistinguishable():
    r = compare(one_best_table())
    assert r.order == ("best", "a", "b")
    assert r.ranking() == [("best", 1.0), ("a", 2.5), ("b", 2.5)]
    # 12 wins out of 12: exact p = 2 / 2**12 for both pairs with 'best'.
    assert r.p_values[2, 0] == r.p_values[2, 1] == 2.0 / 2**12
    assert r.significant[2, 0] and r.significant[2, 1] and not r.significant[0, 1]
    assert r.cliques == (("a", "b"),)


def test_cliques_when_nothing_or_everything_differs():
    n = 10
    strict = np.column_stack([np.arange(n) + c for c in (0.0, 100.0, 200.0)])
    assert compare(strict).cliques == ()
    assert compare(strict).significant.sum() == 6  # every pair, both ways
    same = np.column_stack([np.arange(n)] * 4)
    assert compare(same, list("wxyz")).cliques == (("w", "x", "y", "z"),)


def make_comparison(ranks, adjusted, alpha=0.05):
    k = len(ranks)
    return Comparison(tuple(f"m{i}" for i in range(k)), ranks, np.ones((k, k)), adjusted, alpha, 10)


def test_cliques_overlap_when_significance_is_not_transitive():
    adj = np.full((4, 4), 0.5)
    adj[0, 2] = adj[2, 0] = adj[0, 3] = adj[3, 0] = adj[1, 3] = adj[3, 1] = 0.01
    r = make_comparison([1.0, 2.0, 3.0, 4.0], adj)
    assert r.cliques == (("m0", "m1"), ("m1", "m2"), ("m2", "m3"))
    adj[0, 3] = adj[3, 0] = adj[1, 3] = adj[3, 1] = 0.5
    assert make_comparison([1.0, 2.0, 3.0, 4.0], adj).cliques == (("m0", "m1"), ("m1", "m2", "m3"))


def brute_force_cliques(order, sig):
    """Every run of >= 2 consecutive methods without a significant pair,
    minus the runs inside another one."""
    k = len(order)

    def clean(a, b):
        return not any(sig[i][j] for i in range(a, b + 1) for j in range(a, b + 1))

    runs = [(a, b) for a in range(k) for b in range(a + 1, k) if clean(a, b)]
    maximal = [(a, b) for a, b in runs if not any((c, d) != (a, b) and c <= a and b <= d for c, d in runs)]
    return tuple(tuple(order[a : b + 1]) for a, b in sorted(maximal))


@st.composite
def comparisons(draw):
    k = draw(st.integers(2, 8))
    ranks = draw(hnp.arrays(np.float64, k, elements=st.sampled_from([1.0, 1.5, 2.0, 2.5, 3.0, 4.0])))
    upper = draw(hnp.arrays(np.float64, k * (k - 1) // 2, elements=st.sampled_from([0.001, 0.04, 0.2, 1.0])))
    adj = np.ones((k, k))
    iu = np.triu_indices(k, 1)
    adj[iu] = upper
    adj.T[iu] = upper
    return make_comparison(ranks, adj)


@given(r=comparisons())
def test_cliques_invariants(r):
    order = r.order
    idx = {m: r.methods.index(m) for m in order}
    sig = [[bool(r.significant[idx[a], idx[b]]) for b in order] for a in order]
    cliques = r.cliques
    assert cliques == brute_force_cliques(order, sig)
    for clique in cliques:
        assert len(clique) >= 2
        assert not any(r.significant[idx[a], idx[b]] for a in clique for b in clique)
    for a, b in zip(order, order[1:]):
        if not r.significant[idx[a], idx[b]]:
            assert any(a in c and b in c for c in cliques)
    # Mean-rank order, ties in input order.
    assert list(order) == [r.methods[i] for i in sorted(range(r.n_methods), key=lambda i: (r.mean_ranks[i], i))]


@given(t=tables())
def test_cliques_invariants_on_data(t):
    r = compare(t)
    order = r.order
    idx = {m: r.methods.index(m) for m in order}
    sig = [[bool(r.significant[idx[a], idx[b]]) for b in order] for a in order]
    assert r.cliques == brute_force_cliques(order, sig)


# ---------------------------------------------------------------- input


def test_input_forms_agree():
    d = one_best_table()
    from_mapping = compare(d)
    from_array = compare(np.column_stack(list(d.values())), methods=list(d))
    assert from_mapping.methods == from_array.methods == ("a", "b", "best")
    assert_array_equal(from_mapping.p_values, from_array.p_values)
    assert compare(np.column_stack(list(d.values()))).methods == ("m0", "m1", "m2")
    # methods= selects and orders the columns of a mapping.
    sub = compare(d, methods=["best", "a"])
    assert sub.methods == ("best", "a")
    assert_array_equal(sub.p_values, from_mapping.p_values[np.ix_([2, 0], [2, 0])])
    assert compare([[1, 2], [3, 1]]).n_sets == 2  # integers, nested lists


def test_dataframe_input():
    pd = pytest.importorskip("pandas")
    d = one_best_table()
    df = pd.DataFrame(d)
    r = compare(df)
    want = compare(np.column_stack(list(d.values())), methods=list(d))
    assert r.methods == want.methods
    assert_array_equal(r.mean_ranks, want.mean_ranks)
    assert_array_equal(r.p_values, want.p_values)
    assert compare(df, methods=["b", "best"]).methods == ("b", "best")
    with pytest.raises(ValueError, match="unique"):
        compare(pd.DataFrame(np.ones((3, 2)), columns=["x", "x"]))


def test_pandas_and_matplotlib_are_not_imported():
    code = "import sys, outprob.compare; print('pandas' in sys.modules, 'matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.parametrize(
    "table, methods, message",
    [
        ([[1.0], [2.0]], None, "at least 2 methods"),
        ({"only": [1.0, 2.0]}, None, "at least 2 methods"),
        (np.empty((0, 3)), None, "1 score set"),
        ([1.0, 2.0, 3.0], None, "2-D"),
        (np.ones((2, 2, 2)), None, "2-D"),
        ([[1.0, 2.0]], ["a"], "2 columns"),
        ([[1.0, 2.0]], ["a", "a"], "unique"),
        ([[1.0, 2.0]], [1, "1"], "unique"),
        ({"a": [1.0, 2.0], "b": [1.0]}, None, "same number of values"),
        ({"a": [[1.0, 2.0]], "b": [1.0]}, None, "1-D"),
        ({"a": [1.0], "b": [2.0]}, ["a", "c"], "unknown methods"),
    ],
)
def test_invalid_tables(table, methods, message):
    with pytest.raises(ValueError, match=message):
        compare(table, methods)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_value_names_row_and_method(bad):
    t = np.ones((4, 3))
    t[2, 1] = bad
    t[3, 0] = np.nan  # a later one is not reported
    with pytest.raises(ValueError, match=r"row 2, method 'beta'"):
        compare(t, ["alpha", "beta", "gamma"])
    with pytest.raises(ValueError, match=r"row 2, method 'm1'"):
        compare({"m0": t[:, 0], "m1": t[:, 1], "m2": t[:, 2]})


def test_invalid_options():
    t = np.arange(6.0).reshape(3, 2)
    for alpha in (0.0, 1.0, -0.1, np.nan):
        with pytest.raises(ValueError, match="alpha"):
            compare(t, alpha=alpha)
    with pytest.raises(TypeError, match="alpha"):
        compare(t, alpha="0.05")
    with pytest.raises(ValueError, match="zero_method"):
        compare(t, zero_method="none")
    with pytest.raises(TypeError, match="real numbers"):
        compare([["a", "b"], ["c", "d"]])


# ---------------------------------------------------------------- result object


def test_result_is_immutable():
    r = compare(one_best_table())
    with pytest.raises(AttributeError):
        r.alpha = 0.1
    with pytest.raises(ValueError):
        r.p_values[0, 1] = 0.0


@given(t=tables())
def test_to_dict_round_trips_through_json(t):
    r = compare(t, alpha=0.1)
    d = r.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert d["methods"] == list(r.methods) and d["alpha"] == 0.1
    assert d["cliques"] == [list(c) for c in r.cliques]
    back = Comparison(
        d["methods"], d["mean_ranks"], d["p_values"], d["adjusted_p_values"], d["alpha"], d["n_sets"]
    )
    assert_array_equal(back.adjusted_p_values, r.adjusted_p_values)
    assert back.cliques == r.cliques


def test_str_and_repr():
    r = compare(one_best_table(), alpha=0.01)
    text = str(r)
    assert "3 methods over 12 score sets (lower is better)" in text
    assert "alpha = 0.01" in text
    assert "best - a" in text and "best - b" in text and "a - b" not in text
    assert text.rstrip().endswith("cliques: a, b")
    assert repr(r) == "Comparison(methods=('a', 'b', 'best'), n_sets=12, alpha=0.01)"
    pairs = r.pairwise()
    assert [(p.first, p.second) for p in pairs] == [("a", "b"), ("a", "best"), ("b", "best")]
    assert [p.significant for p in pairs] == [False, True, True]


def test_plot_without_matplotlib_raises_clear_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match="matplotlib"):
        compare(one_best_table()).plot()


def test_plot_draws_every_method_and_clique():
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    r = compare(one_best_table())
    ax = Figure().subplots()
    assert r.plot(ax) is ax
    texts = [t.get_text() for t in ax.texts]
    for m, rank in r.ranking():
        assert f"{m} ({rank:.2f})" in texts
    bars = [line for line in ax.lines if line.get_linewidth() == 3]
    assert len(bars) == len(r.cliques) == 1
    # Two tied methods (both at rank 2.5): a bar half a rank wide, not a dot.
    assert_allclose(sorted(bars[0].get_xdata()), [2.5 - 0.25, 2.5 + 0.25])


def test_to_frame_ranks_and_pairs():
    pd = pytest.importorskip("pandas")
    r = compare(one_best_table())
    ranks = r.to_frame()
    assert list(ranks.index) == list(r.order) and ranks.index.name == "method"
    assert_array_equal(ranks["mean_rank"].to_numpy(), [v for _, v in r.ranking()])
    pairs = r.to_frame("pairs")
    assert list(pairs.columns) == ["first", "second", "p_value", "adjusted_p_value", "significant", "p_value_method"]
    for row, pair in zip(pairs.itertuples(index=False), r.pairwise()):
        assert (row.first, row.second, row.p_value, row.adjusted_p_value, row.significant) == tuple(pair)
        assert row.p_value_method == "exact"
    assert ranks.attrs["n_sets"] == pairs.attrs["n_sets"] == 12
    with pytest.raises(ValueError, match="kind"):
        r.to_frame("cliques")
    assert isinstance(ranks, pd.DataFrame)


def test_to_frame_without_pandas_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"outprob\[pandas\]"):
        compare(one_best_table()).to_frame()
