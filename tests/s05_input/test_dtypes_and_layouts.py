"""contract §5, the input contract: one test per bullet, plus fuzzing for
crashes and concurrent use from several threads."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.testing import assert_array_equal

import outprob
import outprob.reference as ref
from outprob import stats

NAMES = list(outprob.VARIANTS)
quiet = pytest.mark.filterwarnings("ignore::outprob.OutprobWarning")


def scores(n=200, seed=0):
    rng = np.random.default_rng(seed)
    return np.r_[rng.lognormal(size=n - 5), rng.uniform(20, 40, size=5)]


# -- Input: dtypes and memory layouts ----------------------------------------------------


@quiet
@pytest.mark.parametrize("name", NAMES)
def test_float32_in_float32_out(name):
    x = scores().astype(np.float32)
    s = outprob.scaler(name)
    assert s.fit_transform(x).dtype == np.float32
    assert s.transform(x[:5]).dtype == np.float32
    assert s.transform(x[:5].astype(np.float64)).dtype == np.float64


@quiet
@pytest.mark.parametrize("name", NAMES)
def test_integers_booleans_and_lists_become_float64(name):
    ints = np.array([1, 2, 2, 3, 3, 3, 4, 9, 20], dtype=np.int32)
    want = outprob.scaler(name).fit_transform(ints.astype(np.float64))
    for x in (ints, ints.astype(np.uint8), ints.tolist(), tuple(ints.tolist())):
        p = outprob.scaler(name).fit_transform(x)
        assert p.dtype == np.float64
        assert_array_equal(p, want)
    b = outprob.scaler(name).fit_transform(np.array([True, False, False, False, True]))
    assert b.dtype == np.float64


def layouts(x: np.ndarray):
    """The same scores as read-only, strided, reversed and big-endian arrays."""
    ro = x.copy()
    ro.flags.writeable = False
    wide = np.empty(2 * x.size, dtype=x.dtype)
    wide[::2] = x
    rev = x[::-1].copy()[::-1]
    big = x.astype(x.dtype.newbyteorder(">"))
    return {"read-only": ro, "strided": wide[::2], "negative-stride": rev, "big-endian": big}


@quiet
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_any_layout_gives_the_same_result_and_is_not_modified(name, dtype):
    x = scores().astype(dtype)
    want = outprob.scaler(name).fit_transform(x)
    for label, arr in layouts(x).items():
        before = arr.copy()
        s = outprob.scaler(name, higher_is_outlier=False)
        s.fit(arr)
        p = outprob.scaler(name).fit_transform(arr)
        assert_array_equal(p, want, err_msg=label)
        assert p.dtype == dtype
        s.transform(arr)
        assert_array_equal(arr, before, err_msg=label)  # never modified
        assert arr.dtype == before.dtype


@pytest.mark.parametrize("f", [stats.median, stats.nmad, stats.niqr, stats.mean, stats.std])
def test_estimators_accept_any_layout_and_leave_it_alone(f):
    x = scores()
    want = f(x)
    for label, arr in layouts(x).items():
        before = arr.copy()
        assert f(arr) == want, label
        assert_array_equal(arr, before)


def test_other_dtypes_are_refused():
    with pytest.raises(TypeError, match="real numbers"):
        outprob.GaussianScaler().fit(np.array([1 + 2j, 3 + 0j]))
    with pytest.raises(TypeError, match="real numbers"):
        outprob.GaussianScaler().fit(["a", "b"])
    with pytest.raises(TypeError, match="real numbers"):
        stats.median([object(), object()])


# -- Shape -------------------------------------------------------------------------------


@quiet
def test_shapes():
    X = np.column_stack([scores(seed=1), scores(seed=2) * 100])
    s = outprob.scaler("mean_nmad").fit(X)
    assert s.transform(X).shape == X.shape
    assert_array_equal(s.transform(X)[:, 1], outprob.scaler("mean_nmad").fit_transform(X[:, 1]))
    with pytest.raises(ValueError, match="1-D .* or 2-D"):
        outprob.GaussianScaler().fit(np.ones((3, 3, 3)))
    with pytest.raises(ValueError, match="no score column"):
        outprob.GaussianScaler().fit(np.ones((3, 0)))
    with pytest.raises(ValueError, match="1-D .* or 2-D"):
        outprob.GaussianScaler().fit(3.0)
    one = outprob.scaler("mean_std").fit(scores())
    assert one.transform(np.ones((2, 3))).shape == (2, 3)  # 1-D fit maps element-wise
    assert isinstance(one.transform(25.0), np.floating)  # scalar in, scalar out


# -- Missing values ---------------------------------------------------------------------------


@quiet
@pytest.mark.parametrize("name", NAMES)
def test_nan_is_omitted_in_fit_and_kept_in_transform(name):
    x = scores()
    holes = x.copy()
    holes[[3, 50, 120]] = np.nan
    clean = np.delete(x, [3, 50, 120])
    a = outprob.scaler(name).fit(holes)
    b = outprob.scaler(name).fit(clean)
    assert a.get_params() == b.get_params()
    for attr in ("center_", "scale_", "min_", "max_"):
        if hasattr(b, attr):
            assert getattr(a, attr) == getattr(b, attr)
    p = a.transform(holes)
    assert np.isnan(p[[3, 50, 120]]).all()
    assert_array_equal(np.delete(p, [3, 50, 120]), b.transform(clean))


@pytest.mark.parametrize("name", NAMES)
def test_nan_policy_raise(name):
    x = scores()
    x[[7, 9]] = np.nan
    with pytest.raises(ValueError, match=r"2 NaN values \(first at index 7\)"):
        outprob.scaler(name, nan_policy="raise").fit(x)
    with pytest.raises(ValueError, match="nan_policy"):
        outprob.scaler(name, nan_policy="ignore").fit(x)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_infinite_scores_in_fit_are_refused_with_count_and_index(name, bad):
    x = scores()
    x[[11, 40, 41]] = bad
    with pytest.raises(ValueError, match=r"3 infinite values \(first at index 11\)"):
        outprob.scaler(name).fit(x)
    with pytest.raises(ValueError, match=r"1 infinite value \(first at index 0\)"):
        stats.median([bad, 1.0])


@quiet
@pytest.mark.parametrize("name", NAMES)
def test_infinite_scores_in_transform(name):
    s = outprob.scaler(name).fit(scores())
    p = s.transform([np.inf, -np.inf, np.nan])
    assert p[0] == 1.0 and p[1] == 0.0 and np.isnan(p[2])
    q = outprob.scaler(name, higher_is_outlier=False).fit(-scores()).transform([-np.inf, np.inf])
    assert_array_equal(q, [1.0, 0.0])


# -- Empty input -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_empty_input(name):
    with pytest.raises(ValueError, match="empty"):
        outprob.scaler(name).fit([])
    with pytest.raises(ValueError, match="all 3 scores are NaN"):
        outprob.scaler(name).fit([np.nan] * 3)
    with pytest.raises(ValueError, match="empty"):
        stats.nmad(np.array([], dtype=np.float32))


# -- Zero scale --------------------------------------------------------------------------------------


def test_zero_nmad_falls_back_to_niqr_with_warning():
    x = [1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 3.0, 4.0, 5.0]  # 5 of 9 tie: nMAD = 0
    with pytest.warns(outprob.ZeroScaleWarning, match="'nmad' is zero.*fell back to 'niqr'"):
        s = outprob.GaussianScaler("median", "nmad").fit(x)
    assert s.scale_used_ == "niqr"
    assert s.scale_ == ref.niqr(x) > 0


def test_zero_nmad_and_niqr_fall_back_to_std():
    x = [1.0] * 8 + [5.0]
    with pytest.warns(outprob.ZeroScaleWarning, match="fell back to 'std'"):
        s = outprob.GaussianScaler("mean", "nmad").fit(x)
    assert s.scale_used_ == "std"
    assert s.scale_ == pytest.approx(ref.std(x), rel=1e-12)
    with pytest.warns(outprob.ZeroScaleWarning, match="fell back to 'std'"):
        t = outprob.GaussianScaler("median", "trimmed_std", trim=0.2).fit(x)
    assert t.scale_ == pytest.approx(ref.std(x), rel=1e-12)


@pytest.mark.parametrize("name", [n for n in NAMES if n != "linear"])
def test_constant_scores_give_zero_probabilities(name):
    with pytest.warns(outprob.ZeroScaleWarning, match="constant"):
        s = outprob.scaler(name)
        p = s.fit_transform([4.2] * 10)
    assert_array_equal(p, np.zeros(10))
    assert s.scale_ == 0.0 and s.center_ == 4.2
    assert_array_equal(s.transform([4.0, 4.2, 5.0, np.nan])[:3], [0.0, 0.0, 1.0])


def test_constant_scores_linear_and_single_score():
    assert_array_equal(outprob.LinearScaler().fit_transform([2.0, 2.0]), [0.0, 0.0])
    with pytest.warns(outprob.ZeroScaleWarning):
        p = outprob.GaussianScaler("mean", "std", ddof=1).fit_transform([3.0])
    assert_array_equal(p, [0.0])


# -- Non-convergence ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["huber", "tukey"])
def test_non_convergence_warns_and_keeps_last_iterate(name):
    x = scores(2000)
    with pytest.warns(outprob.ConvergenceWarning, match="did not converge"):
        s = outprob.scaler(name, maxiter=3).fit(x)
    assert s.converged_ is False and s.n_iter_ == 3
    assert np.isfinite(s.center_) and s.scale_ > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", outprob.ConvergenceWarning)
        done = outprob.scaler(name, maxiter=200).fit(x)
    assert done.converged_ is True and done.n_iter_ < 200


# -- Never a crash -----------------------------------------------------------------------------------------------

PanicException = type("Unreachable", (BaseException,), {})
try:  # PyO3's panic exception derives from BaseException
    from pyo3_runtime import PanicException  # type: ignore[no-redef]  # noqa: F811
except ImportError:
    pass

any_floats = hnp.arrays(
    st.sampled_from([np.float64, np.float32]),
    st.integers(0, 40) | st.tuples(st.integers(0, 10), st.integers(0, 3)),
    elements=st.floats(allow_nan=True, allow_infinity=True, width=32),
)


@given(
    x=any_floats,
    center=st.sampled_from(["mean", "median", "trimmed_mean", "huber", "tukey", "bogus"])
    | st.floats(allow_nan=True),
    scale=st.sampled_from(["std", "nmad", "niqr", "trimmed_std", "huber", "tukey", "?"])
    | st.floats(allow_nan=True),
    trim=st.floats(-1, 2),
    ddof=st.integers(0, 3),
    maxiter=st.integers(1, 5),
    nan_policy=st.sampled_from(["omit", "raise"]),
    new=any_floats,
)
@quiet
def test_arbitrary_input_gives_results_or_clear_errors(
    x, center, scale, trim, ddof, maxiter, nan_policy, new
):
    s = outprob.GaussianScaler(
        center, scale, trim=trim, ddof=ddof, maxiter=maxiter, nan_policy=nan_policy
    )
    try:
        s.fit(x)
    except (ValueError, TypeError) as e:
        assert str(e)
        return
    except PanicException:  # pragma: no cover - the failure this test exists for
        pytest.fail("a Rust panic reached Python")
    assert np.isfinite(s.center_).all() and (np.asarray(s.scale_) >= 0).all()
    p = s.transform(x)
    finite = np.isfinite(x)
    assert np.all((p[finite] >= 0) & (p[finite] <= 1))
    assert np.array_equal(np.isnan(p), np.isnan(x))
    try:
        s.transform(new)
    except ValueError as e:  # shape mismatch with a 2-D fit
        assert "score columns" in str(e)


@given(x=any_floats, q=st.floats(-1, 2), alpha=st.floats(-1, 2))
def test_estimators_on_arbitrary_input(x, q, alpha):
    for f in (
        stats.median,
        stats.nmad,
        stats.niqr,
        stats.mean,
        stats.std,
        lambda a: stats.quantile(a, q),
        lambda a: stats.upper_trimmed_mean(a, alpha),
        lambda a: stats.trimmed_std(a, 0.0, alpha),
        lambda a: stats.m_estimate(a, maxiter=3),
    ):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", outprob.OutprobWarning)
                v = f(x)
        except (ValueError, TypeError):
            continue
        assert np.all(np.isfinite(v))


# -- Threads -------------------------------------------------------------------------------------------


@quiet
def test_concurrent_transforms_are_identical():
    x = np.random.default_rng(5).lognormal(size=200_000)
    scalers = {n: outprob.scaler(n).fit(x) for n in NAMES}
    want = {n: s.transform(x) for n, s in scalers.items()}
    got: dict = {}
    errors: list = []

    def work(i: int) -> None:
        try:
            for n in NAMES[i % 3 :: 1]:
                got[(i, n)] = scalers[n].transform(x)
                outprob.scaler(n).fit(x)  # fits run concurrently too
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for (_, n), p in got.items():
        assert_array_equal(p, want[n])
