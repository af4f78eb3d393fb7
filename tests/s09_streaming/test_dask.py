"""``outprob.dask`` on a real LocalCluster with worker processes (contract §9,
"Exact distributed fit"): the exact fit equals the in-memory fit, the
sketch fit's bounds hold, transform is lazy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

import outprob  # noqa: E402
import outprob.dask as odask  # noqa: E402
from outprob import GaussianScaler, LinearScaler


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as c:
        yield c


def in_memory(scaler, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return scaler.fit(x)


def assert_same_fit(got, want, name):
    m_est = name in ("huber", "tukey")
    if m_est:
        assert got.center_ == pytest.approx(want.center_, rel=1e-12, abs=1e-12 * want.scale_)
        assert got.scale_ == pytest.approx(want.scale_, rel=1e-12)
        return
    assert got.center_ == want.center_, name
    assert got.scale_used_ == want.scale_used_
    if got.scale_used_ in ("std", "trimmed_std"):
        assert got.scale_ == pytest.approx(want.scale_, rel=1e-15, abs=0), name
    else:
        assert got.scale_ == want.scale_, name


def scores(rng, n):
    x = rng.lognormal(size=n)
    x[rng.integers(n, size=n // 50)] = 50 + rng.pareto(1.0, n // 50)
    return x


# Every variant on one uneven layout with an empty chunk; the others with
# the variants that exercise different machinery.
LAYOUTS = [
    ((137, 0, 263, 600), [v for v in outprob.VARIANTS if v != "tukey"]),
    ((1000,), ["median_nmad", "trimmed_mean_niqr", "tukey"]),
    ((1, 999), ["mean_nmad", "median_std"]),
]


@pytest.mark.parametrize("chunks,variants", LAYOUTS)
def test_exact_fit_equals_in_memory(client, chunks, variants):
    rng = np.random.default_rng(len(chunks))
    x = scores(rng, 1000)
    x[200:230] = np.nan  # a NaN-holding partition
    x[700:1000] = 1.5    # a partition of all-equal scores
    arr = da.from_array(x, chunks=(chunks,))
    for name in variants:
        if name == "linear":
            continue
        # A tiny collect_max forces histogram passes.
        tiny = name in ("median_nmad", "trimmed_mean_niqr", "median_std")
        got = odask.fit(outprob.scaler(name), arr, collect_max=7 if tiny else 1 << 20)
        assert_same_fit(got, in_memory(outprob.scaler(name), x), name)
    lin = odask.fit(LinearScaler(higher_is_outlier=False), arr)
    want = in_memory(LinearScaler(higher_is_outlier=False), x)
    assert (lin.min_, lin.max_) == (want.min_, want.max_)


def test_trimmed_std_direction_and_fallback(client):
    x = np.r_[np.full(600, 2.0), np.arange(400.0)]
    arr = da.from_array(x, chunks=250)
    for s in (GaussianScaler("median", "trimmed_std", higher_is_outlier=False),
              GaussianScaler("mean", "nmad", trim=0.2),
              GaussianScaler(1.0, "niqr")):
        got = odask.fit(s, arr)
        assert_same_fit(got, in_memory(type(s)(**s.get_params()), x), "x")


def test_two_d_arrays_and_dataframes(client):
    rng = np.random.default_rng(3)
    x = np.stack([scores(rng, 800), rng.normal(size=800)], axis=1).astype(np.float32)
    want = in_memory(GaussianScaler("median", "nmad"), x)
    got = odask.fit(GaussianScaler("median", "nmad"), da.from_array(x, chunks=(300, 1)))
    assert np.array_equal(got.center_, want.center_) and np.array_equal(got.scale_, want.scale_)
    import pandas as pd

    df = dd.from_pandas(pd.DataFrame(x, columns=["a", "b"]), npartitions=3)
    got_df, info = odask.fit(GaussianScaler("median", "nmad"), df, return_info=True)
    assert np.array_equal(got_df.center_, want.center_)
    assert info["passes"] >= 2 and info["bytes"] > 0
    p = odask.transform(got_df, df).compute()
    assert np.array_equal(p.to_numpy(), want.transform(x))


def test_input_contract(client):
    x = np.arange(100.0)
    x[57] = np.inf
    with pytest.raises(ValueError, match="first at index 57"):
        odask.fit(GaussianScaler(), da.from_array(x, chunks=10))
    y = np.arange(10.0)
    y[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        odask.fit(GaussianScaler(nan_policy="raise"), da.from_array(y, chunks=4))
    with pytest.raises(ValueError, match="NaN"):
        odask.fit(GaussianScaler(), da.from_array(np.full(5, np.nan), chunks=2))
    with pytest.raises(TypeError):
        odask.fit(GaussianScaler(), np.arange(3.0))
    with pytest.raises(ValueError, match="method"):
        odask.fit(GaussianScaler(), da.ones(3), method="approx")


def test_transform_is_lazy_and_pickles_the_scaler(client):
    x = scores(np.random.default_rng(1), 1000)
    s = GaussianScaler("huber", "huber").fit(x)
    p = odask.transform(s, da.from_array(x, chunks=300))
    assert isinstance(p, da.Array)
    assert np.array_equal(p.compute(), s.transform(x))


def test_sketch_method_bounds_hold(client):
    x = scores(np.random.default_rng(7), 50_000)
    arr = da.from_array(x, chunks=7000)
    got, info = odask.fit(GaussianScaler("median", "nmad"), arr, method="sketch", k=200,
                          return_info=True)
    want = in_memory(GaussianScaler("median", "nmad"), x)
    b = info["bounds"][0]
    assert info["passes"] == 1
    assert b["center_interval"][0] <= want.center_ <= b["center_interval"][1]
    assert b["scale_interval"][0] <= want.scale_ <= b["scale_interval"][1]
    assert got.center_ == b["center"]


@pytest.mark.parametrize("name", ["median_nmad", "mean_nmad", "huber"])
def test_sketch_brackets_settle_the_median_in_one_pass_each(name, monkeypatch):
    """In estimation mode the census's sketch brackets the median and the
    median deviation, both read in one pass (2 passes for median/nMAD:
    census, then the fused brackets); wrong brackets fall back
    to the histogram passes and stay exact (synchronous scheduler: the
    logic, not the cluster)."""
    import dask

    rng = np.random.default_rng(11)
    x = np.r_[rng.lognormal(size=150_000), np.floor(rng.exponential(3.0, 50_000))]
    rng.shuffle(x)
    arr = da.from_array(x, chunks=23_456)
    want = in_memory(outprob.scaler(name), x)
    with dask.config.set(scheduler="sync"):
        got, info = odask.fit(outprob.scaler(name), arr, return_info=True)
        assert_same_fit(got, want, name)
        if name == "median_nmad":
            assert info["passes"] == 2
        # Brackets that miss: the usual passes take over, still exact.
        # The brackets' pass reads other scores (all above every bracket),
        # so no bracket holds its rank.
        run = odask._DaskColumnEngine.run

        def misled(engine, step):
            part = run(engine, step)
            return step.map(x + 1e3) if step.kind in ("bracket", "fused") else part

        monkeypatch.setattr(odask._DaskColumnEngine, "run", misled)
        again, info2 = odask.fit(outprob.scaler(name), arr, return_info=True)
        assert_same_fit(again, want, name)
        assert info2["passes"] > info["passes"]
