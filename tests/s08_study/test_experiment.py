"""The study pipeline (contract §8, ``outprob.experiment``) on tiny synthetic
data: results, caching and resuming, parallel runs, failures and skips
recorded, user scalers, the findings against hand-computed tables.

Oracles: PyOD and scikit-learn compute the scores independently, and the
measures come from calling outprob.metrics directly on the probabilities of
outprob.scaler — the pipeline must give exactly those numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pandas as pd

import outprob
from outprob import experiment as ex
from outprob import metrics
from outprob.experiment import findings as fnd

CALLS = {"n": 0, "interrupt_at": None}


class Centre:
    """A callable detector (distance to the feature medians) that counts its
    calls and can simulate Ctrl-C on a dataset of a given size."""

    def __call__(self, X: np.ndarray) -> np.ndarray:
        if CALLS["interrupt_at"] == X.shape[0]:
            raise KeyboardInterrupt
        CALLS["n"] += 1
        return np.abs(X - np.median(X, axis=0)).sum(axis=1)


def _dataset(name: str, n: int, seed: int) -> ex.Dataset:
    rng = np.random.default_rng(seed)
    n_out = max(3, n // 10)
    X = np.vstack([rng.normal(size=(n - n_out, 3)), rng.normal(4.0, 1.0, size=(n_out, 3))])
    y = np.r_[np.zeros(n - n_out, int), np.ones(n_out, int)]
    return ex.Dataset(name, X, y)


@pytest.fixture()
def datasets() -> list:
    return [_dataset("small", 40, 1), _dataset("large", 70, 2)]


@pytest.fixture(autouse=True)
def _reset() -> None:
    CALLS.update(n=0, interrupt_at=None)


def _value(result, dataset, detector, transformation, measure, cls):
    r = result.results
    sel = r[(r.dataset == dataset) & (r.detector == detector) & (r.transformation == transformation)
            & (r.measure == measure) & (r["class"] == cls)]
    assert len(sel) == 1
    return float(sel.value.iloc[0])


@pytest.mark.filterwarnings("ignore::outprob.ConvergenceWarning")
def test_results_equal_the_measures_called_directly(tmp_path, datasets):
    from pyod.models.knn import KNN
    from sklearn.preprocessing import StandardScaler

    result = ex.run_study(datasets, ex.paper_detectors(("KNN",)), out=tmp_path, jobs=1, progress=False)
    names = list(outprob.VARIANTS)  # the pool of the harmonic improvement score
    assert list(result.status.status) == ["ok", "ok"]
    assert result.transformations == list(outprob.TRANSFORMATIONS)
    per_set = len(outprob.TRANSFORMATIONS) * (4 * 4 * 2 + 1)
    assert len(result.results) == 2 * per_set
    assert list(result.results.columns) == list(ex.RESULT_COLUMNS)

    d = datasets[1]
    model = KNN()
    model.fit(StandardScaler().fit_transform(d.X))
    scores = model.decision_scores_
    probs = {t: outprob.scaler(t).fit_transform(scores) for t in names}
    strat = {"overall": None, "outliers": "outlier", "inliers": "inlier", "stratified": "both"}
    for t in ("mean_std", "mean_nmad", "linear", "tukey"):
        for m in ex.MEASURES:
            f = getattr(metrics, m)
            for cls, s in strat.items():
                assert _value(result, "large", "KNN", t, m, cls) == pytest.approx(f(d.y, probs[t], stratify=s), abs=1e-15)
                want = metrics.skill_score(d.y, probs[t], probs["mean_std"], measure=m, stratify=s)
                assert _value(result, "large", "KNN", t, m + ex.SKILL, cls) == pytest.approx(want, abs=1e-12)
        his = metrics.harmonic_improvement_score(d.y, probs[t], [probs[n] for n in names])
        assert _value(result, "large", "KNN", t, ex.HIS, "both") == pytest.approx(his, rel=1e-12)


def test_cache_hit_on_second_run_and_parts_resume(tmp_path, datasets):
    dets = {"centre": Centre()}
    first = ex.run_study(datasets, dets, out=tmp_path / "a", cache=tmp_path / "cache", jobs=1, progress=False)
    assert CALLS["n"] == 2 and not first.status.cached.any()
    # New output folder, same cache: scores come from the cache, results are recomputed.
    second = ex.run_study(datasets, dets, out=tmp_path / "b", cache=tmp_path / "cache", jobs=1, progress=False)
    assert CALLS["n"] == 2
    assert second.status.cached.all() and not second.status.resumed.any()
    pd.testing.assert_frame_equal(first.results, second.results)
    # Same output folder: finished score sets are taken from the part store.
    third = ex.run_study(datasets, dets, out=tmp_path / "b", cache=tmp_path / "cache", jobs=1, progress=False)
    assert third.status.resumed.all() and CALLS["n"] == 2
    pd.testing.assert_frame_equal(first.results, third.results)


def test_resume_after_interruption(tmp_path, datasets):
    dets = {"centre": Centre()}
    CALLS["interrupt_at"] = 40  # the smaller dataset runs second (largest first)
    with pytest.raises(ex.StudyInterrupted) as info:
        ex.run_study(datasets, dets, out=tmp_path, jobs=1, progress=False)
    assert (info.value.finished, info.value.total) == (1, 2)
    assert CALLS["n"] == 1
    CALLS["interrupt_at"] = None
    resumed = ex.run_study(datasets, dets, out=tmp_path, jobs=1, progress=False)
    assert CALLS["n"] == 2  # only the unfinished score set was computed
    assert list(resumed.status.resumed) == [False, True]
    fresh = ex.run_study(datasets, dets, out=tmp_path / "fresh", jobs=1, progress=False)
    pd.testing.assert_frame_equal(resumed.results, fresh.results)


def test_parallel_run_equals_serial(tmp_path, datasets):
    dets = ex.paper_detectors(("KNN", "PCA"))
    serial = ex.run_study(datasets, dets, out=tmp_path / "s", jobs=1, progress=False)
    parallel = ex.run_study(datasets, dets, out=tmp_path / "p", jobs=2, progress=False)
    assert parallel.jobs == 2
    pd.testing.assert_frame_equal(serial.results, parallel.results)
    pd.testing.assert_frame_equal(serial.status.drop(columns="seconds"), parallel.status.drop(columns="seconds"))


def _failing(X):
    raise ValueError("cannot score this")


def _nan(X):
    return np.full(X.shape[0], np.nan)


def test_unpicklable_detectors_run_in_process(tmp_path, datasets):
    dets = {"lambda": lambda X: np.abs(X).sum(axis=1)}
    with pytest.warns(RuntimeWarning, match="running in this process"):
        result = ex.run_study(datasets, dets, out=tmp_path, jobs=2, progress=False)
    assert result.jobs == 1 and list(result.status.status) == ["ok", "ok"]


def test_failures_non_finite_and_skips_are_recorded(tmp_path, datasets):
    tiny = ex.Detector("quadratic", call=Centre(), quadratic=1)
    dets = {"fails": _failing, "nan": _nan, "quadratic": tiny}
    result = ex.run_study(datasets, dets, out=tmp_path, jobs=1, progress=False, memory_budget=8 * 50 * 50)
    st = result.status.set_index(["dataset", "detector"])
    assert st.loc[("small", "fails"), "status"] == "failed"
    assert "ValueError: cannot score this" in st.loc[("small", "fails"), "message"]
    assert st.loc[("small", "nan"), "status"] == "non-finite"
    assert st.loc[("small", "quadratic"), "status"] == "ok"  # 8·40² bytes fit
    assert st.loc[("large", "quadratic"), "status"] == "skipped"
    assert "GiB" in st.loc[("large", "quadratic"), "message"]
    assert set(result.results.detector) == {"quadratic"}


def test_skip_rule_on_the_paper_data():
    dets = ex.paper_detectors()
    assert dets["KPCA"].skip_reason(49097) and dets["COF"].skip_reason(49097)  # Shuttle
    assert dets["KPCA"].skip_reason(7200) is None and dets["COF"].skip_reason(7200) is None
    assert all(dets[n].skip_reason(49097) is None for n in dets if n not in ("KPCA", "COF"))
    assert dets["IForest"].params == {"random_state": 0} and dets["KNN"].params == {}


def test_user_scalers_and_score_sets_join(tmp_path):
    rng = np.random.default_rng(3)
    s = np.r_[rng.normal(size=50), rng.normal(5, 1, size=5)]
    y = np.r_[np.zeros(50, int), np.ones(5, int)]
    np.savez(tmp_path / "a.npz", scores=s, y=y)
    pd.DataFrame({"knn": s[::-1], "label": y[::-1]}).to_csv(tmp_path / "b.csv", index=False)
    sets = ex.load_score_sets(tmp_path / "a.npz") + ex.load_score_sets(tmp_path / "b.csv", label_column="label")
    assert [(x.dataset, x.detector) for x in sets] == [("a", "scores"), ("b", "knn")]
    fixed = outprob.GaussianScaler(center=0.0, scale="std")
    result = ex.run_study(sets, scalers={"fixed": fixed}, out=tmp_path / "o", jobs=1, progress=False)
    assert result.transformations == [*outprob.TRANSFORMATIONS, "fixed"]
    want = metrics.brier_score(y, outprob.GaussianScaler(center=0.0, scale="std").fit_transform(s), stratify="outlier")
    assert _value(result, "a", "scores", "fixed", "brier_score", "outliers") == pytest.approx(want, abs=1e-15)
    with pytest.raises(ValueError, match="taken"):
        ex.run_study(sets, scalers={"mean_std": fixed}, out=tmp_path / "o2", jobs=1, progress=False)


def test_dataset_errors_name_the_file(tmp_path):
    np.savez(tmp_path / "bad.npz", X=np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"bad\.npz: missing array\(s\) y"):
        ex.load_dataset(tmp_path / "bad.npz")
    (tmp_path / "junk.npz").write_text("not a zip")
    with pytest.raises(ValueError, match="not a readable"):
        ex.load_dataset(tmp_path / "junk.npz")
    with pytest.raises(ValueError, match="labels must be 0"):
        ex.Dataset("d", np.ones((3, 2)), [0, 1, 2])
    with pytest.raises(ValueError, match="no dataset Nope"):
        ex.load_datasets(ex.paper_data_dir(), ["Nope"])


def test_shipped_data_matches_its_checksums():
    import hashlib

    folder = ex.paper_data_dir()
    sums = dict(line.split()[::-1] for line in (folder / "SHA256SUMS").read_text().splitlines())
    assert len(sums) == 18 and not set(sums) & {f"{n}.npz" for n in ex.MISSING_DATASETS}
    for name, digest in sums.items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest


# -- findings against hand-computed values ------------------------------------------------------


def _table() -> "pd.DataFrame":
    """Three score sets, four transformations; values chosen so that each
    finding's number is easy to compute by hand."""
    rows = []
    sets = [("d1", "k"), ("d2", "k"), ("d3", "k")]
    gs_out = {"brier_score": [0.4, 0.2, 0.1], "sharpness_error": [0.2, 0.2, 0.2],
              "refinement_error": [0.1, 0.1, 0.1], "calibration_error": [0.1, 0.3, 0.3]}
    gs_in = {"brier_score": [0.1, 0.1, 0.2], "sharpness_error": [0.1, 0.1, 0.8],
             "refinement_error": [0.2, 0.2, 0.2], "calibration_error": [0.2, 0.3, 0.3]}
    skills = {  # outlier skill against GS: transformation -> measure -> per score set
        "linear": {"brier_score": [-1, -1, -1], "sharpness_error": [-1, -1, -1],
                   "refinement_error": [2, 2, 2], "calibration_error": [1, 1, 1]},
        "mean_nmad": {"brier_score": [1, 2, 3], "sharpness_error": [3, 3, 3],
                      "refinement_error": [0, 0, 0], "calibration_error": [-1, -2, 0.5]},
        "trimmed_mean_nmad": {"brier_score": [0.5, 4, 5], "sharpness_error": [1, 1, 1],
                              "refinement_error": [1, 1, 1], "calibration_error": [-1, -1, -1]},
    }
    his = {"linear": [1.2, 1.1, 1.3], "mean_std": [1.0, 1.2, 1.1], "mean_nmad": [0.8, 0.9, 0.7],
           "trimmed_mean_nmad": [0.9, 1.0, 0.95]}
    for i, (d, k) in enumerate(sets):
        for m in ex.MEASURES:
            rows.append((d, k, "mean_std", m, "outliers", gs_out[m][i]))
            rows.append((d, k, "mean_std", m, "inliers", gs_in[m][i]))
            rows.append((d, k, "mean_std", m + ex.SKILL, "outliers", 0.0))
            for t, sk in skills.items():
                rows.append((d, k, t, m + ex.SKILL, "outliers", float(sk[m][i])))
        for t, v in his.items():
            rows.append((d, k, t, ex.HIS, "both", v[i]))
    return pd.DataFrame(rows, columns=list(ex.RESULT_COLUMNS))


def test_findings_on_a_hand_computed_table():
    found = {f.key: f for f in fnd.findings(_table())}
    # (1) GS gap −log2(out/in): Brier −2, −1, +1 → median −1, 2 of 3 negative.
    assert found["1 Brier"].agrees and "-1.000" in found["1 Brier"].result and "67%" in found["1 Brier"].result
    # sharpness −1, −1, +2 → median −1; refinement +1 everywhere → disagrees by +1.
    assert found["1 sharpness"].agrees and "-1.000" in found["1 sharpness"].result
    assert not found["1 refinement"].agrees and "+1.000" in found["1 refinement"].result
    # calibration +1, 0, 0 → median 0, not negative.
    assert not found["1 calibration"].agrees and "+0.000" in found["1 calibration"].result
    # (2a) robust medians: mean_nmad 2, trimmed_mean_nmad 4 → both positive, lowest mean_nmad +2.
    assert found["2a"].agrees and "2 of 2" in found["2a"].result and "mean_nmad +2.000" in found["2a"].result
    # (2b) trimmed_mean_nmad best Brier (4 vs 2).
    assert found["2b"].agrees and "+4.000, next best +2.000" in found["2b"].result
    # (2c) sharpness: mean_nmad 3 vs 1.
    assert found["2c"].agrees
    # (2d) linear refinement 2 > trimmed 1 > mean_nmad 0; calibration linear 1 best.
    assert found["2d refinement"].agrees and found["2d calibration"].agrees
    # (2e) calibration medians: mean_nmad −1, trimmed −1 → both negative.
    assert found["2e"].agrees and "2 of 2" in found["2e"].result
    # (3) HIS ranks per set: mean_nmad 1, 1, 1 → mean rank 1.00.
    assert found["3"].agrees and "best mean_nmad 1.00" in found["3"].result


def test_findings_say_by_how_much_they_disagree():
    t = _table()
    sel = (t.transformation == "mean_nmad") & (t.measure == "brier_score_skill")
    t.loc[sel, "value"] = [5.0, 6.0, 7.0]  # mean_nmad now the best Brier (median 6)
    found = {f.key: f for f in fnd.findings(t)}
    assert not found["2b"].agrees
    assert found["2b"].result == "best mean_nmad +6.000; trimmed_mean_nmad +4.000 (2.000 lower)"


def test_gs_gap_uses_the_skill_formula():
    gap = fnd.gs_gap(_table())
    assert gap["brier_score"].tolist() == [-2.0, -1.0, 1.0]
    assert gap["calibration_error"].tolist() == pytest.approx([1.0, 0.0, 0.0])
    assert math.isclose(ex.evaluation.skill(0.1, 0.4), 2.0)


def test_a_transformation_that_refuses_the_scores_is_recorded_not_fatal():
    from outprob.experiment.evaluation import score_set_rows, transformations

    class Refuses:
        def fit_transform(self, scores):
            raise ValueError("scores outside my domain")

    rng = np.random.default_rng(0)
    scores = rng.normal(size=60)
    y = np.r_[np.zeros(55, int), np.ones(5, int)]
    transforms = {k: v for k, v in transformations({"refuses": Refuses()}).items()
                  if k in ("mean_std", "mean_nmad", "refuses")}
    rows, warned = score_set_rows(scores, y, transforms)
    values = {(t, m, c): v for t, m, c, v in rows}
    assert all(math.isnan(v) for (t, _, _), v in values.items() if t == "refuses")
    assert warned == {"refuses: refused (ValueError)": 1}
    p = outprob.scaler("mean_nmad").fit_transform(scores)
    assert values[("mean_nmad", "brier_score", "outliers")] == metrics.brier_score(y, p, stratify="outlier")
