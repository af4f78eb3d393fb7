#!/usr/bin/env python3
"""Finding outliers with a guarantee (contract §11), measured on the
shipped datasets: conformal p-values with clean and contaminated
calibration, fitted tails, several detectors at once — and whatever
further method the table :data:`METHODS` holds.

    nice -n 10 .venv/bin/python benches/conformal_contamination.py \
        --nonconform-python .venv-nonconform/bin/python \
        --out benches/results/DATE-conformal-methods.md

For each dataset of ``paper/data``, repetition and detector (PyOD; the
study's fast detectors by default), the rows are split at random,
stratified by label, into a fit part (40 %), a calibration part (30 %) and
a test part (30 %). Each detector is fitted on the fit part (outliers
included, as in practice) and scores the other two (infinite or NaN scores,
which PCA gives on some datasets, are clipped to the finite range). A method turns the
calibration part's scores (and, where it says so, labels) into p-values
of the test part: per detector ("single") or from all detectors at once
("multi"). On the test part: Benjamini–Hochberg at α ∈ {0.05, 0.1, 0.2},
its realised FDR (the mean false discovery proportion, with its Monte
Carlo standard error) and power (the mean fraction of the test outliers
selected), and P(p ≤ α | inlier). nonconform 2.0's p-values of the same
splits are computed in its own environment (``--nonconform-python``) where
it has the method. A timing section compares each p-value path with plain
conformal p-values and with nonconform, in the same run.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import best as _best  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ALPHAS = (0.05, 0.1, 0.2)
DETECTORS = ("IForest", "KNN", "LOF", "PCA", "HBOS", "ECOD")


#: Labelled outliers for the integrative p-values (contract §13).
LABELLED = (10, 50)


@dataclass
class Known:
    """Labelled outliers of one split, held out of the fit part (never the
    calibration or test part): the first half trains the second score b
    (minus the distance to the nearest of them), the second half is the
    outlier calibration set. ``b_cal``/``b_test``: b of the calibration
    and test points; ``a_out`` (h × k), ``b_out`` (h,): the outlier
    calibration points' detector scores and b."""

    b_cal: np.ndarray
    b_test: np.ndarray
    a_out: np.ndarray
    b_out: np.ndarray


@dataclass
class Split:
    """One split's scores: calibration (n × k) and test (m × k), labels,
    and the labelled outliers per count of :data:`LABELLED` (absent where
    the fit part holds fewer outliers)."""

    s_cal: np.ndarray
    s_test: np.ndarray
    y_cal: np.ndarray
    y_test: np.ndarray
    seed: int
    known: Dict[int, Known]


@dataclass(frozen=True)
class Method:
    """A row of the table: ``pvalues(split, j)`` gives the test part's
    p-values from detector j (``multi``: from all, j is None), or None
    where the method does not apply."""

    name: str
    guarantee: str  # what it claims: "FDR", "marginal (α ≥ p_u)", "none", ...
    multi: bool
    pvalues: Callable[[Split, Optional[int]], Optional[np.ndarray]]


def _conformal(**kw):
    import outprob

    return outprob.ConformalScaler(**kw)


def _clean(sp: Split, j: int) -> np.ndarray:
    return sp.s_cal[sp.y_cal == 0, j]


def _fit_accepts(name: str) -> bool:
    import outprob

    return name in inspect.signature(outprob.ConformalScaler.fit).parameters


def label_trim(budget: float) -> Callable[[Split, Optional[int]], Optional[np.ndarray]]:
    """Label-Trim (Bashari, Sesia & Romano): the ``budget`` fraction of the
    most suspicious calibration scores is labelled, the labelled outliers
    are dropped (needs ``outprob.label_trim_candidates`` and
    ``ConformalScaler.fit(exclude=)``)."""

    def run(sp: Split, j: Optional[int]) -> Optional[np.ndarray]:
        import outprob

        if not hasattr(outprob, "label_trim_candidates") or not _fit_accepts("exclude"):
            return None
        s = sp.s_cal[:, j]
        shown = np.asarray(outprob.label_trim_candidates(s, int(budget * len(s))), dtype=int)
        drop = shown[sp.y_cal[shown] == 1]
        return _conformal().fit(s, exclude=drop).pvalues(sp.s_test[:, j])

    return run


def integrative(labelled: int) -> Callable[[Split, Optional[int]], Optional[np.ndarray]]:
    """Integrative p-values (Liang, Sesia & Sun) with ``labelled`` known
    outliers held out of the fit part (:class:`Known`): pairs (a, b) of
    the detector's score and the closeness to the labelled outliers
    (needs ``ConformalScaler.fit(outlier_scores=)``)."""

    def run(sp: Split, j: Optional[int]) -> Optional[np.ndarray]:
        kn = sp.known.get(labelled)
        if kn is None or not _fit_accepts("outlier_scores"):
            return None
        inl = sp.y_cal == 0
        pairs = np.c_[sp.s_cal[inl, j], kn.b_cal[inl]]
        return _conformal().fit(pairs, outlier_scores=np.c_[kn.a_out[:, j], kn.b_out]).pvalues(
            np.c_[sp.s_test[:, j], kn.b_test])

    return run


def tail(kind: str, calibration: str = "clean") -> Callable[[Split, Optional[int]], np.ndarray]:
    def run(sp: Split, j: Optional[int]) -> np.ndarray:
        cal = _clean(sp, j) if calibration == "clean" else sp.s_cal[:, j]
        return _conformal(tail=kind).fit(cal).pvalues(sp.s_test[:, j])

    return run


def combined(rule: str) -> Callable[[Split, Optional[int]], np.ndarray]:
    def run(sp: Split, j: Optional[int]) -> np.ndarray:
        import outprob

        p = _conformal().fit(sp.s_cal[sp.y_cal == 0]).pvalues(sp.s_test)
        return outprob.combine_pvalues(p, rule)

    return run


def ensemble(how: str, tail_kind: Optional[str] = None) -> Callable[[Split, Optional[int]], np.ndarray]:
    def run(sp: Split, j: Optional[int]) -> np.ndarray:
        import outprob

        return outprob.ensemble_pvalues(sp.s_cal[sp.y_cal == 0], sp.s_test, combine=how, tail=tail_kind)

    return run


def _rate(fraction: Optional[float]) -> Callable[[Split, Optional[int]], np.ndarray]:
    def run(sp: Split, j: Optional[int]) -> np.ndarray:
        c = "auto" if fraction is None else float(sp.y_cal.mean())
        return _conformal(contamination=c).fit(sp.s_cal[:, j]).pvalues(sp.s_test[:, j])

    return run


#: Label-Trim's budgets: fractions of the calibration set shown to a person.
BUDGETS = (0.01, 0.05, 0.1, 0.2, 0.4)
#: nonconform's Label-Trim equivalent, by budget in %.
NC_TRIM = "label-trim {} %"

#: The methods, in the order of the table. New methods plug in here.
METHODS: List[Method] = [
    Method("clean", "FDR", False, lambda sp, j: _conformal().fit(_clean(sp, j)).pvalues(sp.s_test[:, j])),
    Method("contaminated", "FDR (conservative)", False,
           lambda sp, j: _conformal().fit(sp.s_cal[:, j]).pvalues(sp.s_test[:, j])),
    Method("trimmed (auto)", "none", False, _rate(None)),
    Method("trimmed (true rate)", "none", False, _rate(1.0)),
    *[Method(f"label-trim {round(100 * b)} %", "FDR (conservative)", False, label_trim(b)) for b in BUDGETS],
    *[Method(f"integrative, {k} outliers", "per point; BH unproven", False, integrative(k)) for k in (10, 50)],
    Method("tail gpd", "marginal for α ≥ p_u", False, tail("gpd")),
    Method("tail gaussian", "marginal for α ≥ p_u", False, tail("gaussian")),
    Method("tail gamma", "marginal for α ≥ p_u", False, tail("gamma")),
    Method("tail gpd, contaminated", "none", False, tail("gpd", "contaminated")),
    Method("multi: cauchy", "per point, asymptotic", True, combined("cauchy")),
    Method("multi: harmonic", "per point", True, combined("harmonic")),
    Method("multi: ensemble mean", "FDR", True, ensemble("mean")),
    Method("multi: ensemble max", "FDR", True, ensemble("max")),
    Method("multi: ensemble mean + tail gpd", "marginal for α ≥ p_u", True, ensemble("mean", "gpd")),
]


def detectors(names: List[str], seed: int) -> dict:
    from outprob.experiment.detectors import _PYOD, _import

    out = {}
    for n in names:
        path, seeded, _ = _PYOD[n]
        out[n] = _import(path)(**({"random_state": seed} if seeded else {}))
    return out


def split_scores(X: np.ndarray, y: np.ndarray, names: List[str], seed: int) -> Split:
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    idx = np.arange(len(y))
    fit, rest = train_test_split(idx, train_size=0.4, stratify=y, random_state=seed)
    cal, test = train_test_split(rest, train_size=0.5, stratify=y[rest], random_state=seed)
    scale = StandardScaler().fit(X[fit])
    # Labelled outliers: a random subset of the fit part's outliers, nested
    # (the 10 are among the 50); each set's first half trains b.
    fit_out = np.random.default_rng(seed).permutation(fit[y[fit] == 1])
    held = fit_out[:max(LABELLED)]
    s_cal, s_test, s_held = [], [], []
    for det in detectors(names, seed).values():
        det.fit(scale.transform(X[fit]))
        s_cal.append(det.decision_function(scale.transform(X[cal])))
        s_test.append(det.decision_function(scale.transform(X[test])))
        s_held.append(det.decision_function(scale.transform(X[held])) if held.size else np.zeros(0))
    s_cal, s_test, s_held = np.column_stack(s_cal), np.column_stack(s_test), np.column_stack(s_held)
    for j in range(s_cal.shape[1]):  # PCA can give ±inf or NaN: clipped to the finite range
        pooled = np.concatenate([s_cal[:, j], s_test[:, j]])
        finite = pooled[np.isfinite(pooled)]
        lo, hi = (finite.min(), finite.max()) if finite.size else (0.0, 0.0)
        for s in (s_cal, s_test, s_held):
            s[:, j] = np.clip(np.nan_to_num(s[:, j], nan=lo, posinf=hi, neginf=lo), lo, hi)
    known = {}
    for k in LABELLED:
        if fit_out.size < k:
            continue
        h = k // 2
        train = scale.transform(X[fit_out[:h]])

        def closeness(rows: np.ndarray) -> np.ndarray:
            z = scale.transform(X[rows])
            d2 = (z * z).sum(1)[:, None] - 2 * z @ train.T + (train * train).sum(1)[None, :]
            return -np.sqrt(np.maximum(d2.min(1), 0.0))

        known[k] = Known(closeness(cal), closeness(test), s_held[h:k], closeness(fit_out[h:k]))
    return Split(s_cal, s_test, y[cal], y[test], seed, known)


def metrics(p: np.ndarray, y_test: np.ndarray) -> Dict[str, float]:
    import outprob

    row = {}
    for a in ALPHAS:
        sel = outprob.select(p, a).mask
        n_sel = int(sel.sum())
        row[f"fdp_{a}"] = float(np.sum(sel & (y_test == 0)) / max(1, n_sel))
        row[f"power_{a}"] = float(np.sum(sel & (y_test == 1)) / max(1, int(y_test.sum())))
        row[f"valid_{a}"] = float(np.mean(p[y_test == 0] <= a))
    return row


NONCONFORM_SCRIPT = r"""
import sys, time, numpy as np
from nonconform import Empirical
d = dict(np.load(sys.argv[1]))
out = {}
for key in sorted(k for k in d if "/cal/" in k):
    base, name = key.split("/cal/")
    out[f"{base}/{name}"] = Empirical().compute_p_values(d[f"{base}/test"], d[key])
rng = np.random.default_rng(0)
cal, test = rng.normal(size=int(sys.argv[3])), rng.normal(size=int(sys.argv[4]))
est = Empirical()
est.compute_p_values(test, cal)
best = float("inf")
for _ in range(5):
    t = time.perf_counter(); est.compute_p_values(test, cal); best = min(best, time.perf_counter() - t)
out["__time__"] = np.array([best])
np.savez(sys.argv[2], **out)
"""


def run_nonconform(python: str, splits: Dict[str, Split], n_cal: int, n_test: int) -> Dict[str, np.ndarray]:
    """nonconform's Empirical p-values of every split and detector (clean,
    contaminated and Label-Trim-cleaned calibration: nonconform 2.0 has no
    cleaning module, its equivalent is Empirical on the kept scores), and
    its time for one p-value batch."""
    import outprob

    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "in.npz", Path(tmp) / "out.npz"
        arrays = {}
        for key, sp in splits.items():
            for j in range(sp.s_cal.shape[1]):
                s = sp.s_cal[:, j]
                arrays[f"{key}/{j}/test"] = sp.s_test[:, j]
                arrays[f"{key}/{j}/cal/clean"] = s[sp.y_cal == 0]
                arrays[f"{key}/{j}/cal/contaminated"] = s
                for b in BUDGETS:
                    shown = np.asarray(outprob.label_trim_candidates(s, int(b * len(s))), dtype=int)
                    arrays[f"{key}/{j}/cal/{NC_TRIM.format(round(100 * b))}"] = np.delete(
                        s, shown[sp.y_cal[shown] == 1])
        np.savez(src, **arrays)
        script = Path(tmp) / "nc.py"
        script.write_text(NONCONFORM_SCRIPT)
        subprocess.run([python, str(script), str(src), str(dst), str(n_cal), str(n_test)], check=True)
        with np.load(dst) as d:
            return dict(d)


def versions() -> str:
    """The versions of the libraries that make the numbers."""
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for name in ("outprob", "numpy", "scikit-learn", "pyod"):
        try:
            out.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            pass
    return ", ".join(out)


def best(f: Callable[[], object]) -> float:
    """The best of 5 timed runs after one untimed one."""
    return _best(f, 5, warmup=True)


def timings(n_cal: int, n_test: int, k: int) -> Dict[str, float]:
    """Seconds (best of 5) of fit + p-values for n_cal calibration and
    n_test test scores (k detectors for the multi-detector paths)."""
    import outprob

    rng = np.random.default_rng(0)
    cal, test = rng.normal(size=n_cal), rng.normal(size=n_test)
    calk, testk = rng.normal(size=(n_cal, k)), rng.normal(size=(n_test, k))
    out = {"conformal": best(lambda: _conformal().fit(cal).pvalues(test)),
           f"conformal, {k} detectors": best(lambda: _conformal().fit(calk).pvalues(testk))}
    for kind in ("gpd", "gaussian", "gamma"):
        out[f"tail {kind}"] = best(lambda: _conformal(tail=kind).fit(cal).pvalues(test))
    for rule in ("cauchy", "harmonic"):
        out[f"multi: {rule}"] = best(
            lambda: outprob.combine_pvalues(_conformal().fit(calk).pvalues(testk), rule))
    out["multi: ensemble mean"] = best(lambda: outprob.ensemble_pvalues(calk, testk))
    return out


def speed_lines(times: Dict[str, float], nc_time: Optional[float], k: int, size) -> List[str]:
    """The speed table: each path's seconds, its ratio to plain conformal
    p-values (k batches for the multi-detector paths) and nonconform's."""
    n_cal, n_test = size
    lines = ["", f"Speed: fit + p-values, {n_cal} calibration and {n_test} test scores "
             f"({k} detectors for the multi-detector paths), best of 5, this run:", "",
             "| path | seconds | × conformal | nonconform 2.0 Empirical ÷ this |", "|---|---|---|---|"]
    one = times["conformal"]
    for path, t in times.items():
        many = path.startswith(("multi", "conformal,"))
        ref = one * k if many else one
        nc_ratio = "" if nc_time is None else f"{nc_time * (k if many else 1) / t:.0f}"
        lines.append(f"| {path} | {t:.4f} | {t / ref:.2f} | {nc_ratio} |")
    if nc_time is not None:
        lines.append(f"| nonconform 2.0 Empirical (one detector) | {nc_time:.4f} | {nc_time / one:.2f} | 1 |")
    lines += ["", "\"× conformal\" compares a multi-detector path with one conformal p-value batch per "
              "detector (k batches); nonconform's time is its `Empirical().compute_p_values` per detector "
              "(k times for the multi-detector paths; it has no tail or combination of its own)."]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT / "paper" / "data")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--detectors", default=",".join(DETECTORS))
    ap.add_argument("--nonconform-python", help="a Python with nonconform 2.0 (its own environment)")
    ap.add_argument("--timing-size", type=int, nargs=2, default=(10_000, 100_000), metavar=("N_CAL", "N_TEST"))
    ap.add_argument("--out", type=Path, help="the Markdown table; a .json of the means goes beside it")
    ap.add_argument("--timing-only", action="store_true", help="only the speed table")
    args = ap.parse_args()
    names = args.detectors.split(",")
    if args.timing_only:
        nc_time = None
        if args.nonconform_python:
            nc_time = float(run_nonconform(args.nonconform_python, {}, *args.timing_size)["__time__"][0])
        cmd = " ".join([".venv/bin/python", "benches/conformal_contamination.py", *sys.argv[1:]])
        text = "\n".join([f"Command: `{cmd}`", *speed_lines(timings(*args.timing_size, len(names)), nc_time,
                                                          len(names), args.timing_size),
                          "", f"Machine: {os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f} "
                          f"at the end; Python {sys.version.split()[0]}, NumPy {np.__version__}.", ""])
        print(text)
        if args.out:
            args.out.write_text(text, encoding="utf-8")
        return
    start = time.perf_counter()
    rows = []  # (dataset, detector or "all", rep, method, metrics)
    splits: Dict[str, Split] = {}
    files = sorted(args.data.glob("*.npz"))
    for f in files:
        with np.load(f) as d:
            X, y = d["X"].astype(float), d["y"].astype(int).ravel()
        for rep in range(args.repeats):
            sp = split_scores(X, y, names, rep)
            splits[f"{f.stem}/{rep}"] = sp
            for m in METHODS:
                for j in [None] if m.multi else range(len(names)):
                    p = m.pvalues(sp, j)
                    if p is not None:
                        rows.append((f.stem, "all" if j is None else names[j], rep, m.name, metrics(p, sp.y_test)))
        print(f"{f.stem}: done ({time.perf_counter() - start:.0f} s)", file=sys.stderr, flush=True)
    elapsed = time.perf_counter() - start

    nc_time = None
    if args.nonconform_python:
        nc = run_nonconform(args.nonconform_python, splits, *args.timing_size)
        nc_time = float(nc.pop("__time__")[0])
        for key, p in nc.items():
            ds, rep, j, cal = key.split("/", 3)
            sp = splits[f"{ds}/{rep}"]
            rows.append((ds, names[int(j)], int(rep), f"nonconform 2.0: {cal}", metrics(p, sp.y_test)))
    times = timings(*args.timing_size, len(names))

    nc_names = [f"nonconform 2.0: {c}" for c in
                ("clean", "contaminated", *[NC_TRIM.format(round(100 * b)) for b in BUDGETS])]
    present = [m.name for m in METHODS] + nc_names
    present = [n for n in present if any(r[3] == n for r in rows)]
    guarantee = {m.name: m.guarantee for m in METHODS}
    guarantee.update({n: "FDR" for n in nc_names})

    def values(method: str, key: str, dataset: Optional[str] = None) -> np.ndarray:
        return np.array([m[key] for ds, _, _, meth, m in rows if meth == method and (dataset is None or ds == dataset)])

    def clean_power(method: str, a: float) -> float:
        """Clean calibration's power on the runs (datasets, splits and, for
        a single-detector method, detectors) where ``method`` has rows."""
        runs = {(ds, det, rep) for ds, det, rep, meth, _ in rows if meth == method}
        keep = [m[f"power_{a}"] for ds, det, rep, meth, m in rows if meth == "clean"
                and ((ds, det, rep) in runs or (ds, "all", rep) in runs)]
        return float(np.mean(keep))

    summary = {}
    for meth in present:
        summary[meth] = {"guarantee": guarantee[meth], "runs": int(values(meth, "fdp_0.1").size),
                         "datasets": len({r[0] for r in rows if r[3] == meth})}
        for a in ALPHAS:
            fdp = values(meth, f"fdp_{a}")
            summary[meth][str(a)] = {
                "fdr": float(fdp.mean()), "fdr_se": float(fdp.std(ddof=1) / np.sqrt(fdp.size)),
                "power": float(values(meth, f"power_{a}").mean()),
                "valid": float(values(meth, f"valid_{a}").mean()),
                "clean_power": clean_power(meth, a),
            }
    base = summary["clean"]["0.1"]["power"]
    cmd = " ".join([".venv/bin/python", "benches/conformal_contamination.py", *sys.argv[1:]])
    lines = [
        "# Finding outliers with a guarantee: conformal p-values on the shipped datasets",
        "",
        f"Command: `{cmd}`",
        "",
        f"{len(files)} datasets of `paper/data` × {args.repeats} random stratified splits (fit 40 % / "
        f"calibration 30 % / test 30 %) × detectors {', '.join(names)} (PyOD; random_state = repetition "
        f"where seeded); {elapsed:.0f} s. Single-detector methods: means over datasets × detectors × "
        "splits; multi-detector methods (all detectors at once): over datasets × splits. BH on the test "
        "part's p-values; FDR = mean false discovery proportion ± its Monte Carlo standard error; power "
        "= mean fraction of test outliers selected; P(p ≤ α | inlier) over the test inliers. "
        "\"× clean\" = power over the clean calibration's power at the same α on the same runs "
        "(integrative p-values only run where the fit part holds the labelled outliers: "
        f"{', '.join(f'{k} on the datasets with ≥ {k} fit-part outliers' for k in LABELLED)}; "
        "half of them train the second score b = −distance to the nearest, half calibrate it). "
        "Methods whose API is not on this branch are absent.",
        "",
        "| method | claims | α | realised FDR | ± SE | power | × clean | P(p ≤ α \\| inlier) | runs | datasets |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for meth in present:
        for a in ALPHAS:
            s = summary[meth][str(a)]
            ratio = f"{s['power'] / s['clean_power']:.2f}" if s["clean_power"] else "–"
            lines.append(f"| {meth} | {guarantee[meth]} | {a} | {s['fdr']:.3f} | {s['fdr_se']:.3f} | "
                         f"{s['power']:.3f} | {ratio} | {s['valid']:.3f} | {summary[meth]['runs']} | "
                         f"{summary[meth]['datasets']} |")
    lines += ["", "Per dataset, α = 0.1 (FDR / power):", "",
              "| dataset | " + " | ".join(present) + " |", "|---|" + "---|" * len(present)]
    for f in files:
        cells = [f"{values(c, 'fdp_0.1', f.stem).mean():.2f} / {values(c, 'power_0.1', f.stem).mean():.2f}"
                 if values(c, "fdp_0.1", f.stem).size else "–" for c in present]
        lines.append(f"| {f.stem} | " + " | ".join(cells) + " |")
    lines += speed_lines(times, nc_time, len(names), args.timing_size)
    lines += ["", f"Clean-calibration power at α = 0.1: {base:.3f}.",
              f"Machine: {os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f} at the end; "
              f"Python {sys.version.split()[0]}, {versions()}.", ""]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
        args.out.with_suffix(".json").write_text(
            json.dumps({"alphas": ALPHAS, "detectors": names, "methods": summary, "seconds": times,
                        "nonconform_seconds": nc_time}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
